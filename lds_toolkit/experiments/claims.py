"""Paper claims as data: what each experiment tests, and how a ``summary.json`` is judged.

An experiment lists its claims in its ``claims`` attribute. A :class:`Claim` names a
quantity of the experiment's ``summary.json`` by a path, a comparison and a threshold, and
the scales at which the claim is expected to hold. The same declarations drive the claim
tests (``tests/experiments/test_claims.py`` asserts every claim at the scales it is declared
for), ``lds-toolkit report`` and the reproduction table of the docs: one source of truth for
"what reproduces".

Paths
-----
``"per_q/0.5/final_loss_ratio_to_full"`` walks the summary's nested dicts (and list indices)
by ``/``; a ``*`` component maps over every entry of a dict or list, in order, and gives a
list (``"per_q/*/final_loss_ratio_to_full"``: one ratio per q).

Comparisons (``op``)
--------------------
``">="``, ``">"``, ``"<="``, ``"<"``
    A scalar against ``threshold``; for a list, every entry must satisfy it.
``"between"``
    ``threshold = (low, high)``, inclusive, for a scalar or every entry of a list.
``"nonincreasing"``, ``"nondecreasing"``
    A list, consecutive entries compared with a relative slack ``threshold`` (``0``: strict
    order; ``0.05``: an entry may exceed its predecessor by 5 %).
``"is"``
    Equality with ``threshold`` (booleans, strings, integers).

Claims on the per-seed distribution (``per_seed=True``)
------------------------------------------------------
A mean over seeds can be decided by one lucky seed. With ``per_seed=True`` the ``quantity``
path gives one entry per seed (a number, or a list such as the ratios by q) and the claim is
judged on their distribution:

* the **median** over seeds (element-wise for lists) must satisfy the comparison, and
* the **share** of seeds whose own entry satisfies it must be at least ``min_share``;

the result also carries a **bootstrap 95 % interval** of the median (percentile bootstrap,
:data:`BOOTSTRAP_RESAMPLES` resamples from a fixed seed, so the same numbers always give the
same interval) and how many seeds hold, which the report and the docs quote as
``median [low, high], k of n seeds``. A seed whose entry is missing or not finite counts as
not holding and is left out of the median.

Margin
------
Every judged claim also carries a **margin** (:mod:`lds_toolkit.experiments.margins`): how
far the verdict is from flipping, in units of the spread over seeds (per-seed claims: judged
again on bootstrap resamples of the seeds; others with per-seed values: distance to the
threshold over their standard deviation). A claim that holds with a margin below one spread
is *fragile* (:attr:`ClaimResult.fragile`): another set of seeds may well break it.

A claim states a paper's claim at its true size. It never bounds a model's quality from
above to make a failure pass: a claim the toolkit does not reproduce at some scale is not
declared for that scale, and the report shows it as failing where it was measured.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .margins import FRAGILE_BELOW, MARGIN_CAP, per_seed_margin, resample_indices, spread_margin
from .numbers import format_number
from .scales import SCALES

OPS = (">=", ">", "<=", "<", "between", "nonincreasing", "nondecreasing", "is")
#: Verdicts of :func:`evaluate_claim`.
HOLDS, FAILS, NOT_RUN = "holds", "fails", "not run"
#: Resamples of the percentile bootstrap of a per-seed median (fixed seed: deterministic).
BOOTSTRAP_RESAMPLES = 4000


@dataclass(frozen=True)
class Claim:
    """One paper claim tested by an experiment.

    Parameters
    ----------
    id : str
        Short identifier, unique within the experiment (``"q1/2-ratio"``).
    paper : str
        Which paper (``"length generalization"``, ``"S4++"``, ``"Focus"``, ``"LaS"``).
    where : str
        Figure, table or theorem (``"Fig. 2"``).
    statement : str
        The claim in one line, as a reader of the paper would say it.
    quantity : str
        Path to the number(s) in ``summary.json`` (see the module docstring).
    op : str
        Comparison, one of :data:`OPS`.
    threshold : float, tuple or None
        What the quantity is compared with.
    scales : tuple of str
        Scales at which the claim is expected to hold (and is asserted by the tests). Empty:
        the paper's claim is reported wherever it was measured but not expected to hold at
        any scale the toolkit runs; ``note`` must then say why (a measured cause).
    spread : str, optional
        Path to the per-seed values of the quantity, shown as a min–max spread.
    note : str
        What the threshold means or why it has this size.
    per_seed : bool
        ``quantity`` gives one entry per seed and the claim is judged on their distribution:
        the median satisfies the comparison and at least ``min_share`` of the seeds do (see
        the module docstring). ``spread`` defaults to the same values.
    min_share : float
        Least share of seeds (in (0, 1]) on which the comparison must hold; only with
        ``per_seed``.
    records_paper_error : bool
        The statement is one the paper makes and gets wrong (a printed example that does
        not satisfy its own equation): the claim is expected at no scale (``scales=()``) and
        ``lds-toolkit report`` shows its failure as "paper error confirmed" rather than as a
        failure to reproduce. ``note`` says what the error is.
    override_harmless : tuple of str
        Config keys whose ``--set`` override leaves this claim's meaning intact (e.g. a
        sampling detail it does not depend on); ``("*",)``: the claim depends on no config
        entry (a check of printed numbers). A run with any other override (or another
        number of seeds) is judged "modified config" by ``lds-toolkit report`` instead of
        holds/fails.
    """

    id: str
    paper: str
    where: str
    statement: str
    quantity: str
    op: str
    threshold: Any = None
    scales: tuple[str, ...] = ("quick", "medium", "paper")
    spread: str | None = None
    note: str = ""
    per_seed: bool = False
    min_share: float = 0.5
    records_paper_error: bool = False
    override_harmless: tuple[str, ...] = ()

    def __post_init__(self):
        if self.op not in OPS:
            raise ValueError(f"Claim {self.id!r}: op must be one of {list(OPS)}, "
                             f"got {self.op!r}")
        bad = [s for s in self.scales if s not in SCALES]
        if bad:
            raise ValueError(f"Claim {self.id!r}: scales must be among {list(SCALES)}, "
                             f"got {bad}")
        if not self.scales and not self.note:
            raise ValueError(f"Claim {self.id!r}: a claim expected at no scale needs a note "
                             "saying why")
        if self.records_paper_error and (self.scales or not self.note):
            raise ValueError(f"Claim {self.id!r}: a claim recording a paper's error is "
                             "expected at no scale (scales=()) and needs a note saying what "
                             f"the error is, got scales={self.scales!r}")
        if isinstance(self.override_harmless, str) or not all(
                isinstance(k, str) and k for k in self.override_harmless):
            raise ValueError(f"Claim {self.id!r}: override_harmless must be a tuple of config "
                             f"keys, got {self.override_harmless!r}")
        if self.op == "between" and not (isinstance(self.threshold, Sequence)
                                         and len(self.threshold) == 2):
            raise ValueError(f"Claim {self.id!r}: 'between' needs threshold=(low, high), "
                             f"got {self.threshold!r}")
        if not isinstance(self.per_seed, bool):
            raise TypeError(f"Claim {self.id!r}: per_seed must be True or False, "
                            f"got {self.per_seed!r}")
        if (isinstance(self.min_share, bool) or not isinstance(self.min_share, int | float)
                or not 0 < self.min_share <= 1):
            raise ValueError(f"Claim {self.id!r}: min_share must be a number in (0, 1], "
                             f"got {self.min_share!r}")

    def describe_test(self) -> str:
        """``"quantity op threshold"`` in words, for tables (per-seed claims: ``"median >= 3,
        on >= 75 % of seeds"``)."""
        test = self._describe_comparison()
        if self.per_seed:
            return f"median {test}, on ≥ {100 * self.min_share:.0f} % of seeds"
        return test

    def _describe_comparison(self) -> str:
        if self.op == "between":
            lo, hi = self.threshold
            return f"in [{_fmt(lo)}, {_fmt(hi)}]"
        if self.op in ("nonincreasing", "nondecreasing"):
            slack = f" (slack {_fmt(self.threshold)})" if self.threshold else ""
            return f"{self.op}{slack}"
        if self.op == "is":
            return f"= {_fmt(self.threshold)}"
        return f"{self.op} {_fmt(self.threshold)}"


@dataclass(frozen=True)
class ClaimResult:
    """A claim judged on one ``summary.json``."""

    claim: Claim
    verdict: str
    value: Any = None
    spread: tuple[float, float] | None = None
    scale: str | None = None
    message: str = ""
    extra: dict = field(default_factory=dict)
    interval: Any = None
    share: float | None = None
    n_seeds: int | None = None
    margin: float | None = None

    @property
    def expected(self) -> bool:
        """Whether the claim is declared to hold at the scale of the run."""
        return self.scale in self.claim.scales

    @property
    def fragile(self) -> bool:
        """The claim holds, but by less than one spread over seeds (its :attr:`margin`
        below :data:`~lds_toolkit.experiments.margins.FRAGILE_BELOW`)."""
        return self.verdict == HOLDS and self.margin is not None and self.margin < FRAGILE_BELOW

    def to_dict(self) -> dict[str, Any]:
        c = self.claim
        return {"id": c.id, "paper": c.paper, "where": c.where, "statement": c.statement,
                "quantity": c.quantity, "test": c.describe_test(), "scales": list(c.scales),
                "verdict": self.verdict, "value": self.value,
                "spread": None if self.spread is None else list(self.spread),
                "scale": self.scale, "expected_at_scale": self.expected,
                "message": self.message, "per_seed": c.per_seed,
                "interval": _plain(self.interval), "share": self.share,
                "n_seeds": self.n_seeds, "margin": self.margin, "fragile": self.fragile}

    def describe_margin(self) -> str:
        """``"margin 2.1"`` (``"margin ≥ 3.5"`` at the cap, ``"fragile: margin 0.4"`` below
        one spread), or ``""`` when the claim has none."""
        if self.margin is None:
            return ""
        m = self.margin
        text = f"margin ≥ {MARGIN_CAP:g}" if m >= MARGIN_CAP else (
            f"margin ≤ {-MARGIN_CAP:g}" if m <= -MARGIN_CAP else f"margin {m:.1f}")
        return f"fragile: {text}" if self.fragile else text

    def describe_value(self) -> str:
        """Our number, short: ``"4.7"``, or for a per-seed claim
        ``"median 4.7 [3.1, 8.2], 14 of 16 seeds"``."""
        if self.n_seeds is None:
            return format_value(self.value)
        text = f"median {format_value(self.value)}"
        if self.interval is not None:
            lo, hi = self.interval
            text += f" [{format_value(lo)}, {format_value(hi)}]"
        held = round((self.share or 0.0) * self.n_seeds)
        return f"{text}, {held} of {self.n_seeds} seeds"


class PathError(KeyError):
    """A claim's quantity path does not exist in the summary."""


def lookup(summary: Mapping[str, Any], path: str):
    """The value at ``path`` (``/``-separated, ``*`` maps over a level)."""
    parts = [p for p in path.split("/") if p != ""]
    return _walk(summary, parts, path)


def _walk(node, parts, path):
    if not parts:
        return node
    head, rest = parts[0], parts[1:]
    if head == "*":
        if isinstance(node, Mapping):
            return [_walk(v, rest, path) for v in node.values()]
        if isinstance(node, list):
            return [_walk(v, rest, path) for v in node]
        raise PathError(f"{path!r}: '*' needs a dict or list, found {type(node).__name__}")
    if isinstance(node, Mapping):
        if head not in node:
            raise PathError(f"{path!r}: no entry {head!r} (has: {', '.join(map(str, node))})")
        return _walk(node[head], rest, path)
    if isinstance(node, list):
        try:
            return _walk(node[int(head)], rest, path)
        except (ValueError, IndexError):
            raise PathError(f"{path!r}: {head!r} is not an index of a list of "
                            f"{len(node)}") from None
    raise PathError(f"{path!r}: cannot descend into {type(node).__name__} at {head!r}")


def _compare(op: str, value, threshold) -> bool:
    if isinstance(value, list) and op not in ("nonincreasing", "nondecreasing", "is"):
        return bool(value) and all(_compare(op, v, threshold) for v in value)
    if op == "is":
        return value == threshold
    if op in ("nonincreasing", "nondecreasing"):
        if not isinstance(value, list) or len(value) < 2:
            return False
        slack = float(threshold or 0.0)
        pairs = zip(value[:-1], value[1:])
        if op == "nonincreasing":
            return all(b <= a * (1 + slack) if a >= 0 else b <= a * (1 - slack)
                       for a, b in pairs)
        return all(b >= a * (1 - slack) if a >= 0 else b >= a * (1 + slack) for a, b in pairs)
    if value is None or not isinstance(value, int | float) or isinstance(value, bool):
        return False
    if not math.isfinite(value):
        return False
    if op == "between":
        lo, hi = threshold
        return lo <= value <= hi
    return {">=": value >= threshold, ">": value > threshold,
            "<=": value <= threshold, "<": value < threshold}[op]


def evaluate_claim(claim: Claim, summary: Mapping[str, Any] | None) -> ClaimResult:
    """Judge ``claim`` on one experiment's summary (``None``: the experiment did not run)."""
    if summary is None:
        return ClaimResult(claim, NOT_RUN, message="no summary.json")
    scale = summary.get("config", {}).get("scale")
    try:
        value = lookup(summary, claim.quantity)
    except PathError as exc:
        return ClaimResult(claim, NOT_RUN, scale=scale,
                           message=f"quantity missing from this run: {exc}")
    odd = _not_a_number(claim.op, value)
    if odd is not None:  # e.g. "abc" <= 2 would read as a plain failure
        return ClaimResult(claim, NOT_RUN, scale=scale,
                           message=f"unreadable: {claim.quantity} holds {odd}, not a number "
                                   f"(summary.json is not what the experiment writes)")
    if claim.per_seed:
        return _evaluate_per_seed(claim, value, summary, scale)
    spread = margin = None
    if claim.spread is not None:
        try:
            per_seed = lookup(summary, claim.spread)
            vals = [float(v) for v in _flatten(per_seed)]
            if vals:
                spread = (min(vals), max(vals))
                margin = spread_margin(claim.op, claim.threshold, value, vals)
        except (PathError, TypeError, ValueError):
            spread = None
    ok = _compare(claim.op, value, claim.threshold)
    return ClaimResult(claim, HOLDS if ok else FAILS, value=value, spread=spread, scale=scale,
                       margin=margin)


def _evaluate_per_seed(claim: Claim, entries, summary, scale) -> ClaimResult:
    """Judge ``claim`` on the per-seed ``entries`` (see the module docstring)."""
    if not isinstance(entries, list) or not entries:
        return ClaimResult(claim, FAILS, value=entries, scale=scale,
                           message="per-seed quantity is not a non-empty list")
    holds = [_compare(claim.op, e, claim.threshold) for e in entries]
    share = float(np.mean(holds))
    ok_entries = [e for e in entries if _finite_entry(e)]
    median = interval = None
    if ok_entries:
        arr = np.asarray(ok_entries, dtype=float)  # (seeds,) or (seeds, m)
        median = np.median(arr, axis=0)
        interval = bootstrap_median_interval(arr)
        median = median.tolist() if median.ndim else float(median)
    spread = None
    source = entries
    if claim.spread is not None:
        try:
            source = lookup(summary, claim.spread)
        except PathError:
            source = entries
    vals = [float(v) for v in _flatten(source)
            if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)]
    if vals:
        spread = (min(vals), max(vals))
    ok = (median is not None and _compare(claim.op, median, claim.threshold)
          and share >= claim.min_share)
    margin = per_seed_margin(claim.op, claim.threshold, claim.min_share,
                             [e if _finite_entry(e) else None for e in entries], holds)
    return ClaimResult(claim, HOLDS if ok else FAILS, value=median, spread=spread, scale=scale,
                       interval=interval, share=share, n_seeds=len(entries),
                       message=f"holds on {sum(holds)} of {len(entries)} seeds", margin=margin)


