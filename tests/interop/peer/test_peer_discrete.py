"""python-control's own ``control/tests/discrete_test.py``, collected here and run with the
toolkit substituted (see conftest.py)."""

from .conftest import load

load("discrete_test", globals())
