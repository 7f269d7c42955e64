"""What computes a training step of the runs in :mod:`lds_toolkit.neural.training._loop`.

:class:`SingleEngine` trains one run's model in place with its own optimizer: the loop of
:func:`~lds_toolkit.neural.training.train`. :class:`StackedEngine` trains N runs of one
architecture at once: their parameters (and buffers) are stacked along a new leading axis
(:func:`torch.func.stack_module_state`), the forward pass is
``vmap(functional_call(model, ...))`` over that axis, so that every operation of the N
models is one batched kernel launch (a small model no longer leaves the GPU idle between
launches), and one AdamW updates the stacked tensors. Each run keeps its own numbers:

* the loss is the sum of the runs' mean losses; run i's parameters receive the gradient of
  its own loss only (the runs share no parameter);
* the gradient norm and its clipping are per run (``clip_grad_norm_``'s formula,
  ``g <- g * min(1, c / (||g_i|| + 1e-6))`` with ``||g_i||`` over run i's gradients);
* AdamW is elementwise, so the stacked update of run i's slice is run i's own update; the
  learning rate, betas and weight decay are shared (the runs' settings must agree).

A run leaves the stack when it stops (early stopping, divergence, callback): its slice of
the parameters, buffers and optimizer state is written back into its own model and
optimizer first (:meth:`StackedEngine.sync`), then the others are restacked. Random
operations (dropout) are refused under vmap (``randomness="error"``): their numbers could
not equal a run trained alone.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from ._run_state import TrainRun, _param_groups, adamw
from .config import TrainConfig


def _compile_options(cfg: TrainConfig, device: torch.device):
    """``(options, graphs)``: the ``torch.compile`` keyword arguments (None: eager) and
    whether they record CUDA graphs (then every step is marked as a new one)."""
    options = cfg.compile_options(device)
    if options is None:
        return None, False
    return options, device.type == "cuda" and options.get("mode") in ("reduce-overhead",
                                                                       "max-autotune")


def _set_lr(opt: torch.optim.Optimizer, factor: float, cfg: TrainConfig) -> None:
    for group in opt.param_groups:
        # checkpoints from before parameter groups have no "base_lr": one group at lr
        group["lr"] = group.get("base_lr", cfg.lr) * factor


class SingleEngine:
    """One run, its model trained in place (``torch.compile(model)`` with ``cfg.compile``)."""

    def __init__(self, run: TrainRun, cfg: TrainConfig, device: torch.device):
        self.run, self.cfg = run, cfg
        options, self.graphs = _compile_options(cfg, device)
        self.fwd = run.model if options is None else torch.compile(run.model, **options)

    def set_lr(self, factor: float) -> None:
        _set_lr(self.run.opt, factor, self.cfg)

    def forward(self, xs: list[torch.Tensor]) -> list[torch.Tensor]:
        return [self.fwd(xs[0])]

    def backward(self, losses: list[torch.Tensor]) -> None:
        self.run.opt.zero_grad(set_to_none=True)
        losses[0].backward()

    def clip(self, max_norm: float) -> list[torch.Tensor]:
        params = [p for p in self.run.model.parameters() if p.grad is not None]
        return [torch.nn.utils.clip_grad_norm_(params, max_norm)]

    def step(self) -> None:
        self.run.opt.step()

    def sync(self, runs, optimizer: bool = False) -> None:
        """Nothing to write back: the model and optimizer are the run's own."""

    def remove(self, runs) -> None:
        """The run's model is its own: nothing to unstack."""


