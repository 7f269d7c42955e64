"""The teaching kit: exercise checks and sliders for the lessons in ``docs/lessons/``.

Where things live:

* :mod:`~lds_toolkit.teaching.check` — the check API: :func:`check_array`,
  :func:`check_scalar`, :func:`check_equal`, :func:`check_function` compare a student's answer
  with the toolkit's and return a :class:`CheckResult` (a ``pass:`` line, or a ``not yet:``
  line with what differs, by how much and a likely cause; never a traceback); :func:`report`
  builds one for a check that compares in its own way; :func:`summarize` counts a lesson's.
* :mod:`~lds_toolkit.teaching.sliders` — :func:`slider` registers a lesson's draw function,
  :class:`SliderApp` redraws it (the widget callback), :func:`show_slider` shows it (ipywidgets,
  the optional ``teach`` extra, imported only there), :func:`registered_sliders` finds them all.
* :mod:`~lds_toolkit.teaching.calling` — how a check calls a student's function: deep
  copies, a time limit per call, nothing escaping (``BaseException`` included).
* :mod:`~lds_toolkit.teaching.questions` — interpretation questions (multiple choice, the
  right choice stored as a digest).
* ``lessonNN`` — one module per lesson: its exercise checks (``check_*``, each taking
  ``cases=`` and ``time_limit=`` for the autograder's hidden cases) and its slider. The
  package holds **no reference solutions**: a check computes its expected values by an
  independent route (a toolkit function, taking the case as one dict, so that no function
  here has an exercise's signature); the solutions, the hidden cases and the common mistakes
  are in the instructor-only answer keys ``docs/lessons/instructor/``. Lessons 8 and 10 need
  torch; the others numpy only.

Nothing here changes global state: figures are ``matplotlib.figure.Figure`` objects drawn on
the Agg canvas, never through pyplot.
"""

from .check import (
    CheckResult,
    check_array,
    check_equal,
    check_function,
    check_scalar,
    is_stub,
    report,
    run_checks,
    summarize,
)
from .sliders import (
    Param,
    Slider,
    SliderApp,
    registered_sliders,
    show_slider,
    slider,
    sparse_log_ticks,
)

__all__ = [
    "CheckResult",
    "Param",
    "Slider",
    "SliderApp",
    "check_array",
    "check_equal",
    "check_function",
    "check_scalar",
    "is_stub",
    "registered_sliders",
    "report",
    "run_checks",
    "show_slider",
    "slider",
    "sparse_log_ticks",
    "summarize",
]
