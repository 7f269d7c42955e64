"""Task generators: each one's defining property, checked by an independent computation."""

from __future__ import annotations

import statistics

import numpy as np
import pytest

from lds_toolkit.neural.tasks import (
    IGNORE_INDEX,
    associative_recall,
    cloze,
    induction_heads,
    lds_next_output,
    listops,
    sine_fit,
)
from lds_toolkit.neural.tasks.listops import decode
from lds_toolkit.systems import LDS, eigenvalue_regions, random_lds, simulate

GENERATORS = {
    "induction": lambda rng: induction_heads(20, 16, rng=rng),
    "recall": lambda rng: associative_recall(20, 31, rng=rng),
    "cloze": lambda rng: cloze(20, rng=rng),
    "sine": lambda rng: sine_fit(50, jitter=0.5, rng=rng),
    "lds": lambda rng: lds_next_output(LDS([[0.9]], [[1.0]], [[1.0]], dt=1.0), 4, 10, rng=rng),
    "listops": lambda rng: listops(20, rng=rng),
}


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_same_seed_same_task_other_seed_other_task(name):
    a, b, c = (GENERATORS[name](s) for s in (3, 3, 4))
    np.testing.assert_array_equal(a.inputs, b.inputs)
    np.testing.assert_array_equal(a.targets, b.targets)
    assert not np.array_equal(a.inputs, c.inputs)
    assert a.mask.dtype == bool and a.mask.shape == a.inputs.shape[:2]
    assert np.all(a.mask | ~a.eval_mask)  # scored positions are trained positions


def test_induction_target_is_the_token_after_the_first_flag():
    vocab = 4
    task = induction_heads(500, 12, vocab_size=vocab, rng=0)
    blank, flag = vocab, vocab + 1
    for seq, tgt in zip(task.inputs, task.targets):
        flags = np.flatnonzero(seq == flag)
        assert len(flags) == 2 and flags[-1] == len(seq) - 1
        p = flags[0]
        assert tgt[-1] == seq[p + 1] and 0 <= seq[p + 1] < vocab
        others = np.delete(seq, [p, p + 1, len(seq) - 1])
        assert np.all(others == blank)
        assert np.all(tgt[:-1] == IGNORE_INDEX)
    assert task.mask[:, -1].all() and task.mask.sum() == len(task)
    # every answer and every trigger position 0 .. L-3 occurs
    assert set(task.info["answer"]) == set(range(vocab))
    assert set(task.info["trigger_position"]) == set(range(10))


@pytest.mark.parametrize("length", [4, 5, 30, 33])
def test_associative_recall_answer_is_the_value_paired_with_the_query(length):
    task = associative_recall(300, length, vocab_size=30, rng=1)
    n_keys, prefix, noop = 14, 28, 29
    assert task.inputs.shape == (300, length)
    for seq, tgt, mask in zip(task.inputs, task.targets, task.mask):
        body = seq[:-2]
        if (length - 2) % 2:
            assert body[0] == noop
            body = body[1:]
        keys, vals = body[0::2], body[1::2]
        assert np.all(keys < n_keys) and np.all((vals >= n_keys) & (vals < 2 * n_keys))
        assert seq[-2] == prefix
        q = seq[-1]
        paired = vals[keys == q]
        assert len(paired) >= 1  # the query key occurs in the sequence
        assert np.all(paired == tgt[-1])  # ... and every occurrence carries the answer
        for k in np.unique(keys):  # one dictionary per sequence
            assert len(np.unique(vals[keys == k])) == 1
        # "all" supervision: each key position is trained to give the next token (its value)
        key_pos = np.flatnonzero(mask[:-1])
        np.testing.assert_array_equal(tgt[key_pos], seq[key_pos + 1])
        assert np.all(seq[key_pos] < n_keys)
    assert task.eval_mask[:, -1].all() and task.eval_mask.sum() == 300


def test_associative_recall_query_supervision_and_query_distribution():
    task = associative_recall(4000, 6, vocab_size=10, supervise="query", rng=2)
    assert task.mask.sum() == 4000 and task.mask[:, -1].all()
    # with 2 pairs the query is uniform among the distinct keys present: when the two keys
    # differ, each is asked half of the time
    keys = task.inputs[:, [0, 2]]
    differ = keys[:, 0] != keys[:, 1]
    first = task.info["query_key"][differ] == keys[differ, 0]
    assert abs(first.mean() - 0.5) < 0.04


