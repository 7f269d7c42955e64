"""``lds-toolkit report --compare DIR_A DIR_B``: what differs between two sets of runs.

A rerun on another machine gives numbers that differ by round-off (the numpy experiments) or
by a training path (torch's kernels follow the CPU's instruction set); a changed library, a
changed module or another seed gives numbers that differ for real. :func:`compare_runs`
reads ``NAME/summary.json`` and ``NAME/run.json`` under both output roots and, per
experiment present in either, reports

* the **environment** differences (``run.json``'s ``environment``,
  :mod:`~lds_toolkit.experiments.runner.environment`: CPU model and flags, library versions,
  BLAS, threads, torch's flags) and whether the code version differs, naming the modules and
  libraries whose digests or versions differ (``code_version_covers``,
  :func:`~lds_toolkit.experiments.store.version.code_version_covers`);
* the config entries that differ (another scale, seed or ``--set``);
* for **every summary quantity** (a number, or a list of numbers, at a path of the summary;
  the config left out) its largest relative difference ``|a − b| / max(|a|, |b|)``, the
  values where it is largest, and quantities present in only one run or of another shape;
* every claim whose **verdict** differs (:func:`~.verdicts.build_report` of both roots).

A quantity within :data:`RTOL` relative or :data:`ATOL` absolute is round-off
(:attr:`QuantityDiff.roundoff`); an experiment whose quantities all are is labelled so.
"""

from __future__ import annotations

import json
import math
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base import list_experiments
from ..claims import format_value
from ..store.outputs import RUN_INFO_MAX_BYTES, SUMMARY_MAX_BYTES
from .verdicts import _read_json, build_report

#: Round-off: a quantity whose entries all agree within RTOL relative or ATOL absolute.
#: Measured between an AMD EPYC and an Intel Xeon (same library versions): the numpy
#: experiments' quantities differ by 1e-16 to 1.1e-6 relative (the largest: the best
#: predictor in hindsight, an iterative solve), and quantities that are themselves round-off
#: (Algorithm 2's relative regret excess, ~1e-10) by up to 4e-4 relative, 1e-15 absolute.
RTOL, ATOL = 1e-5, 1e-9


@dataclass(frozen=True)
class QuantityDiff:
    """One summary quantity compared: ``rel`` its largest relative difference over its
    entries (0: identical; ``inf``: a finite value against a non-finite one), ``a``/``b`` the
    entries where it is largest, ``kind`` ``"numbers"``, ``"other"`` (strings, booleans:
    ``rel`` 0 or inf), ``"shape"`` (lists of other lengths), ``"only in A"``/``"only in B"``."""

    path: str
    rel: float
    a: Any = None
    b: Any = None
    kind: str = "numbers"
    abs: float = 0.0

    @property
    def roundoff(self) -> bool:
        """Equal, or different within :data:`RTOL` relative or :data:`ATOL` absolute."""
        return self.kind in ("numbers", "other") and (self.rel <= RTOL or self.abs <= ATOL)


