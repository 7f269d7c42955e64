"""python-control's own ``control/tests/mateqn_test.py``, collected here and run with the
toolkit substituted (see conftest.py)."""

from .conftest import load

load("mateqn_test", globals())
