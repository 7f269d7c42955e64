"""Conversions of a :class:`~lds_toolkit.systems.SimulationResult` into python-control's and
pandas' types: ``TimeResponseData`` (channels first, with signal labels, so that ``.plot()``
works) and a ``pandas.DataFrame``.

python-control stores signals channel-first: ``resp.t`` (T,), ``resp.y`` (d_out, T),
``resp.x`` (n, T), ``resp.u`` (d_in, T), i.e. the transposes of the result's ``y``, ``x``,
``u`` (time first). A result with one batch axis, ``y`` of shape (N, T, d_out), becomes a
multi-trace response (``resp.y`` of shape (d_out, N, T), traces labelled ``trace[k]``).
"""

from __future__ import annotations

import numpy as np


def default_labels(prefix: str, count: int) -> list[str]:
    """python-control's default signal names: ``prefix[0]``, ``prefix[1]``, ..."""
    return [f"{prefix}[{i}]" for i in range(count)]


def labels(names: dict | None, key: str, prefix: str, count: int) -> list[str]:
    """The ``key`` ("inputs", "outputs", "states") names of ``names`` when there are ``count``
    of them, else python-control's defaults."""
    given = None if names is None else names.get(key)
    if given is not None and len(given) == count:
        return list(given)
    return default_labels(prefix, count)


def time_response(result, *, squeeze: bool | None = None, return_x: bool = False):
    """``result`` as ``control.TimeResponseData`` (see
    :meth:`SimulationResult.to_time_response`)."""
    import control

    if result.t is None or result.u is None:
        raise ValueError("to_time_response needs the time grid and the inputs; this "
                         "result was built without them")
    batch = result.y.shape[:-2]
    if len(batch) > 1:
        raise ValueError(f"to_time_response supports at most one batch axis (traces), got "
                         f"batch shape {batch}; reshape u to (-1, T, d_in) first")
    u = np.broadcast_to(result.u, batch + result.u.shape[-2:])
    d_in, d_out = u.shape[-1], result.y.shape[-1]

    def channels_first(a):  # (..., T, d) -> (d, ..., T)
        return None if a is None else np.ascontiguousarray(np.moveaxis(a, -1, 0))

    title = "lds_toolkit simulation"
    if result.output != "standard":
        title += f" (output convention {result.output!r})"
    names = result.names
    sysname = None if names is None else names.get("name")
    if sysname:
        title += f" of {sysname}"
    n = None if result.x is None else result.x.shape[-1]
    return control.TimeResponseData(
        np.array(result.t, dtype=float), channels_first(result.y), channels_first(result.x),
        channels_first(u), issiso=d_in == 1 and d_out == 1, multi_trace=bool(batch),
        output_labels=result.output_labels, input_labels=result.input_labels,
        state_labels=None if n is None else result.state_labels,
        trace_labels=default_labels("trace", batch[0]) if batch else None,
        trace_types=["forced"] * batch[0] if batch else None,  # python-control's kind
        title=title, sysname=sysname, return_x=return_x, squeeze=squeeze, plot_inputs=True)


def to_pandas(result):
    """``result`` as a ``pandas.DataFrame``: one row per time step (and trace), columns
    ``time`` (and ``trace``), then the inputs, outputs and states by name, as python-control's
    ``TimeResponseData.to_pandas`` lays them out.

    Raises ``ImportError`` naming pandas when it is not installed.
    """
    try:
        import pandas
    except ImportError as exc:
        raise ImportError("to_pandas needs pandas, which is not installed "
                          "(pip install pandas)") from exc
    resp = time_response(result)
    T = resp.time.size
    traces = resp.ntraces if resp.ntraces > 0 else 1
    data = {"time": np.tile(resp.time, traces)}
    if resp.ntraces > 0:
        data["trace"] = np.repeat(resp.trace_labels, T)
    for block, names in ((resp.u, resp.input_labels), (resp.y, resp.output_labels),
                         (resp.x, resp.state_labels)):
        if block is None or not names:
            continue
        for i, name in enumerate(names):
            data[name] = np.asarray(block[i]).reshape(-1)
    return pandas.DataFrame(data)
