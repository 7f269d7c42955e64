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
* the config entries that differ (another scale, seed or ``--set``): with the environment
  and code, the **cause** of the differences;
* for **every summary quantity** (:mod:`.quantity_diff`: a number, a list of numbers or a
  record at a path of the summary; the config left out) its largest relative difference
  ``|a − b| / max(|a|, |b|)``, the values where it is largest, each labelled round-off or
  not, and quantities present in only one run or of another shape;
* every claim whose **verdict** differs (:func:`~.verdicts.build_report` of both roots), and
  whether the change was to be expected (:func:`verdict_expectation`): a claim not declared
  for the run's scale, or one within one spread over seeds of its threshold (its margin,
  :mod:`lds_toolkit.experiments.margins`), may flip with another draw; a claim declared for
  the scale and clear of its threshold by more than that should not.

An experiment whose ``summary.json`` cannot be read (not JSON, not an object, empty) is
listed as unreadable with the reason (:attr:`ExperimentComparison.problems`); a missing or
unreadable ``run.json`` is said (:attr:`ExperimentComparison.notes`: its claims are then not
judged). :mod:`.compare_text` prints a comparison for people (a summary, then the largest
differences) and as JSON.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._safe_files import entry_kind
from ..base import list_experiments
from ..claims import NOT_RUN
from ..margins import FRAGILE_BELOW
from ..store.outputs import RUN_INFO_MAX_BYTES, SUMMARY_MAX_BYTES
from .compare_text import to_json, to_text
from .quantity_diff import (
    ATOL,
    RTOL,
    STRUCTURAL,
    QuantityDiff,
    diff_quantity,
    quantities,
    readable_names,
    short,
    where_text,
)
from .verdicts import MODIFIED, ReportRow, _read_json, build_report

__all__ = ["ATOL", "RTOL", "ExperimentComparison", "QuantityDiff", "compare_experiment",
           "compare_runs", "diff_quantity", "quantities", "to_json", "to_text",
           "verdict_expectation"]


