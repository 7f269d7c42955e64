"""python-control's own ``control/tests/statesp_test.py``, collected here and run with the
toolkit substituted (see conftest.py)."""

from .conftest import load

load("statesp_test", globals())
