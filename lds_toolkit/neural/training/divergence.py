"""What each training step leaves behind, read from the device in batches, and the rule that
says it diverged.

A step of :func:`~lds_toolkit.neural.training.train` pushes its loss, gradient norm and (for
classification) the count of correct scored positions to a :class:`StepReader` as device
tensors: nothing waits for the device. :meth:`StepReader.read` turns every pending step into
its record in one device-to-host transfer and applies the divergence rule to them in step
order: a step diverged when its loss or gradient norm is not finite, or its loss exceeds
``divergence_factor`` times the first step's loss. The first such step is reported with a
:class:`DivergenceReport`; :class:`TrainingDivergedError` carries one when training is asked
to raise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class DivergenceReport:
    """Where and why training stopped: ``step`` is the 0-based step where it happened.

    ``found_at`` is None when the step was read before its own update (``log_every=1``,
    or a divergence at a reading step), which was then not applied; otherwise the later
    step whose reading found it (``log_every > 1``): the updates of ``step`` .. ``found_at
    - 1`` were applied, that of ``found_at`` not.
    """

    step: int
    reason: str
    loss: float
    grad_norm: float
    found_at: int | None = None

    def __str__(self) -> str:
        if self.found_at is None:
            applied = "the update of this step was not applied"
        else:
            applied = (f"found when step {self.found_at} was read (log_every > 1): the "
                       f"updates of steps {self.step}-{self.found_at - 1} were applied")
        return (f"training diverged at step {self.step}: {self.reason} "
                f"(loss = {self.loss:.6g}, gradient norm = {self.grad_norm:.6g}); {applied}")


class TrainingDivergedError(FloatingPointError):
    """Raised by :func:`~lds_toolkit.neural.training.train` with ``on_divergence="raise"``;
    ``.report`` says where."""

    def __init__(self, report: DivergenceReport):
        self.report = report
        super().__init__(str(report))


class StepReader:
    """The numbers of the steps since the last reading, kept on the device.

    Parameters
    ----------
    divergence_factor : float or None
        A loss above this multiple of the first step's loss is a divergence (None: only
        non-finite values are).
    first_loss : float or None
        The first step's loss (a resumed run's, from its checkpoint), None before step 0.
    dtype : torch.dtype
        Of the stacked values on the device (float64: a float32 or float64 loss and counts
        up to 2^53 read back exactly).
    """

    def __init__(self, divergence_factor: float | None, first_loss: float | None,
                 dtype: torch.dtype = torch.float64):
        self.divergence_factor = divergence_factor
        self.first_loss = first_loss
        self.dtype = dtype
        self._pending: list[tuple[int, float, torch.Tensor]] = []

    def push(self, step: int, lr: float, loss: torch.Tensor, grad_norm: torch.Tensor,
             correct: torch.Tensor | None = None, count: torch.Tensor | None = None) -> None:
        """Keep step ``step``'s numbers (device tensors; ``correct``/``count`` for
        classification) until the next :meth:`read`."""
        parts = [loss.detach(), grad_norm.detach()]
        if correct is not None:
            parts += [correct, count]
        self._pending.append((int(step), float(lr),
                              torch.stack([p.to(self.dtype) for p in parts])))

    def read(self, at: int, *, check: bool = True, before: int | None = None):
        """The records of the pending steps (``before``: only those of earlier steps), read
        in one transfer, and the first divergence among them.

        Returns ``(records, bad)``: the records in step order up to (not including) the first
        diverged step, and that step's report fields (``step``, ``reason``, ``loss``,
        ``grad_norm``, ``found_at``: None when it is ``at``, the step being read) or None.
        With ``check=False`` every record is returned and ``bad`` is None.
        """
        pending = [p for p in self._pending if before is None or p[0] < before]
        self._pending = []
        if not pending:
            return [], None
        rows = torch.stack([v for _, _, v in pending]).tolist()
        records = []
        for (step, lr, _), row in zip(pending, rows):
            loss, gnorm = row[0], row[1]
            acc = float("nan")
            if len(row) == 4 and row[3]:
                acc = row[2] / row[3]
            record = {"step": step, "loss": loss, "accuracy": acc, "grad_norm": gnorm,
                      "lr": lr}
            if self.first_loss is None:
                self.first_loss = loss
            reason = self._reason(loss, gnorm) if check else None
            if reason is not None:
                return records, {"step": step, "reason": reason, "loss": loss,
                                 "grad_norm": gnorm, "found_at": None if step == at else at}
            records.append(record)
        return records, None

    def _reason(self, loss: float, gnorm: float) -> str | None:
        if not math.isfinite(loss):
            return "non-finite loss"
        if not math.isfinite(gnorm):
            return "non-finite gradient norm"
        first, factor = self.first_loss, self.divergence_factor
        if factor is not None and first > 0 and loss > factor * first:
            return (f"loss blew up to more than {factor:g} x the first step's loss "
                    f"{first:.6g}")
        return None
