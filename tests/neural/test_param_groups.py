"""ssm_parameter_groups (state-spaces/s4's per-parameter lr / no weight decay) and its use by
the training loop."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import numpy as np
import pytest
import torch

from lds_toolkit.neural import S4, S4Plus, SequenceModel, ssm_parameter_groups, train
from lds_toolkit.neural.tasks import SequenceTask
from lds_toolkit.neural.training import TrainConfig
from lds_toolkit.neural.training._run_state import _param_groups
from lds_toolkit.neural.training.config import _RESUMABLE_FIELDS


def _ids(params):
    return {id(p) for p in params}


@pytest.mark.parametrize("kwargs", [{}, {"mode": "dplr"}, {"real_transform": "none"}])
def test_groups_split_ssm_parameters(kwargs):
    model = SequenceModel(4, 2, S4Plus, layer_kwargs={"d_state": 6, **kwargs}, d_input=2,
                          d_output=1, seed=0)
    groups = ssm_parameter_groups(model, lr=1e-2, weight_decay=0.1, ssm_lr=1e-3)
    assert [g["name"] for g in groups] == ["default", "ssm"]
    default, ssm = groups
    assert (default["lr"], default["weight_decay"]) == (1e-2, 0.1)
    assert (ssm["lr"], ssm["weight_decay"]) == (1e-3, 0.0)
    # exactly log_dt, Re A, Im A, B (and P) of each SSM; C and D stay in the default group
    want = set()
    for block in model.blocks:
        s = block.layer.ssm
        real = s.log_A_real if s.real_transform == "exp" else s.A_real
        want |= _ids([s.log_dt, real, s.A_imag, s.B] + ([s.P] if hasattr(s, "P") else []))
        assert id(s.C) in _ids(default["params"]) and id(s.D) in _ids(default["params"])
    assert _ids(ssm["params"]) == want
    assert _ids(default["params"]) | want == _ids(model.parameters())
    assert not (_ids(default["params"]) & want)
    opt = torch.optim.AdamW(groups)  # accepted by torch as they are
    assert len(opt.param_groups) == 2


def test_groups_without_ssm_and_bad_arguments():
    groups = ssm_parameter_groups(torch.nn.Linear(2, 2), lr=1e-3)
    assert len(groups) == 1 and groups[0]["name"] == "default"
    with pytest.raises(ValueError, match="lr"):
        ssm_parameter_groups(S4(2), lr=0.0)
    with pytest.raises(ValueError, match="ssm_weight_decay"):
        ssm_parameter_groups(S4(2), lr=1e-3, ssm_weight_decay=-1.0)
    with pytest.raises(TypeError, match="nn.Module"):
        ssm_parameter_groups([1, 2], lr=1e-3)


def _task(n=32, length=16, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.standard_normal((n, length, 1))
    y = np.cumsum(u, axis=1) * 0.1
    mask = np.ones((n, length), dtype=bool)
    return SequenceTask(u, y, mask, mask.copy(), name="cumsum")


def test_training_loop_uses_the_ssm_learning_rate():
    """First AdamW step moves each entry by about its group's lr (Adam normalises the gradient):
    SSM parameters by ssm_lr = 1e-5, the others by lr = 1e-2."""
    data = _task()
    model = SequenceModel(4, 1, "s4", layer_kwargs={"d_state": 4}, d_input=1, d_output=1,
                          seed=0)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    train(model, data, steps=1, batch_size=8, lr=1e-2, ssm_lr=1e-5, ssm_weight_decay=0.0,
          grad_clip=None)
    moved = {n: (p.detach() - before[n]).abs().max().item() for n, p in model.named_parameters()}
    assert 0.5e-5 < moved["blocks.0.layer.ssm.log_dt"] < 2e-5
    assert 0.5e-5 < moved["blocks.0.layer.ssm.B"] < 2e-5
    assert 0.5e-2 < moved["blocks.0.layer.ssm.C"] < 2e-2


def test_config_groups_and_fingerprint_compatibility():
    model = S4(3, 4, seed=0)
    plain = _param_groups(model, TrainConfig(lr=1e-3, weight_decay=0.1))
    assert len(plain) == 1 and plain[0]["weight_decay"] == 0.1
    split = _param_groups(model, TrainConfig(lr=1e-3, weight_decay=0.1, ssm_weight_decay=0.0))
    assert [g["weight_decay"] for g in split] == [0.1, 0.0]
    assert [g["base_lr"] for g in split] == [1e-3, 1e-3]
    # a config that does not use the new fields keeps its old fingerprint (old checkpoints resume)
    cfg = TrainConfig(lr=1e-3)
    old = {k: v for k, v in dataclasses.asdict(cfg).items()
           if k not in _RESUMABLE_FIELDS + ("checkpoint", "resume", "ssm_lr",
                                                     "ssm_weight_decay", "precision",
                                                     "length_multiple")}
    old_hash = hashlib.sha256(json.dumps(old, sort_keys=True, default=str).encode()).hexdigest()
    assert cfg.fingerprint() == old_hash
    assert cfg.fingerprint() != TrainConfig(lr=1e-3, ssm_lr=1e-4).fingerprint()
    with pytest.raises(ValueError, match="ssm_lr"):
        TrainConfig(ssm_lr=-1.0)
    with pytest.raises(ValueError, match="ssm_weight_decay"):
        TrainConfig(ssm_weight_decay=-1.0)