class StackedEngine:
    """N runs of one architecture, stacked and trained under ``vmap`` (module docstring)."""

    def __init__(self, runs: list[TrainRun], cfg: TrainConfig, device: torch.device):
        from torch.func import functional_call, stack_module_state, vmap

        self.runs, self.cfg = list(runs), cfg
        models = [r.model for r in runs]
        self.params, self.buffers = stack_module_state(models)
        # the structure functional_call runs (its own tensors are replaced by the stacked
        # slices); a real copy rather than one on the meta device, since layers may keep
        # tensors that are neither parameters nor buffers
        self.base = copy.deepcopy(models[0])
        self.base.train()
        self._build_optimizer(
            [{name: r.opt.state.get(p) for name, p in r.model.named_parameters()}
             for r in runs],
            [g["lr"] for g in runs[0].opt.param_groups])

        def one(params, buffers, x):
            return functional_call(self.base, (params, buffers), (x,))

        fwd = vmap(one, randomness="error")
        options, self.graphs = _compile_options(cfg, device)
        self.fwd = fwd if options is None else torch.compile(fwd, **options)

    # ----------------------------------------------------------------- the optimizer

    def _build_optimizer(self, states: list[dict], lrs: list[float]) -> None:
        """AdamW over the stacked parameters, in the groups a run's optimizer has (by
        parameter name), with the runs' optimizer ``states`` (one dict name -> state per
        run, None where a parameter has none yet) stacked."""
        names = {id(p): n for n, p in self.base.named_parameters()}
        groups = _param_groups(self.base, self.cfg)
        for g, lr in zip(groups, lrs):
            g["params"] = [self.params[names[id(p)]] for p in g["params"]]
            g["lr"] = lr
        self.opt = adamw(groups, self.cfg)
        for name, p in self.params.items():
            per_run = [s[name] for s in states]
            if per_run[0] is None:
                continue
            steps = {float(s["step"]) for s in per_run}
            if len(steps) != 1:
                raise ValueError(f"train_group: the runs' optimizer states of {name!r} are at "
                                 f"different steps {sorted(steps)}; runs are stacked only "
                                 f"at the same step")
            self.opt.state[p] = {
                k: (v.clone() if k == "step" else torch.stack([s[k] for s in per_run]))
                for k, v in per_run[0].items()}

    def set_lr(self, factor: float) -> None:
        _set_lr(self.opt, factor, self.cfg)

    # ------------------------------------------------------------------------ a step

    def forward(self, xs: list[torch.Tensor]) -> list[torch.Tensor]:
        try:
            out = self.fwd(self.params, self.buffers, torch.stack(xs))
        except RuntimeError as exc:
            if "randomness" not in str(exc):
                raise
            raise ValueError(
                "train_group: the model draws random numbers in its forward pass (dropout?): "
                "stacked under vmap its runs could not draw the numbers each draws alone; "
                "train them one at a time with train(), or without dropout") from exc
        return list(out.unbind(0))

    def backward(self, losses: list[torch.Tensor]) -> None:
        self.opt.zero_grad(set_to_none=True)
        torch.stack(losses).sum().backward()

    def clip(self, max_norm: float) -> list[torch.Tensor]:
        """Per run: the norm of its gradients (before clipping), its gradients scaled by
        ``min(1, max_norm / (norm + 1e-6))``."""
        n = len(self.runs)
        grads = [p.grad for p in self.params.values() if p.grad is not None]
        if not grads:
            return [torch.zeros(())] * n
        per_param = torch.stack([torch.linalg.vector_norm(g.reshape(n, -1), 2, dim=1)
                                 for g in grads])
        total = torch.linalg.vector_norm(per_param, 2, dim=0)
        coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype).reshape(n, *([1] * (g.ndim - 1))))
        return list(total.unbind(0))

    def step(self) -> None:
        self.opt.step()

    # -------------------------------------------------------- runs leaving the stack

    def sync(self, runs, optimizer: bool = False) -> None:
        """Write the stacked state of ``runs`` into their own models: parameters, buffers
        and gradients (what a callback or an evaluation of a run trained alone sees), and
        with ``optimizer`` into their own optimizers (AdamW's moments and step, the groups'
        learning rates: what a checkpoint holds)."""
        with torch.no_grad():
            for run in runs:
                i = self.runs.index(run)
                for name, p in run.model.named_parameters():
                    stacked = self.params[name]
                    p.copy_(stacked[i])
                    p.grad = None if stacked.grad is None else stacked.grad[i].clone()
                    st = self.opt.state.get(stacked)
                    if optimizer and st:
                        run.opt.state[p] = {k: (v.clone() if k == "step" else v[i].clone())
                                            for k, v in st.items()}
                for name, b in run.model.named_buffers():
                    b.copy_(self.buffers[name][i])
                if optimizer:
                    for mine, group in zip(run.opt.param_groups, self.opt.param_groups):
                        mine["lr"] = group["lr"]

    def remove(self, runs) -> None:
        """``runs`` leave the stack (their state written back first); the others are
        restacked with their gradients and optimizer state."""
        runs = list(runs)
        if not runs:
            return
        self.sync(runs, optimizer=True)
        keep = [i for i, r in enumerate(self.runs) if r not in runs]
        self.runs = [self.runs[i] for i in keep]
        if not keep:
            return
        index = torch.tensor(keep)
        old_state = {name: self.opt.state.get(p) for name, p in self.params.items()}
        lrs = [g["lr"] for g in self.opt.param_groups]
        params = {}
        for name, p in self.params.items():
            q = p.detach()[index].clone().requires_grad_(p.requires_grad)
            if p.grad is not None:
                q.grad = p.grad[index].clone()
            params[name] = q
        self.params = params
        self.buffers = {name: b[index].clone() for name, b in self.buffers.items()}
        states = [{name: (None if st is None else
                          {k: (v if k == "step" else v[j]) for k, v in st.items()})
                   for name, st in old_state.items()} for j in range(len(keep))]
        self._build_optimizer(states, lrs)


def make_engine(runs: list[TrainRun], cfg: TrainConfig, device: torch.device):
    """:class:`SingleEngine` for one run, :class:`StackedEngine` for several."""
    if len(runs) == 1:
        return SingleEngine(runs[0], cfg, device)
    return StackedEngine(runs, cfg, device)


def architecture(model: nn.Module) -> tuple:
    """What runs must share to be stacked: the model's class and the names, shapes and
    dtypes of its parameters and buffers."""
    return (type(model).__qualname__,
            tuple((n, tuple(p.shape), p.dtype, p.requires_grad)
                  for n, p in model.named_parameters()),
            tuple((n, tuple(b.shape), b.dtype) for n, b in model.named_buffers()))
