"""The markdown summary of one ``benchmarks/gpu_check.sh`` run, from what its parts wrote.

``python benchmarks/gpu_check_summary.py RESULTS_DIR > RESULTS_DIR/summary.md``. Each part
is summarised from its own files; a part cut by its time box contributes the points it
finished (written as they were measured) and says so. Nothing here measures anything.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.is_file() else ""


def _tail(path: Path, n: int) -> list[str]:
    lines = [ln for ln in _read(path).splitlines() if ln.strip()]
    return lines[-n:]


def environment(out: Path) -> list[str]:
    env = json.loads(_read(out / "environment.json") or "{}")
    lines = ["# gpu_check results", ""]
    if env:
        mem = f", {env['memory_gib']} GiB" if "memory_gib" in env else ""
        lines.append(f"Device: **{env.get('device')}**{mem}; torch {env.get('torch')} (CUDA "
                     f"{env.get('cuda')}), Python {env.get('python')}; load at start "
                     f"{', '.join(f'{v:.1f}' for v in env.get('load', []))} on "
                     f"{env.get('cpus')} CPUs. Directory: `{out.name}`.")
    parts = [ln.split("\t") for ln in _read(out / "parts.tsv").splitlines()[1:] if ln]
    if parts:
        lines += ["", "| part | status | seconds | box |", "| --- | --- | --- | --- |"]
        lines += [f"| {p[0]} | {p[1]} | {p[2]} | {p[3]} |" for p in parts if len(p) == 4]
    return lines


def tests(out: Path) -> list[str]:
    last = _tail(out / "gpu-tests.txt", 1)
    return ["", "## GPU tests (`pytest -m gpu`)", "",
            f"`{last[0]}`" if last else "no output (see the part's status above)"]


def layers(out: Path) -> list[str]:
    from neural_layers import markdown as layer_markdown

    text = _read(out / "layers.md")
    note = ""
    if not text:
        rows = [json.loads(ln) for ln in _read(out / "layers.points.jsonl").splitlines()
                if ln.strip()]
        head = next((r for r in rows if "peaks" in r), {"peaks": {}, "device": "cuda"})
        pts = [r for r in rows if "layer" in r]
        if pts:
            names = list(dict.fromkeys(r["layer"] for r in pts))
            lengths = sorted({r["L"] for r in pts})
            results = {n: {r["L"]: r for r in pts if r["layer"] == n} for n in names}
            text = layer_markdown(results, names, lengths, head["peaks"], head["device"])
            note = "(cut by its time box: the points measured before it)\n\n"
    return ["", "## Layers: forward + backward (sizes: the command in log.txt)", "",
            note + (text or "no points measured")]


def training(out: Path) -> list[str]:
    from training_steps import collect, markdown

    text = _read(out / "training.md")
    note = ""
    jsonl = out / "training.points.jsonl"
    if not text and jsonl.is_file():
        meta = json.loads(_read(jsonl.with_suffix(".run.json")) or "{}")
        if meta:
            meta["points"] = collect(jsonl)
            text = markdown(meta)
            note = "(cut by its time box: the points measured before it)\n\n"
    return ["", "## Training steps (train / train_group, AdamW, gpu-scale models)", "",
            note + (text or "no points measured")]


def bf16(out: Path) -> list[str]:
    res = json.loads(_read(out / "bf16.json") or "{}")
    lines = ["", "## bf16 against float32: las-ablation gpu model", ""]
    if res:
        lines.append(f"{res['steps']} steps ({res['model']}): largest per-step relative "
                     f"difference of the loss {res['max_rel']:.3e} (step {res['argmax']}), "
                     f"last 20 steps' means {res['tail_rel']:.3e} apart: **{res['verdict']}**; "
                     f"fp32 {res['fp32']['ms_per_step']:.1f} ms/step, bf16 "
                     f"{res['bf16']['ms_per_step']:.1f} ms/step (first steps included).")
    else:
        lines += ["```", *(_tail(out / "bf16-loss.txt", 8) or ["no output"]), "```"]
    return lines


def checkpoint_steps(root: Path) -> list[str]:
    """``name: step N`` of every training checkpoint the slice left (tasks it stopped)."""
    import torch

    found = []
    for path in sorted(root.rglob("*.ckpt")):
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
            meta = json.loads(state["meta"])
            found.append(f"{path.name.split('.', 1)[-1]}: step {meta['step']}")
        except Exception as exc:  # noqa: BLE001 - reported, not fatal
            found.append(f"{path.name}: unreadable ({type(exc).__name__})")
    return found


def gpu_scale(out: Path) -> list[str]:
    lines = ["", "## A slice of the gpu scale (`reproduce assoc-recall --scale gpu "
             "--time-budget`)", "", "```", *(_tail(out / "gpu-scale-slice.txt", 8)
                                            or ["no output"]), "```"]
    steps = checkpoint_steps(out / "gpu-scale") if (out / "gpu-scale").is_dir() else []
    if steps:
        lines += ["", "Checkpoints left for the next command (task run: steps done):", ""]
        lines += [f"- {s}" for s in steps]
    return lines


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not Path(args[0]).is_dir():
        print("usage: gpu_check_summary.py RESULTS_DIR", file=sys.stderr)
        return 2
    out = Path(args[0])
    lines = environment(out)
    for section in (tests, layers, training, bf16, gpu_scale):
        try:
            lines += section(out)
        except Exception as exc:  # noqa: BLE001 - one unreadable part must not hide the rest
            lines += ["", f"({section.__name__}: could not be summarised: "
                          f"{type(exc).__name__}: {exc})"]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
