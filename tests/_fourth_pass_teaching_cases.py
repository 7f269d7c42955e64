"""Issue 46's own pass, the teaching half: bad inputs to the lesson checks of lessons 1-10
(the check helpers' arguments, answers of the wrong type), their sliders, the lessons' helper
functions and the lesson build (``docs/_site/lessons.py``). The library half is
:mod:`tests._fourth_pass_cases`.

Same verdicts as :mod:`tests._second_pass_cases`, with one reading for a *student's* answer:
a check never raises on it, so :func:`_answer` turns the check's "not yet" line into the
``ValueError`` the verdict reads (clear when it names what came), a check that raises on the
answer into a ``RuntimeError`` (unclear), and a pass into a returned value (silent).
``python -m tests._fourth_pass_teaching_cases`` prints the counts.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import math
import os
import tempfile
from pathlib import Path

import numpy as np

from ._fourth_pass_cases import main, run_case  # noqa: F401 - run_case: the pass's verdicts

nan, inf = math.nan, math.inf
ROOT = Path(__file__).resolve().parents[1]


def _lessons_module():
    spec = importlib.util.spec_from_file_location("lessons_build_fourth_pass",
                                                  ROOT / "docs" / "_site" / "lessons.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _answer(check, answer, **options):
    """A check on a student's answer of the wrong type: its line as the verdict's error."""
    try:
        result = check(answer, verbose=False, **options)
    except Exception as exc:  # noqa: BLE001 - a check must not raise on an answer
        raise RuntimeError(f"the check raised on a student's answer: {type(exc).__name__}: "
                           f"{exc}") from None
    if result.passed:
        return result
    raise ValueError(result.message)


def _with_env(name, value, call):
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        return call()
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def _checks():
    from lds_toolkit.teaching import (
        lesson01,
        lesson02,
        lesson03,
        lesson04,
        lesson05,
        lesson06,
        lesson07,
        lesson08,
        lesson09,
        lesson10,
    )

    return [(f"lesson{i + 1:02d}", m) for i, m in enumerate(
        (lesson01, lesson02, lesson03, lesson04, lesson05, lesson06, lesson07, lesson08,
         lesson09, lesson10))]


def _wrong_answers_cases():
    out = []
    for tag, module in _checks():
        for name, check in module.CHECKS.items():
            if name == "interpretation":
                out.append((f"{tag}.{name} answer int", lambda c=check: _answer(c, 3), ["int"]))
                out.append((f"{tag}.{name} answer unknown letter",
                            lambda c=check: _answer(c, "z"), ["str"]))
                continue
            out.append((f"{tag}.{name} answer string",
                        lambda c=check: _answer(c, "my answer"), ["function", "str"]))
    return out


def _fn(**kwargs):  # a "student function" that returns nothing useful
    return 0.0


def _check_argument_cases():
    from lds_toolkit.teaching import check as K
    from lds_toolkit.teaching import lesson01, lesson03, lesson05, lesson06, lesson09, lesson10

    return [
        ("lesson01 check time_limit negative",
         lambda: lesson01.check_memory_formula(_fn, verbose=False, time_limit=-1.0),
         ["time_limit"]),
        ("lesson01 check time_limit string",
         lambda: lesson01.check_impulse_response(_fn, verbose=False, time_limit="10"),
         ["time_limit"]),
        ("lesson01 check time_limit bool",
         lambda: lesson01.check_region(_fn, verbose=False, time_limit=True), ["time_limit"]),
        ("lesson03 check time_limit nan with a stub",
         lambda: lesson03.check_decay_rate(None, verbose=False, time_limit=nan),
         ["time_limit"]),
        ("lesson09 check time_limit inf",
         lambda: lesson09.check_catch_up_time(_fn, verbose=False, time_limit=inf),
         ["time_limit"]),
        ("lesson01 check verbose string",
         lambda: lesson01.check_memory_formula(None, verbose="no"), ["verbose"]),
        ("lesson05 check verbose int",
         lambda: lesson05.check_projected_step(_fn, verbose=2), ["verbose"]),
        ("lesson10 check_interpretation verbose None",
         lambda: lesson10.check_interpretation("a", verbose=None), ["verbose"]),
        ("lesson01 check cases empty",
         lambda: lesson01.check_memory_formula(_fn, verbose=False, cases=[]), ["cases"]),
        ("lesson06 check cases empty",
         lambda: lesson06.check_hankel_matrix(_fn, verbose=False, cases=[]), ["cases"]),
        ("lesson09 check cases empty",
         lambda: lesson09.check_predictor_gain(_fn, verbose=False, cases=[]), ["cases"]),
        ("lesson01 check cases string",
         lambda: lesson01.check_memory_formula(_fn, verbose=False, cases="a=0.9"), ["cases"]),
        ("lesson03 check cases dict",
         lambda: lesson03.check_lyapunov_kron(_fn, verbose=False, cases={"A": np.eye(2)}),
         ["cases"]),
        ("lesson01 check cases list of numbers",
         lambda: lesson01.check_memory_formula(_fn, verbose=False, cases=[0.9, 0.99]),
         ["cases"]),
        ("lesson01 check cases wrong keys",
         lambda: lesson01.check_memory_formula(_fn, verbose=False, cases=[{"alpha": 0.9}]),
         ["cases", "alpha"]),
        ("lesson10 check cases wrong keys",
         lambda: lesson10.check_feedback_cost(_fn, verbose=False, cases=[{"A": np.eye(2)}]),
         ["cases"]),
        ("lesson01 summary unknown answer name",
         lambda: lesson01.summary(verbose=False, impulse_respons=_fn), ["impulse_respons"]),
        ("lesson09 summary unknown answer name",
         lambda: lesson09.summary(verbose=False, gain=_fn), ["gain"]),
        ("check_array rtol string", lambda: K.check_array("x", [1.0], [1.0], rtol="1e-7"),
         ["rtol"]),
        ("check_array atol inf", lambda: K.check_array("x", [1.0], [1.0], atol=inf), ["atol"]),
        ("check_array expected nan", lambda: K.check_array("x", [1.0], [nan]), ["expected"]),
        ("check_scalar expected two numbers",
         lambda: K.check_scalar("x", 1.0, [1.0, 2.0], verbose=False), ["expected"]),
        ("check_scalar rtol negative", lambda: K.check_scalar("x", 1.0, 1.0, rtol=-1.0),
         ["rtol"]),
        ("check_equal expected nan array",
         lambda: K.check_equal("x", 1.0, np.array([nan])), ["expected"]),
        ("check_function cases empty",
         lambda: K.check_function("x", _fn, _fn, [], verbose=False), ["cases"]),
        ("check_function reference not callable",
         lambda: K.check_function("x", _fn, 3.0, [{"a": 1}], verbose=False), ["reference"]),
        ("check_array name not a string",
         lambda: K.check_array(None, [1.0], [1.0], verbose=False), ["name"]),
    ]


def _slider_cases():
    from lds_toolkit.teaching.sliders import SliderApp, show_slider

    apps: dict = {}

    def app(name):
        if name not in apps:
            apps[name] = SliderApp(name)
        return apps[name]

    return [
        ("slider unknown name", lambda: SliderApp("lesson11.nope"), ["lesson11.nope"]),
        ("show_slider unknown name", lambda: show_slider("memory"), ["memory"]),
        ("slider lesson01 modulus 1", lambda: app("lesson01.memory").update(modulus=1.0),
         ["modulus"]),
        ("slider lesson01 modulus nan", lambda: app("lesson01.memory").update(modulus=nan),
         ["modulus"]),
        ("slider lesson02 dt string", lambda: app("lesson02.step").update(dt="0.1"), ["dt"]),
        ("slider lesson03 gain bool", lambda: app("lesson03.gain").update(gain=True),
         ["gain"]),
        ("slider lesson04 epsilon 0", lambda: app("lesson04.etc").update(epsilon=0.0),
         ["epsilon"]),
        ("slider lesson05 unknown parameter",
         lambda: app("lesson05.step_size").update(lr=1.0), ["lr"]),
        ("slider lesson06 k fraction", lambda: app("lesson06.filters").update(k=2.5), ["k"]),
        ("slider lesson06 k numpy fraction",
         lambda: app("lesson06.filters").update(k=np.float32(2.5)), ["k"]),
        ("slider lesson07 delta inf", lambda: app("lesson07.eigenvalue").update(delta=inf),
         ["delta"]),
        ("slider lesson09 horizon fraction",
         lambda: app("lesson09.regret").update(horizon=100.5), ["horizon"]),
        ("slider lesson09 sigma_v complex",
         lambda: app("lesson09.regret").update(sigma_v=0.1 + 0j), ["sigma_v"]),
        ("slider lesson10 r array", lambda: app("lesson10.weight").update(r=np.array([1.0])),
         ["r"]),
        ("slider lesson08 rate negative", lambda: app("lesson08.rate").update(rate=-1.0),
         ["rate"]),
    ]


def _helper_cases():
    from lds_toolkit.teaching import datasets, lesson01, lesson06, lesson07, lesson09, lesson10

    return [
        ("lesson01.pair_impulse_response length 0",
         lambda: lesson01.pair_impulse_response(0.9, 0.1, 0), ["length"]),
        ("lesson01.pair_system modulus nan", lambda: lesson01.pair_system(nan, 0.1),
         ["modulus"]),
        ("lesson06.filters_above_floor T 0", lambda: lesson06.filters_above_floor(0), ["T"]),
        ("lesson06.filters_above_floor T float", lambda: lesson06.filters_above_floor(64.5),
         ["T"]),
        ("lesson07.tail_energies alpha 1.5", lambda: lesson07.tail_energies([1.5], 8, 1),
         ["alpha"]),
        ("lesson07.tail_energies order 3", lambda: lesson07.tail_energies([0.5], 8, 3),
         ["order"]),
        ("lesson09.noisy_stream sigma_w negative",
         lambda: lesson09.noisy_stream(64, -1.0, 0.1), ["sigma_w"]),
        ("lesson09.average_regret lengths differ",
         lambda: lesson09.average_regret([1.0, 2.0], [1.0, 2.0, 3.0]), ["best_losses"]),
        ("lesson10.free_response x0 shape",
         lambda: lesson10.free_response(0.5 * np.eye(2), [1.0, 0.0, 0.0]), ["x0"]),
        ("lesson10.free_response steps 0",
         lambda: lesson10.free_response(0.5 * np.eye(2), [1.0, 0.0], steps=0), ["steps"]),
        ("datasets.course_streams n 0", lambda: datasets.course_streams(n=0), ["n"]),
        ("datasets.save_course_streams missing directory",
         lambda: datasets.save_course_streams("/nonexistent-46b/x/streams.npz"),
         ["nonexistent-46b"]),
    ]


def _more_helper_cases():
    from lds_toolkit.teaching import (
        lesson02,
        lesson03,
        lesson05,
        lesson06,
        lesson07,
        lesson08,
        lesson09,
        lesson10,
    )

    u = np.ones((16, 1))
    return [
        ("lesson05.lesson_stream T 0", lambda: lesson05.lesson_stream(T=0), ["T"]),
        ("lesson05.lesson_stream n float", lambda: lesson05.lesson_stream(n=2.5), ["n"]),
        ("lesson05.eta_safe features 2-D", lambda: lesson05.eta_safe(np.ones((3, 2))),
         ["features"]),
        ("lesson05.eta_safe features zero", lambda: lesson05.eta_safe(np.zeros((3, 2, 1))),
         ["features"]),
        ("lesson06.impulse_vector T 0", lambda: lesson06.impulse_vector(0.5, 0), ["T"]),
        ("lesson06.impulse_vector alpha nan", lambda: lesson06.impulse_vector(nan, 8),
         ["alpha"]),
        ("lesson06.projection_residuals alphas string",
         lambda: lesson06.projection_residuals(np.eye(8)[:, :2], "ab"), ["alphas"]),
        ("lesson06.final_loss k 0", lambda: lesson06.final_loss(0, None, u, u, 1.0, 0.1),
         ["k"]),
        ("lesson07.tail_energy_by_sum order 3",
         lambda: lesson07.tail_energy_by_sum(0.5, 8, 3), ["order"]),
        ("lesson07.worst_eigenvalue_by_search context 0",
         lambda: lesson07.worst_eigenvalue_by_search(0), ["context"]),
        ("lesson07.one_mode_losses alpha 1.5", lambda: lesson07.one_mode_losses(1.5),
         ["alpha"]),
        ("lesson08.capstone_stream T 0", lambda: lesson08.capstone_stream(0), ["T"]),
        ("lesson08.mapped_modes string", lambda: lesson08.mapped_modes("abc"),
         ["continuous_modes"]),
        ("lesson08.use_layer T fraction", lambda: lesson08.use_layer(None, None, 2.5), ["T"]),
        ("lesson09.stream_parts T 0", lambda: lesson09.stream_parts(0), ["T"]),
        ("lesson10.use_layer not a system", lambda: lesson10.use_layer("sys"), ["system"]),
        ("lesson10.internal_model_costs r 0",
         lambda: lesson10.internal_model_costs(*lesson10.small_layer(), 0.0), ["r"]),
        ("lesson02.frequency_response not a system",
         lambda: lesson02.frequency_response(None, [0.1]), ["system"]),
        ("lesson03.closed_loop gain nan", lambda: lesson03.closed_loop(nan), ["gain"]),
    ]


def _main(lessons, *argv):
    """``python docs/_site/lessons.py argv``: a non-zero exit becomes ``ValueError`` (the last
    line of stderr, what the user reads); a zero exit is returned (silent)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = lessons.main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
            if not isinstance(exc.code, int | None):
                print(exc.code, file=err)
    if code:
        raise ValueError(err.getvalue().strip().splitlines()[-1])
    return code


