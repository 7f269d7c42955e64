"""The CUDA section of ``docs/benchmarks.md`` (``bench_table.py`` appends it).

Three parts:

* what ``benchmarks/gpu_check.sh`` measures and how to run it;
* the newest committed run of it (``docs/results/gpu-check/<device>-<date>/summary.md``,
  copied there from ``benchmarks/results/``), or, while there is none, a plain statement
  that it has not run on a GPU since the work it measures, with the command that fills it;
* what issue 34 found *before* that work (:data:`ISSUE_34`), without its numbers: they come
  from review scripts outside the project, and no run of them is committed.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "docs" / "results" / "gpu-check"
#: Committed CPU runs of this work's pieces (``neural_layers.py --json`` with the ``-rc``
#: rows; ``run_group.py``'s output).
CPU_EVIDENCE = ROOT / "docs" / "results" / "cpu-evidence"

#: What issue 34 found on an H200 before this work, without its numbers: they came from
#: review scripts outside the project and no run of them is committed, so the page, whose
#: numbers are all read from committed runs, does not quote them.
ISSUE_34 = """\
Issue 34 reported measurements from an NVIDIA H200 (torch 2.11 + CUDA 13) made by review
scripts outside the project; no run of them is committed, so this page does not quote their
numbers. What they found, and what this work changed in answer: under bf16 autocast one LaS
attention layer of the las-ablation gpu configuration was far off float32 (the other layers
close to it) and training the Table 4 model in bf16 went non-finite within a few steps
(LaS's decay and ALiBi now enter float32 attention scores: [LaS attention](layers/las.md));
`pytest -m gpu` failed for STU built for one length and fed others (the tests were fixed);
`torch.compile` broke the graph at `SequenceModel._encode`, a host read per forward (every
layer now compiles without a graph break); Focus at 1K was launch-bound (several runs now
train stacked: `train_group`); and at long lengths S4-DPLR, STU's exact form and Focus
needed several times SDPA's memory (activation recomputation: `set_recompute`, measured on a
CPU above)."""

HOW = """\
`benchmarks/gpu_check.sh` is the one prepared run for a lent GPU (H100/H200), at most 8
minutes, each part in a time box so that one failure does not eat the slot:

1. `pytest -m gpu` over `tests/neural` and `tests/neural_experiments`, where the gpu tests
   live (what `make test-gpu` runs, without collecting modules whose optional dependencies
   the GPU machine lacks), on four xdist workers when pytest-xdist is there;
2. the CUDA layer table (`benchmarks/neural_layers.py --device cuda --fractions`): forward +
   backward time and peak memory per layer at 4K, 16K and 64K tokens (batch 8, d 256), SDPA
   as the baseline, S4-DPLR, STU exact and Focus also with activation recomputation
   (`set_recompute`, the `-rc` rows), each point's TFLOP/s and GB/s as fractions of the bf16
   GEMM peak and the copy (HBM) bandwidth measured in the same run;
3. the training table (`benchmarks/training_steps.py`): the las-ablation gpu model, L-only,
   Focus at 1K alone and 8 runs stacked (`train_group`), Focus at 4K; ms/step, tokens/s,
   TFLOP/s and the fraction of the bf16 peak at fp32, tf32 and bf16, eager and compiled;
4. 200 steps of the las-ablation gpu model in bf16 against float32
   (`benchmarks/bf16_training.py`; the acceptance asks within 2 %);
5. a slice of the gpu scale: `lds-toolkit reproduce assoc-recall --scale gpu --time-budget 25`
   and the steps its checkpoints reached.

