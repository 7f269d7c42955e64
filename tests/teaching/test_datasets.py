"""The course data set: deterministic, its streams are its systems' outputs, its
eigenvalues lie in the regions it names."""

from __future__ import annotations

import numpy as np
import pytest

import lds_toolkit as lt
from lds_toolkit.teaching.datasets import course_streams, save_course_streams


def test_streams_regions_and_outputs(tmp_path):
    streams = course_streams()
    assert sorted(streams) == ["regionA_T1024", "regionA_T4096", "regionB_T1024",
                               "regionB_T4096"]
    for s in streams.values():
        labels = set(lt.eigenvalue_regions(s.T, 7 / 8).classify(s.eigenvalues))
        assert labels == ({"A-left", "A-right"} if s.region == "A" else {"B"}), s.name
        # the lengen convention by a plain loop: y_{t+1} = C x_{t+1}, x_{t+1} = A x_t + B u_t
        x = np.zeros(s.A.shape[0])
        y = np.empty_like(s.y)
        for t in range(s.T):
            y[t] = s.C @ x
            x = s.A @ x + s.B @ s.u[t]
        np.testing.assert_allclose(s.y, y, rtol=1e-9, atol=1e-9 * np.abs(y).max())
    again = course_streams()
    for name, s in streams.items():
        assert np.array_equal(s.y, again[name].y) and np.array_equal(s.A, again[name].A)
    other = course_streams(seed=1)
    assert not np.array_equal(other["regionA_T1024"].A, streams["regionA_T1024"].A)
    path = save_course_streams(tmp_path / "streams.npz")
    with np.load(path, allow_pickle=False) as data:
        assert np.array_equal(data["regionB_T4096/y"], streams["regionB_T4096"].y)


def test_bad_arguments_are_named():
    with pytest.raises((TypeError, ValueError), match="seed"):
        course_streams(seed=-1)
    with pytest.raises((TypeError, ValueError), match="n"):
        course_streams(n=0)