def _build_cases():
    lessons = _lessons_module()
    tmp = Path(tempfile.mkdtemp(prefix="lds-fourth-pass-build-"))
    a_file = tmp / "a-file"
    a_file.write_text("x")
    return [
        ("lessons.py --out is a file",
         lambda: _main(lessons, "--out", str(a_file), "--no-slides"), ["--out"]),
        ("lessons.py --out inside a file",
         lambda: _main(lessons, "--out", str(a_file / "sub"), "--no-slides"), ["--out"]),
        ("lessons.py --out empty", lambda: _main(lessons, "--out", "", "--no-slides"),
         ["--out"]),
        ("lessons.py --out without a value", lambda: _main(lessons, "--out"), ["--out"]),
        ("lessons.py unknown option", lambda: _main(lessons, "--instructor"),
         ["--instructor"]),
        ("lessons.py --only unknown lesson",
         lambda: _main(lessons, "--out", str(tmp / "o1"), "--no-slides", "--only", "99"),
         ["--only", "99"]),
        ("lessons.py --only empty",
         lambda: _main(lessons, "--out", str(tmp / "o2"), "--no-slides", "--only", ""),
         ["--only"]),
        ("lessons.build only a string",
         lambda: lessons.build(tmp / "o3", execute_slides=False, only="01"), ["only"]),
        ("lessons.build only unknown",
         lambda: lessons.build(tmp / "o4", execute_slides=False, only=["11"]), ["only", "11"]),
        ("lessons.build execute_slides string",
         lambda: lessons.build(tmp / "o5", execute_slides="no", only=["01"]),
         ["execute_slides"]),
        ("LDS_DOCS_INSTRUCTOR unknown value",
         lambda: _with_env("LDS_DOCS_INSTRUCTOR", "maybe", lessons.instructor_site),
         ["LDS_DOCS_INSTRUCTOR", "maybe"]),
        ("lessons.site_files instructor string",
         lambda: lessons.site_files(lessons.lesson_scripts()[0], False, instructor="no"),
         ["instructor"]),
    ]


def cases() -> list:
    """Every case of the pass's teaching half."""
    return (_wrong_answers_cases() + _check_argument_cases() + _slider_cases()
            + _helper_cases() + _more_helper_cases() + _build_cases())


if __name__ == "__main__":  # pragma: no cover
    main(cases)
