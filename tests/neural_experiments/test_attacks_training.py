"""Training API attacks (issue 27): every bad argument is refused before step 0 with a message
naming it, and odd files at a checkpoint or task path are refused without blocking."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
import torch

from lds_toolkit.neural import SequenceModel
from lds_toolkit.neural.tasks import SequenceTask, induction_heads
from lds_toolkit.neural.training import CheckpointError, evaluate, predict, train
from lds_toolkit.neural.training.runtime import resolve_device

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture
def task():
    return induction_heads(8, 16, rng=0)


@pytest.fixture
def model():
    return SequenceModel(8, 1, "s4", vocab_size=6, d_output=4, seed=0)


class _CountSteps:
    def __init__(self):
        self.steps = 0

    def __call__(self, step, record):
        self.steps += 1


def _refused_before_step_0(model, task, exc, match, **settings):
    calls = _CountSteps()
    with pytest.raises(exc, match=match):
        train(model, task, steps=5, callback=calls, **settings)
    assert calls.steps == 0, "refused before the first step, not after training"


def test_a_checkpoint_in_a_directory_that_cannot_exist_is_refused_before_step_0(
        tmp_path, model, task):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    _refused_before_step_0(model, task, ValueError,
                           r"checkpoint='.*a-file/ck.pt': cannot write in '.*a-file': Not a "
                           r"directory \(ENOTDIR\)", checkpoint=str(blocker / "ck.pt"))


@pytest.mark.parametrize("planted", ["directory", "fifo"])
def test_a_checkpoint_path_that_is_a_directory_or_fifo_is_refused_at_once(
        tmp_path, model, task, planted):
    path = tmp_path / "ck.pt"
    path.mkdir() if planted == "directory" else os.mkfifo(path)
    kind = "a directory" if planted == "directory" else "a FIFO"
    t0 = time.monotonic()
    _refused_before_step_0(model, task, ValueError, rf"checkpoint='.*ck.pt' is {kind}; give "
                                                    r"the path of a file", checkpoint=path)
    assert time.monotonic() - t0 < 30, "never waits on the FIFO"


def test_a_checkpoint_link_to_a_fifo_is_refused_without_blocking(tmp_path, model, task):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "ck.pt").symlink_to(tmp_path / "pipe")
    _refused_before_step_0(model, task, ValueError, r"is a link to a FIFO",
                           checkpoint=tmp_path / "ck.pt")


def test_loading_a_checkpoint_that_became_a_fifo_is_refused_without_blocking(
        tmp_path, model, task):
    """Between the path check and the load (the race the check cannot close), the loader
    itself refuses a FIFO instead of blocking on it."""
    from lds_toolkit.neural.training.checkpoints import _load_checkpoint

    path = tmp_path / "ck.pt"
    os.mkfifo(path)
    with pytest.raises(CheckpointError, match=r"is a FIFO, not a regular file"):
        _load_checkpoint(path, model, None, None)


@pytest.mark.parametrize("device, match", [
    ("foo", r"device must be one of 'auto', 'cpu'.*got 'foo'"),
    ("meta", r"got 'meta' \(type 'meta' is not used for training here\)"),
    ("cuda:0" if not torch.cuda.is_available() else "cuda:99", r"cuda"),
])
def test_bad_device_names_are_refused_in_one_sentence(model, task, device, match):
    _refused_before_step_0(model, task, ValueError, match, device=device)
    with pytest.raises(ValueError, match=match):
        resolve_device(device)
    with pytest.raises(ValueError, match=match):
        predict(model, task, device=device)


def test_a_device_of_the_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match=r"device must be a string .* got int 3"):
        resolve_device(3)


def test_class_targets_beyond_n_classes_are_refused_when_the_task_is_built():
    x = np.zeros((2, 5), dtype=np.int64)
    y = np.zeros((2, 5), dtype=np.int64)
    y[1, 3] = 4
    mask = np.ones((2, 5), bool)
    with pytest.raises(ValueError, match=r"targets must be class labels in \[0, n_classes = "
                                         r"4\) .* sequence 1, position 3 holds 4"):
        SequenceTask(x, y, mask, mask, vocab_size=3, n_classes=4)
    y[1, 3] = -100  # IGNORE_INDEX is fine where no mask scores it
    mask[1, 3] = False
    assert SequenceTask(x, y, mask, mask, vocab_size=3, n_classes=4).n_classes == 4


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"n_classes": 0}, ValueError, r"n_classes must be None or an integer >= 1, got 0"),
    ({"n_classes": True}, ValueError, r"n_classes must be None or an integer >= 1, got True"),
    ({"vocab_size": 2}, ValueError, r"token ids in \[0, vocab_size = 2\), got ids from 0 to 4"),
    ({"vocab_size": -1}, ValueError, r"vocab_size must be None or an integer >= 1"),
])
def test_sequence_task_refuses_bad_sizes(kwargs, exc, match):
    x = np.arange(10).reshape(2, 5) % 5
    y = np.zeros((2, 5), dtype=np.int64)
    mask = np.ones((2, 5), bool)
    with pytest.raises(exc, match=match):
        SequenceTask(x, y, mask, mask, **kwargs)


def test_sequence_task_takes_lists_and_refuses_objects():
    t = SequenceTask([[[1.0], [2.0]]], [[[0.5], [0.1]]], [[True, True]], [[True, True]])
    assert isinstance(t.inputs, np.ndarray) and t.inputs.shape == (1, 2, 1)
    with pytest.raises(TypeError, match=r"SequenceTask.inputs must be a numeric array, got "
                                        r"dtype <U1"):
        SequenceTask([["a"]], [[0]], [[True]], [[True]])
    with pytest.raises(ValueError, match=r"inputs must have shape \(N, L\) .* got shape \(3,\)"):
        SequenceTask([1.0, 2.0, 3.0], [[0.0]], [[True]], [[True]])


def test_evaluate_refuses_nan_targets_instead_of_returning_nan():
    x = np.zeros((2, 4, 1))
    y = np.zeros((2, 4, 1))
    y[1, 2, 0] = np.nan
    mask = np.ones((2, 4), bool)
    with pytest.raises(ValueError, match=r"SequenceTask.targets must contain only finite "
                                         r"values; entry \(1, 2, 0\) is nan"):
        SequenceTask(x, y, mask, mask)  # refused where the task is built (issue 38)
    y[1, 2, 0] = 0.0
    data = SequenceTask(x, y, mask, mask)
    data.targets[1, 2, 0] = np.nan  # and where it is used, if its arrays change afterwards
    model = SequenceModel(8, 1, "s4", d_input=1, d_output=1, seed=0)
    with pytest.raises(ValueError, match=r"data.targets must contain only finite values; "
                                         r"entry \(1, 2, 0\) is nan"):
        evaluate(model, data)


@pytest.mark.parametrize("fn", [predict, evaluate])
@pytest.mark.parametrize("batch_size", [0, -1, 2.5, True])
def test_predict_and_evaluate_refuse_batch_sizes_below_one(model, task, fn, batch_size):
    exc = TypeError if not isinstance(batch_size, int) or isinstance(batch_size, bool) \
        else ValueError
    with pytest.raises(exc, match=rf"{fn.__name__}: batch_size must be an integer >= 1"):
        fn(model, task, batch_size=batch_size)


@pytest.mark.parametrize("fn", [predict, evaluate])
def test_predict_and_evaluate_refuse_what_is_not_a_model_or_a_task(model, task, fn):
    with pytest.raises(TypeError, match=rf"{fn.__name__}: data must be a SequenceTask, got "
                                        r"ndarray"):
        fn(model, np.zeros((2, 3)))
    with pytest.raises(TypeError, match=rf"{fn.__name__}: model must be a torch.nn.Module"):
        fn(lambda x: x, task)


def test_a_task_file_that_is_a_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "task.npz")
    with pytest.raises(ValueError, match=r"task file is a FIFO, not a regular file"):
        SequenceTask.load(tmp_path / "task.npz")


def test_saved_tasks_still_load(tmp_path, task):
    path = task.save(tmp_path / "t.npz")
    again = SequenceTask.load(path)
    assert np.array_equal(again.inputs, task.inputs)
    assert np.array_equal(again.targets, task.targets)
