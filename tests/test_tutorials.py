"""The tutorials (docs/tutorials/*.py): jupytext percent scripts, public API only, and they run.

Each tutorial is executed in a subprocess in its quick mode (``LDS_TUTORIAL_QUICK=1``) with the
Agg backend and one thread, exactly as a reader runs it (``python docs/tutorials/NN_name.py``).
Tutorial-specific checks read the ``summary`` block each tutorial prints at its end.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("*.py"))
IDS = [t.stem for t in TUTORIALS]


def run_tutorial(script: Path, cwd: Path, save_dir: Path | None = None) -> str:
    env = dict(os.environ, LDS_TUTORIAL_QUICK="1", MPLBACKEND="Agg", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    env.pop("LDS_TUTORIAL_SAVE_FIGURES", None)
    if save_dir is not None:
        env["LDS_TUTORIAL_SAVE_FIGURES"] = str(save_dir)
    proc = subprocess.run([sys.executable, str(script)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, f"{script.name} failed:\n{proc.stdout[-3000:]}\n{proc.stderr}"
    return proc.stdout


def summary(stdout: str) -> dict[str, str]:
    """The ``key = value`` lines after the line ``summary``."""
    lines = stdout.splitlines()
    assert "summary" in lines, "the tutorial printed no summary block"
    out = {}
    for line in lines[lines.index("summary") + 1:]:
        key, sep, value = line.strip().partition(" = ")
        if sep:
            out[key] = value
    return out


def test_there_are_tutorials():
    assert TUTORIALS, "docs/tutorials/*.py not found"


@pytest.mark.parametrize("script", TUTORIALS, ids=IDS)
def test_tutorial_is_a_percent_script_using_the_public_api(script):
    text = script.read_text()
    lines = text.splitlines()
    # jupytext "percent" format: header, then cells opened by "# %%" or "# %% [markdown]";
    # markdown cells hold only comment lines
    assert "format_name: percent" in text
    cells = [i for i, line in enumerate(lines) if line.startswith("# %%")]
    assert cells and all(lines[i] in ("# %%", "# %% [markdown]") for i in cells)
    for start, end in zip(cells, cells[1:] + [len(lines)]):
        if lines[start] == "# %% [markdown]":
            body = [line for line in lines[start + 1:end] if line.strip()]
            assert body and all(line.startswith("#") for line in body), (
                f"markdown cell at line {start + 1} contains code")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lds"):
            assert not any(p.startswith("_") for p in node.module.split(".")), node.module
            assert all(not a.name.startswith("_") for a in node.names), node.module
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "lt":  # `import lds_toolkit as lt`
                assert not node.attr.startswith("_"), f"lt.{node.attr}"


def check_control_meets_ml(stdout: str, figs: Path) -> None:
    """Tutorial 4: the numbers that must hold if the training, the layer -> LDS bridge and the
    analyses work (values measured in quick mode in the comments)."""
    out = summary(stdout)
    num = {k: float(v) for k, v in out.items() if v not in ("True", "False")}
    flag = {k: v == "True" for k, v in out.items() if v in ("True", "False")}

    assert sorted(p.name for p in figs.iterdir()) == [
        "tutorial04_etc.png", "tutorial04_impulse.png", "tutorial04_modes_lyapunov.png",
        "tutorial04_online.png"]
    assert num["T"] == 512  # the quick sizes
    # Algorithm 1 learns the stream online: far below the last-value baseline (2.6e-7, 2.9e-4)
    assert num["alg1_loss"] < 0.1 * num["last_value_loss"]
    # the convention mapping: S4.from_lds(true system) reproduces the targets to round-off
    assert num["exact_layer_error"] < 1e-10
    # the bridge: the exported LDS reproduces the layer; the continuous one re-discretises to it
    assert num["bridge_error"] < 1e-10
    assert num["rediscretisation_error"] < 1e-12
    # the training worked: relative test loss 1.8e-4 and impulse-response error 0.012 over the
    # training window (an untrained layer: 0.85 and 1.02; other seeds: up to 2e-4 and 0.031)
    assert num["s4_test_loss"] < 1e-2
    assert num["impulse_error_T"] < 0.1
    # Algorithm 1's running-sum impulse response: 0.049 (other seeds: up to 0.13)
    assert num["alg1_impulse_error_T"] < 0.25
    # stability and its certificate, tight for the layer's normal (rotation-block) realisation
    assert num["learned_spectral_radius"] < 1
    assert num["certificate_rho_learned"] < 1 and flag["certificate_proves_stability"]
    assert abs(num["certificate_rho_learned"] - num["learned_spectral_radius"]) < 1e-9
    assert flag["certificate_holds_on_trajectories"]
    # the fitted window cannot pin down the true slowest mode (1 - 8.6e-7 against 1 - 2.1e-4)
    assert num["certificate_rho_learned"] < num["certificate_rho_true"]
    assert num["memory_learned"] < num["memory_true"]
    # event-triggered control on the learned continuous-time system (14 events, min gap 21.7)
    assert num["etc_events"] > 0 and num["etc_min_inter_event"] > 1.0
    assert flag["etc_bound_holds"]


def check_lds_and_memory(stdout: str, figs: Path) -> None:
    """Tutorial 1 (quick: T = 512, n = 16; measured values in the comments)."""
    out = summary(stdout)
    num = {k: float(v) for k, v in out.items()}
    assert sorted(p.name for p in figs.iterdir()) == [
        "tutorial01_best_context.png", "tutorial01_impulse.png", "tutorial01_tails.png"]
    assert num["T"] == 512
    assert num["memory_length_0999"] == 3454  # 99.9 % of sum 0.999^(2t): ln(1e-3)/ln(0.998)
    # A-left's differenced tail collapses from T^(1/2) to T^(7/8) (27x), B's does not (6.4x)
    assert num["tail_drop_A-left"] > 3 * num["tail_drop_B"]
    # the best context-L fit improves 200x for A-left, 3.7x for B, 2.1x for A-right
    assert num["fit_gain_A-left"] > 20 * num["fit_gain_B"]
    assert num["fit_gain_A-right"] < 10


def check_spectral_filtering(stdout: str, figs: Path) -> None:
    """Tutorial 2 (quick: T = 1024, n = 32, k = 16, 2 seeds)."""
    out = summary(stdout)
    num = {k: float(v) for k, v in out.items()}
    assert sorted(p.name for p in figs.iterdir()) == [
        "tutorial02_fig2.png", "tutorial02_fig3.png", "tutorial02_fig4.png",
        "tutorial02_filters.png", "tutorial02_projection.png", "tutorial02_regret.png"]
    assert num["T"] == 1024
    # Fig. 2: T^(1/2) fails (18.8x), T^(7/8) matches (1.03)
    assert num["ratio_a_half"] > 5 and 0.9 < num["ratio_a_7_8"] < 1.1
    # Fig. 3: Region B, T^(1/2) worse (2.1x)
    assert num["ratio_b_half"] > 1.5
    # Fig. 4: Algorithm 2 within 5 % of full context at every q (4.1 %), 890x below Alg. 1
    assert num["ratio_alg2_max_deviation"] < 0.05
    assert num["alg1_over_alg2_full"] > 100
    assert num["regret_max_gap"] < 1e-6 * max(1.0, abs(num["regret_final"]))


def check_lyapunov_etc_nss(stdout: str, figs: Path) -> None:
    """Tutorial 3 (the S4++ Sec. 2.2 example; same numbers as the nss-etc experiment)."""
    out = summary(stdout)
    num = {k: float(v) for k, v in out.items() if v not in ("True", "False")}
    flag = {k: v == "True" for k, v in out.items() if v in ("True", "False")}
    assert sorted(p.name for p in figs.iterdir()) == [
        "tutorial03_etc.png", "tutorial03_nss.png", "tutorial03_sweep.png"]
    assert num["events"] == 21 and abs(num["min_inter_event"] - 0.2) < 1e-9
    assert flag["bound_holds"] and flag["certificate_satisfied"]
    assert not flag["printed_satisfies_eq8"]
    assert num["events_smallest_kappa"] > num["events_default_kappa"]  # 35 vs 21
    assert num["max_abs_original"] < 1.1 and num["max_abs_jittered_etc"] < 1.1
    assert num["max_abs_perturbed"] > 1e4 * num["max_abs_original"]  # 3.95e6
    assert abs(num["loglog_slope"] - 1) < 0.05  # 0.9997


def check_python_control(stdout: str, figs: Path) -> None:
    """Tutorial 5 (quick: 300 training steps; measured values in the comments)."""
    out = summary(stdout)
    num = {k: float(v) for k, v in out.items() if v not in ("True", "False")}
    flag = {k: v == "True" for k, v in out.items() if v in ("True", "False")}
    assert sorted(p.name for p in figs.iterdir()) == [
        "tutorial05_bode.png", "tutorial05_response.png"]
    # python-control runs the layer's export to the layer's own output (7e-16)
    assert num["export_error"] < 1e-8
    # every discretisation equals control.sample_system (1.5e-14), lyap with
    # convention="control" equals ct.lyap (3e-16)
    assert num["discretisation_agreement"] < 1e-10 and num["lyapunov_agreement"] < 1e-12
    # the S4D learned the plant (fresh input: 0.052; frequency response 0.026 of the peak)
    assert num["plant_fit_error"] < 0.2 and num["bode_error"] < 0.2
    assert num["etc_events"] > 0 and flag["etc_bound_holds"] and flag["certificate_satisfied"]


CHECKS = {"01_lds_and_memory": check_lds_and_memory,
          "02_spectral_filtering": check_spectral_filtering,
          "03_lyapunov_etc_nss": check_lyapunov_etc_nss,
          "04_control_meets_ml": check_control_meets_ml,
          "05_python_control": check_python_control}


@pytest.mark.parametrize("script", TUTORIALS, ids=IDS)
def test_tutorial_runs_in_quick_mode(script, tmp_path):
    """Exit code 0; files written only under LDS_TUTORIAL_SAVE_FIGURES; the tutorial's own
    checks (``CHECKS``) on what it printed."""
    cwd, figs = tmp_path / "cwd", tmp_path / "figs"
    cwd.mkdir()
    stdout = run_tutorial(script, cwd, save_dir=figs)
    assert list(cwd.iterdir()) == []
    if script.stem in CHECKS:
        CHECKS[script.stem](stdout, figs)