Everything goes, as it is measured, to `benchmarks/results/<device>-<date>/`, with
`summary.md`. Run it with `bash benchmarks/gpu_check.sh` on the GPU machine (first
`bash benchmarks/gpu_check.sh --fetch-wheels` where the package index is reachable: those
machines lack python-control; carry `benchmarks/wheels/` along; the run installs them into
`benchmarks/.device-site/`). Through a tool that returns a few files only, add
`--bundle $OUT/gpu-check.tar.gz`: one archive of the whole results directory.
`--cpu-smoke` runs every part at tiny sizes on a CPU (about a minute;
`tests/neural_experiments/test_gpu_check.py`, slow). To put a run here: copy its directory
(or unpack its archive) to `docs/results/gpu-check/` and run
`python benchmarks/bench_table.py --write-docs --from-json docs/img/benchmarks/bench.json`."""


def latest_run() -> Path | None:
    """The newest committed gpu_check run (by directory name's date), or None."""
    runs = sorted((p for p in RUNS.glob("*/summary.md") if p.is_file()),
                  key=lambda p: p.parent.name.rsplit("-", 2)[-2:])
    return runs[-1] if runs else None


def _demote(text: str) -> str:
    """Headings two levels down, so that a run's summary sits under this section."""
    return "\n".join(("##" + ln) if ln.startswith("#") else ln for ln in text.splitlines())


def recompute_rows() -> list[str]:
    """The CPU evidence for recomputation: peak memory (and time) of each long-sequence path
    with and without it against SDPA, from the committed ``recompute_layers.json``."""
    import json

    path = CPU_EVIDENCE / "recompute_layers.json"
    if not path.is_file():
        return []
    res = json.loads(path.read_text())
    a, r = res["args"], res["results"]
    sdpa = r["sdpa"]
    lines = [f"On a CPU ({a['threads']} thread, batch {a['batch']}, d {a['d_model']}; torch "
             f"{res.get('torch', '?')}, {res.get('date', '?')}; load {res.get('load_start', '?')}"
             f" at the start; times in the file are of one pass under load, not compared "
             "here): peak memory of one forward + backward as resident-set growth "
             "(the kernel's high-water mark, glibc's mmap threshold at 64 KiB so that freed "
             "tensors leave the resident set), against causal SDPA's "
             f"(`{path.relative_to(ROOT)}`).", "",
             "| layer | L | peak MB | / SDPA | with recomputation | / SDPA |",
             "| --- | --- | --- | --- | --- | --- |"]
    for base in ("s4-dplr", "stu-exact", "focus"):
        for L in sorted(r.get(base, {}), key=int):
            p0, p1, s0 = r[base][L], r.get(base + "-rc", {}).get(L), sdpa.get(L)
            if not (p1 and s0 and p0["status"] == p1["status"] == s0["status"] == "ok"):
                continue
            lines.append(f"| {base} | {L} | {p0['peak_mb']:.0f} | "
                         f"{p0['peak_mb'] / s0['peak_mb']:.2f} | {p1['peak_mb']:.0f} | "
                         f"{p1['peak_mb'] / s0['peak_mb']:.2f} |")
    return ["", "### Activation recomputation: CPU evidence", "", *lines]


def rehearsal_rows() -> list[str]:
    """The last rehearsal on the GPU machine's software stack (on a CPU), from its committed
    log ``device-stack-rehearsal.txt`` (``benchmarks/device_stack_rehearsal.sh``): the stack,
    each step's exit status and the tests' counts, as the log printed them."""
    import re

    path = CPU_EVIDENCE / "device-stack-rehearsal.txt"
    if not path.is_file():
        return []
    log = path.read_text().splitlines()
    stack = next((ln[len("== stack: "):] for ln in log if ln.startswith("== stack: ")), "?")
    date = next((ln.split("; ")[-1] for ln in log if ln.startswith("== gpu_check (smoke)")), "?")
    steps = [m.groups() for ln in log
             if (m := re.match(r"== ([a-z-]+): exit (\d+) after (\d+) s$", ln))]
    counts = [ln.strip("= ") for ln in log if re.search(r"\d+ (passed|tests collected)", ln)]
    lines = ["", "### The GPU machine's software stack, rehearsed on a CPU", "",
             "A lent GPU machine runs its own Python and torch. "
             "`bash benchmarks/device_stack_rehearsal.sh` builds that stack in a virtual "
             "environment (the CUDA build of torch runs on a CPU) and runs the smoke run of "
             "`gpu_check.sh`, the neural tests (compile tests included) and the collection of "
             f"the gpu tests with it. Last run ({date}; `{path.relative_to(ROOT)}`): {stack}.",
             "", "| step | exit | seconds |", "| --- | --- | --- |"]
    lines += [f"| {name} | {rc} | {sec} |" for name, rc, sec in steps]
    if counts:
        lines += ["", "Tests: " + "; ".join(f"`{c}`" for c in counts) + "."]
    return lines


def markdown() -> list[str]:
    lines = ["", "## CUDA", "", HOW, *recompute_rows(), *rehearsal_rows(), "",
             "### After this work on a GPU", ""]
    run = latest_run()
    if run is None:
        lines += ["**Not yet run on a GPU after this work**: no GPU was lent to the sessions "
                  "that wrote the stacked runs, recomputation and this script, so this page "
                  "has no GPU number of the code as it is now. Fill this part with "
                  "`bash benchmarks/gpu_check.sh` on an H100/H200 (then copy its results "
                  "directory to `docs/results/gpu-check/` and re-render as above)."]
    else:
        lines += [f"From `{run.parent.relative_to(ROOT)}`:", "",
                  _demote(run.read_text()).strip()]
    lines += ["", "### Before this work: what issue 34 found", "", ISSUE_34, ""]
    return lines
