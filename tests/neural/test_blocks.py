"""Blocks and models: composition formula, causality, step mode, pooling, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from lds_toolkit import neural
from lds_toolkit.neural import Block, SequenceModel, resolve_layer

from .conftest import dense_hankel_filters

SMALL = {
    "s4": {"d_state": 8},
    "s4plus": {"d_state": 8, "tau": 3},
    "s4plusplus": {"d_state": 8, "n_heads": 2, "attn_block": 5},
    "attention": {"n_heads": 2},
    "stu": {"seq_len": 48, "num_filters": 4, "filters": dense_hankel_filters(48, 4), "k_y": 1},
    "focus": {"bin_size": 8, "chunk_size": 4},
    "las": {"n_heads": 2, "chunk_size": 8},
}


def test_resolve_layer_names_classes_callables():
    assert resolve_layer("S4") is neural.S4 and resolve_layer("s4d") is neural.S4
    assert resolve_layer("s4+") is neural.S4Plus and resolve_layer("s4++") is neural.S4PlusPlus
    assert resolve_layer(neural.S4Plus) is neural.S4Plus and resolve_layer("stu") is neural.STU
    with pytest.raises(ValueError, match="unknown layer"):
        resolve_layer("mamba")
    with pytest.raises(TypeError, match="name"):
        resolve_layer(3)
    for name, attr in (("focus", "Focus"), ("las", "LaSAttention")):
        try:
            cls = getattr(neural, attr)
        except (ImportError, AttributeError):
            with pytest.raises(ValueError, match="not available"):
                resolve_layer(name)
        else:
            assert resolve_layer(name) is cls


@pytest.mark.parametrize("prenorm", [True, False])
def test_block_formula(prenorm):
    block = Block(6, "s4", layer_kwargs={"d_state": 8}, prenorm=prenorm, seed=0).double()
    x = torch.randn(2, 10, 6, dtype=torch.float64)
    ln1, ln2, mlp, layer = block.norm1, block.norm2, block.mlp, block.layer

    def mlp_ref(z):
        return mlp.fc2(F.gelu(mlp.fc1(z)))

    with torch.no_grad():
        if prenorm:
            h = x + layer(ln1(x))
            ref = h + mlp_ref(ln2(h))
        else:
            h = ln1(x + layer(x))
            ref = ln2(h + mlp_ref(h))
        torch.testing.assert_close(block(x), ref, rtol=0, atol=1e-13)
    assert mlp.fc1.out_features == 24
    assert Block(6, "s4", mlp_ratio=0).mlp is None


@pytest.mark.parametrize("name", list(SMALL))
def test_token_model_is_causal(name):
    model = SequenceModel(
        8, 2, name, layer_kwargs=SMALL[name], vocab_size=5, norm="rms", seed=1
    ).double()
    g = torch.Generator().manual_seed(0)
    tok = torch.randint(0, 5, (2, 24), generator=g)
    tok2 = tok.clone()
    tok2[:, 13:] = (tok2[:, 13:] + 1) % 5
    with torch.no_grad():
        y, y2 = model(tok), model(tok2)
    assert y.shape == (2, 24, 5)
    assert (y2[:, :13] - y[:, :13]).abs().max() <= 1e-10
    assert (y2[:, 13:] - y[:, 13:]).abs().max() > 1e-6


@pytest.mark.parametrize("name", ["s4", "s4plus", "s4plusplus", "stu"])
def test_model_step_mode_equals_forward(name):
    model = SequenceModel(8, 2, name, layer_kwargs=SMALL[name], d_input=3, d_output=2, seed=2)
    model = model.double()
    x = torch.randn(2, 40, 3, dtype=torch.float64)
    with torch.no_grad():
        y = model(x)
        states = model.initial_state(2, dtype=torch.float64)
        ys = []
        for t in range(40):
            y_t, states = model.step(x[:, t], states)
            ys.append(y_t)
    # STU steps through its LDS form (filters as exponential sums, 1e-6 per filter)
    atol = 1e-5 * float(y.abs().max()) if name == "stu" else 1e-10
    torch.testing.assert_close(torch.stack(ys, 1), y, rtol=0, atol=atol)


def test_model_step_refuses_states_of_another_depth():
    """A state list of the wrong length used to be zipped silently: fewer blocks ran."""
    model = SequenceModel(8, 2, "s4", layer_kwargs=SMALL["s4"], d_input=3, d_output=2, seed=2)
    states = model.initial_state(2)
    x_t = torch.randn(2, 3)
    with pytest.raises(ValueError, match="list of 2 block states"):
        model.step(x_t, states[:1])
    with pytest.raises(ValueError, match="list of 2 block states"):
        model.step(x_t, states[0])


def test_pooling_and_tied_embeddings():
    x = torch.randn(3, 12, 4)
    base = SequenceModel(4, 1, "s4", d_input=4, d_output=7, seed=3)
    last = SequenceModel(4, 1, "s4", d_input=4, d_output=7, pool="last", seed=3)
    mean = SequenceModel(4, 1, "s4", d_input=4, d_output=7, pool="mean", seed=3)
    with torch.no_grad():
        torch.testing.assert_close(last(x), base(x)[:, -1])
        z = base.encoder(x)
        z = base.blocks[0](z).mean(1)
        torch.testing.assert_close(mean(x), base.head(base.norm(z)))
    # cumulative mean: causal, position t reads the mean of positions 0..t
    cum = SequenceModel(4, 1, "s4", d_input=4, d_output=7, pool="cummean", seed=3)
    with torch.no_grad():
        y = cum(x)
        assert y.shape == (3, 12, 7)
        torch.testing.assert_close(y[:, -1], mean(x))
        torch.testing.assert_close(y[:, 4], mean(x[:, :5]))
        x2 = x.clone()
        x2[:, 6:] += 1.0
        torch.testing.assert_close(cum(x2)[:, :6], y[:, :6], rtol=0, atol=1e-6)
    tied = SequenceModel(4, 1, "s4", vocab_size=9, tie_embeddings=True)
    assert tied.head.weight is tied.encoder.weight
    with pytest.raises(ValueError, match="tie_embeddings"):
        SequenceModel(4, 1, "s4", d_input=3, tie_embeddings=True)


def test_model_seed_reproducible():
    a = SequenceModel(4, 2, "s4plus", vocab_size=6, seed=7)
    b = SequenceModel(4, 2, "s4plus", vocab_size=6, seed=7)
    for (n, pa), pb in zip(a.named_parameters(), b.parameters()):
        assert torch.equal(pa, pb), n


def test_model_bad_inputs():
    model = SequenceModel(4, 1, "s4", vocab_size=6)
    with pytest.raises(TypeError, match="int64"):
        model(torch.randn(2, 5))
    with pytest.raises(ValueError, match=r"\[0, 6\)"):
        model(torch.tensor([[0, 6]]))
    with pytest.raises(ValueError, match="shape"):
        model(torch.zeros(2, 3, 4, dtype=torch.int64))
    vec = SequenceModel(4, 1, "s4", d_input=3)
    with pytest.raises(ValueError, match="3 channels"):
        vec(torch.randn(2, 5, 4))
    with pytest.raises(ValueError, match="pool"):
        SequenceModel(4, 1, "s4", pool="max")
    with pytest.raises(ValueError, match="not both"):
        SequenceModel(4, 1, "s4", vocab_size=3, d_input=3)
    with pytest.raises(TypeError, match="step mode"):
        Block(4, "attention").initial_state(1)


def test_self_attention_matches_explicit_softmax():
    att = neural.SelfAttention(4, n_heads=2, seed=0).double()
    x = torch.randn(1, 7, 4, dtype=torch.float64)
    with torch.no_grad():
        q, k, v = att.qkv(x).split(4, dim=-1)
        out = []
        for h in range(2):
            sl = slice(2 * h, 2 * h + 2)
            s = q[0, :, sl] @ k[0, :, sl].T / np.sqrt(2)
            s = s.masked_fill(torch.triu(torch.ones(7, 7, dtype=torch.bool), 1), float("-inf"))
            out.append(torch.softmax(s, -1) @ v[0, :, sl])
        ref = att.out(torch.cat(out, -1))[None]
        torch.testing.assert_close(att(x), ref, rtol=0, atol=1e-12)


def test_sequence_batch_norm_is_batchnorm1d_over_batch_and_positions():
    """LaS Table 4's batch norm: nn.BatchNorm1d on the (batch, d, length) transpose (the S4
    repository's route), in training (statistics and running averages) and evaluation."""
    from lds_toolkit.neural.layers.blocks import SequenceBatchNorm

    torch.manual_seed(0)
    ours, ref = SequenceBatchNorm(5), torch.nn.BatchNorm1d(5)
    with torch.no_grad():
        ours.weight.copy_(torch.randn(5))
        ours.bias.copy_(torch.randn(5))
        ref.load_state_dict(ours.state_dict())
    for _ in range(3):
        x = 3 * torch.randn(4, 7, 5) + 1
        torch.testing.assert_close(ours(x), ref(x.transpose(1, 2)).transpose(1, 2))
    torch.testing.assert_close(ours.running_var, ref.running_var)
    ours.eval()
    ref.eval()
    x = torch.randn(2, 3, 5)
    torch.testing.assert_close(ours(x), ref(x.transpose(1, 2)).transpose(1, 2))
    torch.testing.assert_close(ours(x[:, 1]), ref(x[:, 1]))  # step input (batch, d)
    assert ours(x.double()).dtype == torch.float64


def test_las_with_table4_norm_is_causal_in_evaluation_mode_only():
    """Post-norm batch norm around LaS (Table 4): evaluation mode (running statistics) keeps
    the model causal; in training mode the batch statistics carry later positions back."""
    model = SequenceModel(8, 2, "las", layer_kwargs=SMALL["las"], vocab_size=5, norm="batch",
                          prenorm=False, seed=1).double()
    assert all(not b.prenorm for b in model.blocks)
    g = torch.Generator().manual_seed(0)
    tok = torch.randint(0, 5, (3, 24), generator=g)
    tok2 = tok.clone()
    tok2[:, 13:] = (tok2[:, 13:] + 1) % 5
    model.train()
    with torch.no_grad():
        model(tok)  # running statistics move away from their start
        y, y2 = model(tok), model(tok2)
    assert (y2[:, :13] - y[:, :13]).abs().max() > 1e-6
    model.eval()
    with torch.no_grad():
        y, y2 = model(tok), model(tok2)
    assert (y2[:, :13] - y[:, :13]).abs().max() <= 1e-10
    assert (y2[:, 13:] - y[:, 13:]).abs().max() > 1e-6
