"""python-control's own ``control/tests/timeresp_test.py``, collected here and run with the
toolkit substituted (see conftest.py)."""

from .conftest import load

load("timeresp_test", globals())