@dataclass
class ExperimentComparison:
    """Everything :func:`compare_runs` found for one experiment."""

    name: str
    present: str  # "both", "only in A", "only in B"
    environment: list[tuple[str, Any, Any]] = field(default_factory=list)
    code_versions: tuple[Any, Any] = (None, None)
    code_differs: list[str] = field(default_factory=list)
    config: list[tuple[str, Any, Any]] = field(default_factory=list)
    quantities: list[QuantityDiff] = field(default_factory=list)
    verdicts: list[tuple[str, str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def differing(self) -> list[QuantityDiff]:
        """The quantities that differ, largest relative difference first."""
        out = [q for q in self.quantities if q.rel != 0 or q.kind not in ("numbers", "other")]
        return sorted(out, key=lambda q: (-q.rel if not math.isnan(q.rel) else -math.inf,
                                          q.path))

    @property
    def label(self) -> str:
        """``identical``, ``round-off`` (every quantity within RTOL/ATOL) or ``differs``."""
        if not self.quantities or self.problems:
            return "not compared"
        diff = self.differing
        if not diff:
            return "identical"
        return "round-off" if all(q.roundoff for q in diff) else "differs"

    def to_dict(self) -> dict[str, Any]:
        return {"experiment": self.name, "present": self.present, "label": self.label,
                "environment": [list(e) for e in self.environment],
                "code_versions": list(self.code_versions), "code_differs": self.code_differs,
                "config": [list(c) for c in self.config],
                "quantities": [{"path": q.path, "kind": q.kind,
                                "relative_difference": _json_number(q.rel),
                                "absolute_difference": _json_number(q.abs),
                                "a": q.a, "b": q.b} for q in self.quantities],
                "verdicts": [{"claim": c, "a": a, "b": b} for c, a, b in self.verdicts],
                "problems": self.problems}


def _json_number(x: float):
    return x if math.isfinite(x) else str(x)


# ------------------------------------------------------------------------------ walking


def _is_number(x) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _numeric_list(x) -> bool:
    """A list (possibly nested) of numbers and None: one quantity."""
    if not isinstance(x, list):
        return False
    return all(_is_number(v) or v is None or _numeric_list(v) for v in x)


def quantities(node, path: str = "") -> dict[str, Any]:
    """The quantities of a summary: ``{path: value}`` for every number, numeric list, string,
    boolean or None reached through dicts and lists of dicts (``path`` joined by ``/``)."""
    out: dict[str, Any] = {}
    if isinstance(node, dict):
        for k, v in node.items():
            out.update(quantities(v, f"{path}/{k}" if path else str(k)))
    elif isinstance(node, list) and not _numeric_list(node):
        for i, v in enumerate(node):
            out.update(quantities(v, f"{path}/{i}" if path else str(i)))
    else:
        out[path] = node
    return out


def _flat(x) -> list:
    if isinstance(x, list):
        return [v for item in x for v in _flat(item)]
    return [x]


def _shape(x):
    return [_shape(v) for v in x] if isinstance(x, list) else None


def _entry_diff(a, b) -> tuple[float, float]:
    """``(relative, absolute)`` difference of two entries (numbers or None)."""
    if a is None or b is None:
        return (0.0, 0.0) if a is b else (math.inf, math.inf)
    fa, fb = float(a), float(b)
    if fa == fb or (math.isnan(fa) and math.isnan(fb)):
        return 0.0, 0.0
    if not (math.isfinite(fa) and math.isfinite(fb)):
        return math.inf, math.inf
    d = abs(fa - fb)
    return d / max(abs(fa), abs(fb)), d


def diff_quantity(path: str, a, b) -> QuantityDiff:
    """The largest relative difference between two values of one quantity."""
    numeric = (_is_number(a) or _numeric_list(a)) and (_is_number(b) or _numeric_list(b))
    if not numeric or a is None or b is None:
        return QuantityDiff(path, 0.0 if a == b else math.inf, a, b, "other",
                            0.0 if a == b else math.inf)
    if _shape(a) != _shape(b):
        return QuantityDiff(path, math.inf, _short(a), _short(b), "shape", math.inf)
    worst = QuantityDiff(path, 0.0, _short(a), _short(b))
    for x, y in zip(_flat(a), _flat(b)):
        rel, d = _entry_diff(x, y)
        if rel > worst.rel or (rel == worst.rel and d > worst.abs):
            worst = QuantityDiff(path, rel, x, y, "numbers", d)
    return worst


def _short(x):
    return x if not isinstance(x, list) else f"list of {len(_flat(x))}"


# ------------------------------------------------------------------------------ comparing


def _flatten_environment(env: Any, path: str = "") -> dict[str, Any]:
    """Environment entries by dotted path; lists of strings (CPU flags) kept whole."""
    if isinstance(env, dict):
        out: dict[str, Any] = {}
        for k, v in env.items():
            out.update(_flatten_environment(v, f"{path}.{k}" if path else str(k)))
        return out
    if isinstance(env, list) and env and all(isinstance(v, dict) for v in env):
        out = {}
        for i, v in enumerate(env):
            out.update(_flatten_environment(v, f"{path}[{i}]"))
        return out
    return {path: env}


def environment_diff(run_a: dict | None, run_b: dict | None) -> list[tuple[str, Any, Any]]:
    """``(entry, A's, B's)`` for every environment entry that differs (a list of flags as the
    flags only A has and only B has); one entry ``("environment", ...)`` when a run.json
    records none (a run made before run.json recorded it)."""
    env_a = (run_a or {}).get("environment")
    env_b = (run_b or {}).get("environment")
    if env_a is None or env_b is None:
        if env_a is None and env_b is None:
            return [("environment", "not recorded", "not recorded")]
        return [("environment", "recorded" if env_a else "not recorded",
                 "recorded" if env_b else "not recorded")]
    fa, fb = _flatten_environment(env_a), _flatten_environment(env_b)
    out: list[tuple[str, Any, Any]] = []
    for key in sorted(set(fa) | set(fb)):
        va, vb = fa.get(key), fb.get(key)
        if va == vb:
            continue
        if isinstance(va, list) and isinstance(vb, list):
            only_a, only_b = sorted(set(va) - set(vb)), sorted(set(vb) - set(va))
            out.append((key, f"{len(only_a)} only here: " + " ".join(only_a),
                        f"{len(only_b)} only here: " + " ".join(only_b)))
        else:
            out.append((key, va, vb))
    return out


def _code_differs(run_a: dict, run_b: dict) -> list[str]:
    """Modules whose source digests and libraries whose versions differ between the runs'
    ``code_version_covers`` (empty when either run does not record it)."""
    ca, cb = run_a.get("code_version_covers"), run_b.get("code_version_covers")
    if not isinstance(ca, dict) or not isinstance(cb, dict):
        return []
    out = []
    for part in ("modules", "libraries"):
        a, b = ca.get(part) or {}, cb.get(part) or {}
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                out.append(f"{key} ({a.get(key, 'absent')} -> {b.get(key, 'absent')})")
    return out


def compare_experiment(name: str, dir_a: Path, dir_b: Path, verdicts_a: dict,
                       verdicts_b: dict) -> ExperimentComparison:
    """:class:`ExperimentComparison` of experiment ``name`` under two output roots."""
    sa, why_a = _read_json(dir_a / name / "summary.json", SUMMARY_MAX_BYTES)
    sb, why_b = _read_json(dir_b / name / "summary.json", SUMMARY_MAX_BYTES)
    ra, _ = _read_json(dir_a / name / "run.json", RUN_INFO_MAX_BYTES)
    rb, _ = _read_json(dir_b / name / "run.json", RUN_INFO_MAX_BYTES)
    present = "both" if sa and sb else ("only in A" if sa else "only in B")
    comp = ExperimentComparison(name, present)
    comp.problems = [f"{side}: {why}" for side, why in (("A", why_a), ("B", why_b)) if why]
    if present != "both":
        return comp
    comp.environment = environment_diff(ra, rb)
    comp.code_versions = ((ra or {}).get("code_version"), (rb or {}).get("code_version"))
    comp.code_differs = _code_differs(ra or {}, rb or {})
    qa = quantities(sa.get("config", {}), "config")
    qb = quantities(sb.get("config", {}), "config")
    comp.config = [(k, qa.get(k, "(absent)"), qb.get(k, "(absent)"))
                   for k in sorted(set(qa) | set(qb)) if qa.get(k) != qb.get(k)]
    qa = quantities({k: v for k, v in sa.items() if k != "config"})
    qb = quantities({k: v for k, v in sb.items() if k != "config"})
    for key in sorted(set(qa) | set(qb)):
        if key not in qb:
            comp.quantities.append(QuantityDiff(key, math.inf, _short(qa[key]), None,
                                                "only in A", math.inf))
        elif key not in qa:
            comp.quantities.append(QuantityDiff(key, math.inf, None, _short(qb[key]),
                                                "only in B", math.inf))
        else:
            comp.quantities.append(diff_quantity(key, qa[key], qb[key]))
    for claim in verdicts_a.keys() | verdicts_b.keys():
        va, vb = verdicts_a.get(claim, "absent"), verdicts_b.get(claim, "absent")
        if va != vb:
            comp.verdicts.append((claim, va, vb))
    comp.verdicts.sort()
    return comp


def compare_runs(dir_a: str | Path, dir_b: str | Path,
                 names: list[str] | None = None) -> list[ExperimentComparison]:
    """One :class:`ExperimentComparison` per registered experiment (or per one of ``names``)
    that has a ``summary.json`` under either root, in registry order."""
    dir_a, dir_b = Path(dir_a), Path(dir_b)
    verdicts: list[dict[str, dict[str, str]]] = []
    for root in (dir_a, dir_b):
        by: dict[str, dict[str, str]] = {}
        for row in build_report(root, names):
            by.setdefault(row.experiment, {})[row.result.claim.id] = row.status
        verdicts.append(by)
    out = []
    for name in list_experiments():
        if names is not None and name not in names:
            continue
        if not ((dir_a / name / "summary.json").exists()
                or (dir_b / name / "summary.json").exists()):
            continue
        out.append(compare_experiment(name, dir_a, dir_b, verdicts[0].get(name, {}),
                                      verdicts[1].get(name, {})))
    return out


# ------------------------------------------------------------------------------ rendering


def _value(x) -> str:
    return x if isinstance(x, str) else format_value(x)


def _rel(q: QuantityDiff) -> str:
    if q.kind in ("only in A", "only in B", "shape"):
        return q.kind
    return "changed" if q.kind == "other" else f"{q.rel:.1e}"


def to_text(comparisons: list[ExperimentComparison], dir_a: str, dir_b: str,
            width: int = 100) -> str:
    """The comparisons for people, at most ``width`` columns: per experiment its label, the
    environment and code differences, the config entries that differ, every quantity that
    differs (largest relative difference first, with A's and B's values there) and every
    verdict that changed."""
    def wrap(text: str, first: str = "  ", rest: str = "      ") -> list[str]:
        return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest,
                             break_on_hyphens=False, break_long_words=True) or [first]

    out = wrap(f"A: {dir_a}", "", "   ") + wrap(f"B: {dir_b}", "", "   ")
    for c in comparisons:
        out.append("")
        if c.present != "both" or c.problems:
            out.extend(wrap(f"{c.name}: {c.present}" + (f" ({'; '.join(c.problems)})"
                                                       if c.problems else ""), ""))
            continue
        diff = c.differing
        out.extend(wrap(f"{c.name}: {c.label} ({len(c.quantities)} quantities, "
                        f"{len(diff)} differ; {len(c.verdicts)} verdicts changed)", ""))
        for key, a, b in c.environment:
            if key == "environment":  # run.json of a run made before it recorded one
                out.extend(wrap(f"environment: {a} in A's run.json, {b} in B's"))
            else:
                out.extend(wrap(f"environment {key}: {_value(a)} -> {_value(b)}"))
        if c.code_versions[0] != c.code_versions[1]:
            what = "; ".join(c.code_differs) if c.code_differs else "not recorded which"
            out.extend(wrap(f"code version {c.code_versions[0]} -> {c.code_versions[1]}: "
                            f"{what}"))
        for key, a, b in c.config:
            out.extend(wrap(f"config {key}: {_value(a)} -> {_value(b)}"))
        for q in diff:
            where = "" if q.kind != "numbers" else f" ({_value(q.a)} -> {_value(q.b)})"
            out.extend(wrap(f"{_rel(q):>9}  {q.path}{where}"))
        for claim, a, b in c.verdicts:
            out.extend(wrap(f"verdict [{claim}]: {a} -> {b}"))
    labels = [c.label for c in comparisons]
    out.append("")
    counts = {lab: labels.count(lab) for lab in dict.fromkeys(labels)}
    changed = sum(len(c.verdicts) for c in comparisons)
    out.extend(wrap(f"{len(comparisons)} experiments: "
                    + ", ".join(f"{n} {lab}" for lab, n in counts.items())
                    + f"; {changed} verdicts changed", "", "    "))
    return "\n".join(out) + "\n"


def to_json(comparisons: list[ExperimentComparison]) -> str:
    """The comparisons as JSON (a list of :meth:`ExperimentComparison.to_dict`)."""
    return json.dumps([c.to_dict() for c in comparisons], indent=1, default=str) + "\n"