def test_cloze_target_is_the_sum_of_squares():
    task = cloze(200, rng=3)
    u = task.inputs[..., 0]
    assert task.inputs.shape == (200, 100, 1)
    nz = np.flatnonzero(np.any(u != 0, axis=0))
    np.testing.assert_array_equal(nz, [12, 94])
    assert np.all((u[:, [12, 94]] >= 1) & (u[:, [12, 94]] <= 2))
    np.testing.assert_allclose(task.targets[:, 63, 0], u[:, 12] ** 2 + u[:, 94] ** 2, rtol=0,
                               atol=0)
    assert np.flatnonzero(task.mask.any(axis=0)).tolist() == [63]
    tr, te = task.split(0.8)
    assert len(tr) == 160 and len(te) == 40
    np.testing.assert_array_equal(te.info["values"], task.info["values"][160:])


def test_cloze_rejects_bad_positions():
    with pytest.raises(ValueError, match="positions"):
        cloze(3, positions=(12, 100))
    with pytest.raises(ValueError, match="distinct"):
        cloze(3, positions=(12, 63))


def test_sine_targets_are_the_next_samples_and_jitter_stays_inside_the_step():
    ref = sine_fit(100)
    t = ref.info["t"]
    np.testing.assert_allclose(t, np.arange(100) / 99, atol=1e-15)
    np.testing.assert_allclose(ref.inputs[0, :, 0], np.sin(5 * np.pi * t), atol=1e-15)
    np.testing.assert_allclose(ref.targets[0, :-1, 0], ref.inputs[0, 1:, 0], atol=0)
    np.testing.assert_allclose(ref.targets[0, -1, 0], np.sin(5 * np.pi * (1 + 1 / 99)))
    pert = sine_fit(100, jitter=0.5, rng=0)
    h = pert.info["grid_step"]
    dt = pert.info["t"] - t
    assert 0 < np.abs(dt).max() < 0.5 * h and np.all(np.diff(pert.info["t"]) > 0)
    np.testing.assert_allclose(pert.inputs[0, :, 0], np.sin(5 * np.pi * pert.info["t"]))
    np.testing.assert_allclose(pert.targets[0, :-1, 0], pert.inputs[0, 1:, 0], atol=0)
    with pytest.raises(ValueError, match="jitter"):
        sine_fit(100, jitter=0.7)


def _naive_lengen_outputs(system, u):
    """x_{t+1} = A x_t + B u_t, y_{t+1} = C x_{t+1} + D u_t, y_0 = 0 (a plain loop)."""
    n, T, _ = u.shape
    y = np.zeros((n, T, system.C.shape[0]))
    for b in range(n):
        x = np.zeros(system.A.shape[0])
        for t in range(T - 1):
            x = system.A @ x + system.B @ u[b, t]
            y[b, t + 1] = system.C @ x + system.D @ u[b, t]
    return y


