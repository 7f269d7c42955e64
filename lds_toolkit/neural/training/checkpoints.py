"""Checkpoints of :func:`~lds_toolkit.neural.training.train`: the file format, save and load.

A checkpoint is one file written by torch.save (atomically: temporary file, then rename) of
a dict holding only tensors, state dicts and JSON strings:

* ``"model"``, ``"optimizer"``: state dicts;
* ``"history"``, ``"evals"``: dicts of 1-D tensors (int64 steps, float64 values);
* ``"torch_rng"``, ``"cuda_rng"``: RNG states (cuda_rng: list of tensors, or absent);
* ``"callback"`` (optional): JSON of the training callback's ``state_dict()``, for a
  callback that keeps numbers of its own (probes, per-step measurements);
* ``"meta"``: JSON: format (:data:`CHECKPOINT_FORMAT`), step, fingerprint of the
  :class:`~lds_toolkit.neural.training.config.TrainConfig`, first loss, ``tag``
  (``TrainConfig.checkpoint_tag``), ``status`` (None while the run is going on; how it
  ended once it has: a finished run is not trained further on resume) and ``sha256``, a
  digest of everything else in the file (:func:`state_digest`).

It is read with ``torch.load(weights_only=True)``, which refuses anything that would run
code, and checked before anything is loaded: :func:`_load_checkpoint` refuses
(:class:`CheckpointError`) an unsafe, corrupted (digest mismatch: torch.load itself does not
notice a flipped byte) or foreign file, one written with other training settings, one
carrying another tag (stale: another task or code version) and one holding non-finite
parameters. A diverged run's state goes to :func:`diverged_checkpoint_path`, beside the last
good checkpoint. Files of the previous format (``lds_toolkit-checkpoint/1``, no digest, no
tag) are still read; a file labelled so that carries a digest or a tag (a later format
relabelled, which would skip its checks) is refused.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import torch

from ..._safe_files import (
    UnsafeFileError,
    entry_kind,
    memory_read_cap,
    os_reason,
    probe_writable_directory,
    read_regular_file,
)

CHECKPOINT_FORMAT = "lds_toolkit-checkpoint/2"
#: Formats :func:`_load_checkpoint` reads (the first has no digest and no tag).
_READABLE_FORMATS = ("lds_toolkit-checkpoint/1", CHECKPOINT_FORMAT)


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used: unsafe, corrupted, foreign, stale or of other
    settings."""


class CheckpointWarning(RuntimeWarning):
    """A checkpoint could not be used and training restarted from step 0
    (``TrainConfig(bad_checkpoint="restart")``)."""


def state_digest(state) -> str:
    """SHA-256 over a checkpoint's content: nested dicts (keys sorted), lists, tuples,
    tensors (dtype, shape and bytes), strings and numbers, each tagged with its type, so
    that any changed value, key or shape changes the digest."""
    h = hashlib.sha256()

    def feed(obj):
        if torch.is_tensor(obj):
            t = obj.detach().cpu().contiguous()
            h.update(f"T{t.dtype}{tuple(t.shape)}".encode())
            if t.numel():  # the raw bytes (a uint8 view: numpy has no bfloat16)
                h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
        elif isinstance(obj, dict):
            h.update(f"D{len(obj)}".encode())
            for k in sorted(obj, key=repr):
                feed(k)
                feed(obj[k])
        elif isinstance(obj, list | tuple):
            h.update(f"L{len(obj)}".encode())
            for v in obj:
                feed(v)
        else:
            h.update(f"{type(obj).__name__}:{obj!r};".encode())

    feed(state)
    return h.hexdigest()


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


def _save_checkpoint(path: Path, model, opt, step, history, evals, cfg, first_loss, *,
                     status: str | None = None, callback_state=None,
                     rng_state: torch.Tensor | None = None):
    """Write the checkpoint (``rng_state``: torch's CPU RNG state to record; None: the
    global one, as a run trained alone has it)."""
    from ..._atomic import atomic_write

    state = {
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "history": _as_tensors_dict(history),
        "evals": _as_tensors_dict(evals),
        "torch_rng": torch.get_rng_state() if rng_state is None else rng_state,
    }
    if torch.cuda.is_available():
        state["cuda_rng"] = torch.cuda.get_rng_state_all()
    if callback_state is not None:
        state["callback"] = json.dumps(callback_state)
    meta = {"format": CHECKPOINT_FORMAT, "step": int(step), "fingerprint": cfg.fingerprint(),
            "first_loss": first_loss, "tag": cfg.checkpoint_tag, "status": status,
            "sha256": state_digest(state)}
    state["meta"] = json.dumps(meta, allow_nan=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda fh: torch.save(state, fh))


def _as_tensors_dict(columns: dict[str, list]) -> dict[str, torch.Tensor]:
    return {k: torch.tensor(v, dtype=torch.int64 if k == "step" else torch.float64)
            for k, v in columns.items()}


def _load_checkpoint(path: Path, model, opt, cfg):
    """Load ``path`` into ``model`` and ``opt``; return its metadata plus history, evals and
    the callback's state. :class:`CheckpointError` for anything that is not a checkpoint of
    this run (nothing is loaded into ``model`` or ``opt`` unless every check passed; a
    state dict that does not fit them is the one failure found while loading, and then
    they may be partly loaded)."""
    restart = getattr(cfg, "bad_checkpoint", "raise") == "restart"
    advice = "training restarts from step 0" if restart else "delete it or pass resume=False"
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
        if meta.get("format") not in _READABLE_FORMATS:
            raise ValueError(f"format {meta.get('format')!r}")
        hist = {k: v.tolist() for k, v in state["history"].items()}
        evals = {k: v.tolist() for k, v in state["evals"].items()}
        callback_state = json.loads(state["callback"]) if "callback" in state else None
    except (TypeError, KeyError, ValueError, AttributeError) as exc:
        raise CheckpointError(f"checkpoint {path} is not a checkpoint of this version of "
                              f"lds_toolkit.neural.train ({type(exc).__name__}: {exc}): "
                              f"{advice}") from None
    if meta["format"] == _READABLE_FORMATS[0] and ("sha256" in meta or "tag" in meta):
        # format 1 had no digest and no tag: a file carrying them was written as a later
        # format, and relabelling it would skip its digest and tag checks
        raise CheckpointError(f"checkpoint {path} says format {meta['format']!r} but carries "
                              f"a digest or tag, which that format never had: a later "
                              f"format relabelled (a downgrade, refused so that its digest "
                              f"is checked): {advice}")
    if meta["format"] != _READABLE_FORMATS[0]:
        body = {k: v for k, v in state.items() if k != "meta"}
        if meta.get("sha256") != state_digest(body):
            raise CheckpointError(f"checkpoint {path} is corrupted (its content does not match "
                                  f"the digest it was written with): {advice}")
        if meta.get("tag") != cfg.checkpoint_tag:
            raise CheckpointError(f"checkpoint {path} is stale: it was written for "
                                  f"{meta.get('tag')!r}, this run is {cfg.checkpoint_tag!r}: "
                                  f"{advice}")
    if meta.get("fingerprint") != cfg.fingerprint():
        raise CheckpointError(f"checkpoint {path} was written with different training settings "
                              "(only steps, eval/checkpoint frequency, threads, device, "
                              f"compilation and progress may change on resume); {advice}")
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
    return {**meta, "history": hist, "evals": evals, "callback": callback_state}
