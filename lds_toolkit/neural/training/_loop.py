"""The one training loop: steps of one run, or of several stacked runs, until each stops.

:func:`run_loop` is what :func:`~lds_toolkit.neural.training.train` runs for its one run
(with a :class:`~lds_toolkit.neural.training._engines.SingleEngine`) and what
:func:`~lds_toolkit.neural.training.run_group.train_group` runs for each group of runs stacked at
the same step (a :class:`~lds_toolkit.neural.training._engines.StackedEngine`). Per step:
every run draws its own batch (its seed, its data), the engine computes the forward pass,
the runs' losses, the backward pass and each run's clipped gradient norm; each run pushes
its numbers to its own :class:`~lds_toolkit.neural.training.divergence.StepReader`. At a reading
step (``log_every``, evaluations, checkpoints, the deadline, the last step) each run's
numbers are read and its divergence rule applied; a run that diverged leaves before the
update. Then the update; then, per run, the evaluation and its stop rules, the checkpoint,
the callback. A run that stops leaves the engine and is finished
(:meth:`~lds_toolkit.neural.training._run_state.TrainRun.finish`); the others go on. The order of
these events is the order of a run trained alone, so a run's numbers do not depend on the
company it trains in (up to the round-off of batched kernels).
"""

from __future__ import annotations

import time

import torch

from ..._budget import TimeBudgetReached, passed
from ..._tqdm import tqdm
from ._engines import make_engine
from ._run_state import TrainRun
from .batching import _Tensors
from .config import lr_factor
from .divergence import DivergenceReport
from .evaluation import _batch_loss, _check_model_output
from .runtime import precision


def check_deadline(runs: list[TrainRun]) -> None:
    """Raise :class:`TimeBudgetReached` when the runs' deadline passed before their first
    step (runs with nothing left to train are not held back)."""
    cfg = runs[0].cfg
    if passed(cfg.deadline) and any(r.trains for r in runs):
        raise TimeBudgetReached(f"train: the deadline had passed before step "
                                f"{min(r.start_step for r in runs if r.trains)}")


def run_loop(runs: list[TrainRun], device: torch.device, started: float,
             desc: str) -> None:
    """Train ``runs`` (all at the same start step, with steps left, sharing every setting
    of the step) to their ends; each is finished when it stops."""
    cfg = runs[0].cfg
    engine = make_engine(runs, cfg, device)
    step = start = runs[0].start_step
    active = list(runs)
    last_save = time.monotonic()
    with_ckpt = runs[0].ckpt is not None
    bar = tqdm(total=cfg.steps, initial=min(start, cfg.steps), disable=not cfg.progress,
               desc=desc, leave=False, dynamic_ncols=True)

    def leave(stopping, at):
        nonlocal active
        engine.remove(stopping)
        active = [r for r in active if r not in stopping]
        for r in stopping:
            r.finish(at, started)

    try:
        while step < cfg.steps and active:
            picks = [r.batch(step) for r in active]
            cut = max(c for _, c in picks)  # crop: exact for causal models (TrainConfig)
            batches = [r.tensors(idx, cut) for r, (idx, _) in zip(active, picks)]
            factor = lr_factor(step, cfg)
            lr = cfg.lr * factor
            engine.set_lr(factor)
            if engine.graphs:
                torch.compiler.cudagraph_mark_step_begin()
            with precision(cfg.precision, device):
                outs = engine.forward([b[0] for b in batches])
                losses = []
                for r, out, (x, y, m, em) in zip(active, outs, batches):
                    if step == start:
                        _check_model_output(out, r.data, _Tensors(x, y, m, em))
                    losses.append(_batch_loss(out if r.is_cls else out.to(y.dtype), y, m,
                                              r.data.kind))
            engine.backward(losses)
            gnorms = engine.clip(cfg.grad_clip if cfg.grad_clip is not None else float("inf"))
            for r, out, loss, gnorm, (_, y, _, em) in zip(active, outs, losses, gnorms,
                                                          batches):
                if r.is_cls:
                    correct, count = ((out.detach().argmax(dim=-1) == y) & em).sum(), em.sum()
                else:
                    correct = count = None
                r.reader.push(step, lr, loss, gnorm, correct, count)
            done = step + 1
            evaluating = runs[0].eval_data is not None and cfg.eval_every \
                and done % cfg.eval_every == 0
            saving = with_ckpt and (
                (cfg.checkpoint_every and done % cfg.checkpoint_every == 0)
                or (cfg.checkpoint_seconds is not None
                    and time.monotonic() - last_save >= cfg.checkpoint_seconds))
            out_of_time = passed(cfg.deadline) and done < cfg.steps
            reading = (done % cfg.log_every == 0 or done == cfg.steps or evaluating or saving
                       or out_of_time)
            if reading:  # the one device-to-host transfer of this step (per run)
                diverged = []
                for r in active:
                    r.records, bad = r.reader.read(step)
                    r.add(r.records)
                    if bad is not None:
                        r.report = DivergenceReport(**bad)
                        r.status = "diverged"
                        diverged.append(r)
                if diverged:  # before the update: a diverged run does not get it
                    leave(diverged, step)
                    if not active:
                        break
            engine.step()
            step = done
            bar.update(1)
            if not reading:
                continue
            if cfg.progress:
                bar.set_postfix(loss=f"{active[0].records[-1]['loss']:.4g}", refresh=False)
            stopping = []
            if evaluating:
                engine.sync(active)
                for r in active:
                    r.run_eval(step)
                    rule = r.stop_rule()
                    if rule is not None:
                        r.status = rule
                        stopping.append(r)
            going = [r for r in active if r not in stopping]
            if saving:  # after the evaluation of this step, which a resumed run will not redo
                engine.sync(going, optimizer=True)
                for r in going:
                    r.save(r.ckpt, step)
                last_save = time.monotonic()
            engine.sync([r for r in going if r.callback is not None])
            for r in going:
                if r.callback is not None and any([r.callback(rec["step"], rec)
                                                   for rec in r.records]):
                    stopping.append(r)
            if stopping:
                leave(stopping, step)
                if not active:
                    break
            if out_of_time:
                if with_ckpt:
                    engine.sync(active, optimizer=True)
                    for r in active:
                        r.save(r.ckpt, step)
                        r.start_step = step  # nothing new for the handler below to save
                raise TimeBudgetReached(
                    f"train: the deadline passed after step {step}"
                    + (f"; checkpoint {active[0].ckpt} resumes" if with_ckpt and len(runs) == 1
                       else "; the checkpoints resume" if with_ckpt else ""))
    except BaseException:
        engine.sync(active, optimizer=True)
        for r in active:
            r.save_interrupted(step)
        raise
    finally:
        bar.close()
    engine.sync(active, optimizer=True)
    for r in active:
        r.finish(step, started)