@dataclass
class ExperimentComparison:
    """Everything :func:`compare_runs` found for one experiment.

    ``verdicts``: ``(claim, A's status, B's status)`` for each claim whose verdict changed;
    ``verdict_notes[claim]``: ``(expected, why)`` for each of them (:func:`verdict_expectation`;
    ``expected`` None where it cannot be said: a claim not judged on one side);
    ``verdicts_same``: how many claims kept their verdict; ``problems``: why a summary could
    not be read (the experiment is then not compared); ``notes``: what else limits the
    comparison (a missing ``run.json``)."""

    name: str
    present: str  # "both", "only in A", "only in B"
    environment: list[tuple[str, Any, Any]] = field(default_factory=list)
    code_versions: tuple[Any, Any] = (None, None)
    code_differs: list[str] = field(default_factory=list)
    config: list[tuple[str, Any, Any]] = field(default_factory=list)
    quantities: list[QuantityDiff] = field(default_factory=list)
    verdicts: list[tuple[str, str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    verdict_notes: dict[str, tuple[bool | None, str]] = field(default_factory=dict)
    verdicts_same: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def differing(self) -> list[QuantityDiff]:
        """The quantities that differ: those beyond round-off first, each group largest
        relative difference first."""
        out = [q for q in self.quantities if q.rel != 0 or q.kind in STRUCTURAL]
        return sorted(out, key=lambda q: (q.roundoff, -q.rel if not math.isnan(q.rel)
                                          else -math.inf, -q.abs, q.path))

    @property
    def label(self) -> str:
        """``unreadable`` (a summary that cannot be read), ``only in A``/``only in B``,
        ``identical``, ``round-off`` (every quantity within RTOL/ATOL) or ``differs``."""
        if self.problems:
            return "unreadable"
        if self.present != "both":
            return self.present
        diff = self.differing
        if not diff:
            return "identical"
        return "round-off" if all(q.roundoff for q in diff) else "differs"

    def to_dict(self) -> dict[str, Any]:
        return {"experiment": self.name, "present": self.present, "label": self.label,
                "environment": [list(e) for e in self.environment],
                "code_versions": list(self.code_versions), "code_differs": self.code_differs,
                "config": [list(c) for c in self.config],
                "quantities": [{"path": q.path, "name": q.name or q.path, "kind": q.kind,
                                "relative_difference": q.rel, "absolute_difference": q.abs,
                                "roundoff": q.roundoff, "where": list(q.where),
                                "a": q.a, "b": q.b} for q in self.quantities],
                "verdicts": [{"claim": c, "a": a, "b": b,
                              "expected": self.verdict_notes.get(c, (None, ""))[0],
                              "why": self.verdict_notes.get(c, (None, ""))[1]}
                             for c, a, b in self.verdicts],
                "verdicts_same": self.verdicts_same,
                "problems": self.problems, "notes": self.notes}


# ------------------------------------------------------------------------------ causes


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


# ------------------------------------------------------------------------------ verdicts


def verdict_expectation(row_a: ReportRow, row_b: ReportRow) -> tuple[bool | None, str]:
    """Whether a claim's verdict changing between two runs was to be expected, and why.

    ``(None, why)`` when either run's claim was not judged (not run, not trusted, modified
    config); ``(True, why)`` when the claim is not declared for the scale of either run
    (``Claim.scales``: it is not meant to hold there), or its margin on either run is below
    :data:`~lds_toolkit.experiments.margins.FRAGILE_BELOW` in size (within one spread over
    seeds of its threshold: another draw may flip it); ``(False, why)`` otherwise: declared
    for the scale and clear of its threshold on both runs, it should not flip.
    """
    for side, row in (("A", row_a), ("B", row_b)):
        if row.status == NOT_RUN:
            return None, f"not judged in {side}: {row.result.message or 'not run'}"
        if row.status == MODIFIED:
            return None, f"not judged in {side}: modified config"
    ra, rb = row_a.result, row_b.result
    for r in (ra, rb):
        if not r.expected:
            return True, f"expected: not declared for the {r.scale} scale"
    margins = [r.margin for r in (ra, rb)]
    shown = ", ".join("none" if m is None else f"{m:.1f}" for m in margins)
    if any(m is not None and abs(m) < FRAGILE_BELOW for m in margins):
        return True, f"expected: within one spread over seeds (margins {shown})"
    if all(m is None for m in margins):
        return True, "expected: a single draw, no spread over seeds to judge it by"
    return False, (f"NOT expected: declared for the {ra.scale} scale, margins {shown} "
                   "(beyond one spread over seeds)")


def _status(row) -> str:
    return row.status if isinstance(row, ReportRow) else str(row)


# ------------------------------------------------------------------------------ comparing


def _summary(root: Path, name: str) -> tuple[dict | None, str]:
    """``(summary, "")``, ``(None, "")`` when absent, ``(None, why)`` when unreadable."""
    kind = entry_kind(root / name)
    if kind not in (None, "a directory"):
        return None, f"{root / name} is {kind}, not a directory of results (not followed)"
    value, why = _read_json(root / name / "summary.json", SUMMARY_MAX_BYTES)
    if value is not None and not value:
        return None, "summary.json holds an empty object ({}), no numbers"
    return value, why


def _run_note(root: Path, name: str, side: str) -> tuple[dict | None, str]:
    run, why = _read_json(root / name / "run.json", RUN_INFO_MAX_BYTES)
    if why:
        return None, f"{side}: run.json unreadable ({why}): its claims are not judged"
    if run is None:
        return None, (f"{side}: no run.json (the run did not finish writing its outputs): "
                      "its claims are not judged, its environment and code are unknown")
    return run, ""


def _config_entries(node, path: str) -> dict[str, Any]:
    """A config's entries by ``/``-joined path, a list of scalars (``models``) kept whole."""
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for k, v in node.items():
            out.update(_config_entries(v, f"{path}/{k}"))
        return out
    return {path: node}


def compare_experiment(name: str, dir_a: Path, dir_b: Path,
                       verdicts_a: Mapping[str, ReportRow | str],
                       verdicts_b: Mapping[str, ReportRow | str]) -> ExperimentComparison:
    """:class:`ExperimentComparison` of experiment ``name`` under two output roots
    (``verdicts_a``/``_b``: claim id -> its :class:`ReportRow`, or its status)."""
    dir_a, dir_b = Path(dir_a), Path(dir_b)
    sa, why_a = _summary(dir_a, name)
    sb, why_b = _summary(dir_b, name)
    present = ("both" if (sa is not None or why_a) and (sb is not None or why_b)
               else "only in A" if sa is not None or why_a else "only in B")
    comp = ExperimentComparison(name, present)
    comp.problems = [f"{side}: {why}" for side, why in (("A", why_a), ("B", why_b)) if why]
    if comp.problems or present != "both":
        return comp
    assert sa is not None and sb is not None
    ra, note_a = _run_note(dir_a, name, "A")
    rb, note_b = _run_note(dir_b, name, "B")
    comp.notes = [n for n in (note_a, note_b) if n]
    if ra is not None and rb is not None:  # else the notes say which is missing
        comp.environment = environment_diff(ra, rb)
        comp.code_versions = (ra.get("code_version"), rb.get("code_version"))
        comp.code_differs = _code_differs(ra, rb)
    config_a, config_b = sa.get("config", {}), sb.get("config", {})
    qa, qb = _config_entries(config_a, "config"), _config_entries(config_b, "config")
    comp.config = [(k, qa.get(k, "(absent)"), qb.get(k, "(absent)"))
                   for k in sorted(set(qa) | set(qb)) if qa.get(k) != qb.get(k)]
    body_a = {k: v for k, v in sa.items() if k != "config"}
    body_b = {k: v for k, v in sb.items() if k != "config"}
    seeds = {c.get("seeds") if isinstance(c, dict) else None for c in (config_a, config_b)}
    n_seeds = seeds.pop() if len(seeds) == 1 else None
    n_seeds = n_seeds if isinstance(n_seeds, int) else None
    names = {**readable_names(body_b, n_seeds), **readable_names(body_a, n_seeds)}
    qa, qb = quantities(body_a), quantities(body_b)
    for key in sorted(set(qa) | set(qb)):
        if key not in qb:
            q = QuantityDiff(key, math.inf, short(qa[key]), None, "only in A", math.inf)
        elif key not in qa:
            q = QuantityDiff(key, math.inf, None, short(qb[key]), "only in B", math.inf)
        else:
            q = diff_quantity(key, qa[key], qb[key])
        label = names.get(key, key) + where_text(qa.get(key), q.where, n_seeds)
        comp.quantities.append(QuantityDiff(q.path, q.rel, q.a, q.b, q.kind, q.abs, q.where,
                                            label))
    for claim in sorted(verdicts_a.keys() | verdicts_b.keys()):
        row_a, row_b = verdicts_a.get(claim), verdicts_b.get(claim)
        va = "absent" if row_a is None else _status(row_a)
        vb = "absent" if row_b is None else _status(row_b)
        if va == vb:
            comp.verdicts_same += 1
            continue
        comp.verdicts.append((claim, va, vb))
        if isinstance(row_a, ReportRow) and isinstance(row_b, ReportRow):
            comp.verdict_notes[claim] = verdict_expectation(row_a, row_b)
    return comp


def experiment_dirs(root: str | Path, names: list[str] | None = None) -> list[str]:
    """The registered experiments (or those of ``names``) that have an entry under
    ``root``."""
    root = Path(root)
    return [n for n in list_experiments() if (names is None or n in names)
            and entry_kind(root / n) is not None]


def check_compare_root(root: str | Path, what: str = "root") -> None:
    """Raise ``ValueError`` unless ``root`` is an output root holding at least one
    experiment's directory: a path that is not a directory, the directory of one
    experiment's run (``summary.json`` or ``run.json`` directly inside) and a directory with
    no experiment's results are each refused, saying which."""
    path = Path(root)
    if not str(root) or not path.is_dir():
        raise ValueError(f"{what} {str(root)!r} is not a directory of results")
    if (path / "summary.json").exists() or (path / "run.json").exists():
        raise ValueError(f"{what} {str(root)!r} is the directory of one experiment's run (it "
                         f"holds summary.json or run.json); give the output root above it, "
                         f"{str(path.resolve().parent)!r}")
    if not experiment_dirs(path):
        raise ValueError(f"{what} {str(root)!r} holds no experiment's results (no NAME/ "
                         "directory of a registered experiment; `lds-toolkit list` names "
                         "them)")


def compare_runs(dir_a: str | Path, dir_b: str | Path,
                 names: list[str] | None = None) -> list[ExperimentComparison]:
    """One :class:`ExperimentComparison` per registered experiment (or per one of ``names``)
    that has a ``summary.json`` (readable or not) under either root, in registry order."""
    dir_a, dir_b = Path(dir_a), Path(dir_b)
    verdicts: list[dict[str, dict[str, ReportRow]]] = []
    for root in (dir_a, dir_b):
        by: dict[str, dict[str, ReportRow]] = {}
        for row in build_report(root, names):
            by.setdefault(row.experiment, {})[row.result.claim.id] = row
        verdicts.append(by)
    present = set(experiment_dirs(dir_a, names)) | set(experiment_dirs(dir_b, names))
    out = []
    for name in list_experiments():
        if name not in present:
            continue
        comp = compare_experiment(name, dir_a, dir_b, verdicts[0].get(name, {}),
                                  verdicts[1].get(name, {}))
        if comp.problems or (dir_a / name / "summary.json").exists() \
                or (dir_b / name / "summary.json").exists():
            out.append(comp)  # a directory without a summary on either side: unfinished
    return out