def test_lds_targets_equal_simulate_and_a_plain_loop():
    reg = eigenvalue_regions(256, 7 / 8)
    system = random_lds(8, reg.region_a, d_in=2, d_out=3, feedthrough=True, rng=5)
    task = lds_next_output(system, 3, 40, rng=6)
    u, y = task.info["u"], task.info["y"]
    assert u.shape == (3, 41, 2) and task.inputs.shape == (3, 40, 5)
    # the recursion (return_states=True) and the FFT route agree to round-off
    np.testing.assert_allclose(y, simulate(system, u, output="lengen").y, rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(y, _naive_lengen_outputs(system, u), rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(task.targets, y[:, 1:])
    np.testing.assert_array_equal(task.inputs[..., :2], u[:, :40])
    np.testing.assert_array_equal(task.inputs[..., 2:], y[:, :40])  # y_t next to u_t
    with pytest.raises(TypeError, match="system must be an LDS"):
        lds_next_output(np.eye(2), 1, 4)


# ----------------------------------------------------------------------------------- ListOps

def _eval_expression(text: str) -> int:
    """An independent ListOps evaluator on the printed expression (recursive descent)."""
    toks = text.split()
    pos = 0

    def node():
        nonlocal pos
        tok = toks[pos]
        pos += 1
        if tok.isdigit():
            return int(tok)
        args = []
        while toks[pos] != "]":
            args.append(node())
        pos += 1
        op = tok[1:]
        if op == "MIN":
            return min(args)
        if op == "MAX":
            return max(args)
        if op == "SM":
            return sum(args) % 10
        assert op == "MED"
        return int(statistics.median(args))

    value = node()
    assert pos == len(toks), "trailing tokens"
    return value


def test_listops_labels_equal_an_independent_evaluation():
    task = listops(400, min_length=8, max_length=48, rng=7)
    lengths = task.info["lengths"]
    assert lengths.min() >= 8 and lengths.max() <= 48
    for seq, label, n_tok, tgt in zip(task.inputs, task.info["label"], lengths, task.targets):
        assert np.all(seq[n_tok:] == 0) and np.all(seq[:n_tok] != 0)
        assert _eval_expression(decode(seq)) == label == tgt[n_tok - 1]
    assert np.array_equal(np.flatnonzero(task.mask[0]), [lengths[0] - 1])
    # all ten classes and all four operators occur
    assert set(task.info["label"]) == set(range(10))
    assert {11, 12, 13, 14} <= set(np.unique(task.inputs))


def test_listops_median_rounds_down_like_lra():
    assert _eval_expression("[MED 1 2 ]") == 1  # median 1.5 -> 1
    from lds_toolkit.neural.tasks.listops import _apply

    for args in ([1, 2], [3, 8, 1, 9], [5, 5, 6], [0, 9]):
        assert _apply("MED", args) == int(np.median(args))


def test_listops_bad_bounds():
    with pytest.raises(ValueError, match="max_length"):
        listops(2, min_length=10, max_length=5)
    with pytest.raises(ValueError, match="in 50 tries"):
        listops(2, min_length=60, max_length=64, max_depth=2, max_args=3, max_tries=50)


def test_tasks_write_nothing_unless_asked_and_round_trip(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    task = associative_recall(5, 12, rng=0)
    cl = cloze(3, rng=0)
    assert list(tmp_path.iterdir()) == []  # generating wrote nothing
    for t in (task, cl):
        path = t.save(tmp_path / f"{t.name}.npz")
        back = type(t).load(path)
        for key in ("inputs", "targets", "mask", "eval_mask"):
            np.testing.assert_array_equal(getattr(back, key), getattr(t, key))
        assert (back.vocab_size, back.n_classes, back.name) == (t.vocab_size, t.n_classes,
                                                                t.name)
    back = type(task).load(tmp_path / "assoc-recall.npz")
    np.testing.assert_array_equal(back.info["dictionary"], task.info["dictionary"])
    assert back.info["prefix"] == 28


def test_save_keeps_numpy_scalars_nested_in_info(tmp_path):
    """info entries that are not arrays go through JSON: numpy scalars inside dicts, tuples and
    lists must be converted, not rejected (json.dumps refuses np.int64, np.float32, np.bool_)."""
    base = cloze(2, rng=0)
    info = dict(base.info, fit={"scale": np.float64(0.5), "steps": np.int64(3)},
                pair=(np.int64(1), np.float32(2.5)), flag=np.bool_(True))
    task = type(base)(base.inputs, base.targets, base.mask, base.eval_mask, name=base.name,
                      info=info)
    back = type(task).load(task.save(tmp_path / "t.npz"))
    assert back.info["fit"] == {"scale": 0.5, "steps": 3}
    assert back.info["pair"] == [1, 2.5] and back.info["flag"] is True
    np.testing.assert_array_equal(back.info["values"], base.info["values"])


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_tasks_print_in_one_short_line(name):
    task = GENERATORS[name](0)
    text = repr(task)
    assert text.startswith("SequenceTask(") and "\n" not in text and len(text) < 300, text
    assert f"inputs: {task.inputs.shape}" in text and f"kind={task.kind!r}" in text
