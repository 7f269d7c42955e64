"""Checkpoints of :func:`~lds_toolkit.neural.training.train`: the file format, save and load.

A checkpoint is one file written by torch.save (atomically: temporary file, then rename) of
a dict holding only tensors, state dicts and one JSON string:

* ``"model"``, ``"optimizer"``: state dicts;
* ``"history"``, ``"evals"``: dicts of 1-D tensors (int64 steps, float64 values);
* ``"torch_rng"``, ``"cuda_rng"``: RNG states (cuda_rng: list of tensors, or absent);
* ``"meta"``: JSON: format (:data:`CHECKPOINT_FORMAT`), step, fingerprint of the
  :class:`~lds_toolkit.neural.training_config.TrainConfig`, first loss.

It is read with ``torch.load(weights_only=True)``, which refuses anything that would run
code; :func:`_load_checkpoint` refuses (:class:`CheckpointError`) an unsafe, corrupted or
foreign file, one written with other training settings, and one holding non-finite
parameters. A diverged run's state goes to :func:`diverged_checkpoint_path`, beside the last
good checkpoint.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import torch

from .._safe_files import (
    UnsafeFileError,
    entry_kind,
    memory_read_cap,
    os_reason,
    probe_writable_directory,
    read_regular_file,
)

CHECKPOINT_FORMAT = "lds_toolkit-checkpoint/1"


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used: unsafe, corrupted, foreign or of other settings."""


def check_checkpoint_path(path: str | Path) -> Path:
    """Before step 0: ``path`` can hold a checkpoint (not a directory, FIFO or device; its
    directory exists or can be created, and files can be written there), so that a bad path
    fails at once instead of after training. ``ValueError`` naming the path and why."""
    path = Path(path)
    kind = entry_kind(path)
    if kind not in (None, "a regular file", "a symbolic link"):
        raise ValueError(f"checkpoint={str(path)!r} is {kind}; give the path of a file")
    if kind == "a symbolic link" and entry_kind(path.resolve()) not in (None, "a regular file"):
        raise ValueError(f"checkpoint={str(path)!r} is a link to "
                         f"{entry_kind(path.resolve())}; give the path of a file")
    try:
        probe_writable_directory(path.parent)
    except OSError as exc:
        raise ValueError(f"checkpoint={str(path)!r}: cannot write in "
                         f"{str(path.parent)!r}: {os_reason(exc)}") from None
    return path


def diverged_checkpoint_path(path: str | Path) -> Path:
    """Where :func:`train` writes the state of a diverged run: ``run.pt`` ->
    ``run.diverged.pt``, so that the last good checkpoint at ``path`` stays intact."""
    path = Path(path)
    return path.with_name(f"{path.stem}.diverged{path.suffix}")


def _save_checkpoint(path: Path, model, opt, step, history, evals, cfg, first_loss):
    from .._atomic import atomic_write

    meta = {"format": CHECKPOINT_FORMAT, "step": int(step), "fingerprint": cfg.fingerprint(),
            "first_loss": first_loss}
    state = {
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "history": _as_tensors_dict(history),
        "evals": _as_tensors_dict(evals),
        "torch_rng": torch.get_rng_state(),
        "meta": json.dumps(meta, allow_nan=False),
    }
    if torch.cuda.is_available():
        state["cuda_rng"] = torch.cuda.get_rng_state_all()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda fh: torch.save(state, fh))


def _as_tensors_dict(columns: dict[str, list]) -> dict[str, torch.Tensor]:
    return {k: torch.tensor(v, dtype=torch.int64 if k == "step" else torch.float64)
            for k, v in columns.items()}


def _load_checkpoint(path: Path, model, opt, cfg):
    """Load ``path`` into ``model`` and ``opt``; return its metadata plus history and evals.
    :class:`CheckpointError` for anything that is not a checkpoint of this run."""
    advice = "delete it or pass resume=False"
    try:  # a regular file (a FIFO or device at the path is refused, never waited on)
        data = read_regular_file(path, memory_read_cap(), follow_symlinks=True, what="checkpoint")
    except UnsafeFileError as exc:
        raise CheckpointError(f"checkpoint {exc}: {advice}") from None
    try:
        state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - unpickling errors come in many types
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CheckpointError(f"checkpoint {path} cannot be loaded safely ({first[:200]}); "
                              f"it was not written by lds_toolkit.neural.train or is "
                              f"corrupted: {advice}") from None
    try:
        meta = json.loads(state["meta"])
        if meta.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(f"format {meta.get('format')!r}")
        hist = {k: v.tolist() for k, v in state["history"].items()}
        evals = {k: v.tolist() for k, v in state["evals"].items()}
    except (TypeError, KeyError, ValueError, AttributeError) as exc:
        raise CheckpointError(f"checkpoint {path} is not a checkpoint of this version of "
                              f"lds_toolkit.neural.train ({type(exc).__name__}: {exc}): "
                              f"{advice}") from None
    if meta.get("fingerprint") != cfg.fingerprint():
        raise CheckpointError(f"checkpoint {path} was written with different training settings "
                              "(only steps, eval/checkpoint frequency, threads, device and "
                              f"progress may change on resume); {advice}")
    bad = [k for k, v in state["model"].items()
           if torch.is_tensor(v) and v.is_floating_point() and not bool(torch.isfinite(v).all())]
    if bad:
        raise CheckpointError(f"checkpoint {path} holds non-finite values in {bad[0]!r}; "
                              f"{advice}")
    try:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["torch_rng"])
    except (RuntimeError, ValueError, KeyError, TypeError) as exc:
        raise CheckpointError(f"checkpoint {path} does not fit this model and optimizer "
                              f"({str(exc)[:300]}): {advice}") from None
    if state.get("cuda_rng") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda_rng"])
    return {**meta, "history": hist, "evals": evals}