def _not_a_number(op: str, value) -> str | None:
    """The first entry of ``value`` that a numeric comparison cannot read (a string, a bool, a
    mapping), described; ``None`` when every entry is a number or null (a NaN stored as null
    fails the claim as NaN does) or the claim compares with ``is``."""
    if op == "is":
        return None
    if isinstance(value, list):
        for v in value:
            odd = _not_a_number(op, v)
            if odd is not None:
                return odd
        return None
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        return None
    return f"the {type(value).__name__} {json.dumps(value)[:40]}"


def _finite_entry(e) -> bool:
    if isinstance(e, list):
        return bool(e) and all(_finite_entry(x) for x in e)
    return (isinstance(e, int | float) and not isinstance(e, bool) and math.isfinite(e))


def bootstrap_median_interval(values, level: float = 0.95,
                              resamples: int = BOOTSTRAP_RESAMPLES):
    """Percentile-bootstrap interval of the median over the first axis of ``values``.

    Resamples the seeds with replacement ``resamples`` times (a generator with a fixed seed:
    the same values always give the same interval) and returns the ``(1 - level) / 2`` and
    ``(1 + level) / 2`` quantiles of the resampled medians: ``(low, high)`` as floats for
    1-D ``values``, as lists (one entry per column) for 2-D ones. One seed gives
    ``(v, v)``.
    """
    arr = np.asarray(values, dtype=float)
    if arr.ndim not in (1, 2) or arr.shape[0] == 0:
        raise ValueError(f"values must be (seeds,) or (seeds, m) with seeds >= 1, "
                         f"got shape {arr.shape}")
    idx = resample_indices(arr.shape[0], resamples)
    meds = np.median(arr[idx], axis=1)  # (resamples,) or (resamples, m)
    a = (1.0 - level) / 2.0
    lo, hi = np.quantile(meds, [a, 1.0 - a], axis=0)
    if arr.ndim == 1:
        return (float(lo), float(hi))
    return (lo.tolist(), hi.tolist())


def _plain(x):
    if isinstance(x, tuple):
        return [_plain(v) for v in x]
    return x


def _flatten(v):
    if isinstance(v, list):
        for x in v:
            yield from _flatten(x)
    else:
        yield v


def _fmt(x) -> str:
    if isinstance(x, float):
        return format_number(x)  # .3g in the house style: 7e3, not 7e+03
    if isinstance(x, list | tuple):
        return "[" + ", ".join(_fmt(v) for v in x) + "]"
    return json.dumps(x) if isinstance(x, str | bool) or x is None else str(x)


def format_value(value) -> str:
    """A claim's number(s), short."""
    return _fmt(value)


def describe_value(result: ClaimResult) -> str:
    """:meth:`ClaimResult.describe_value` (for callers holding only the result)."""
    return result.describe_value()
