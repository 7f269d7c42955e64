"""Every function of the curated top-level API is fully annotated (parameters and return),
so that a user's type checker sees real types; mypy checks them (pyproject [tool.mypy],
tests/typing/public_api.py). Classes are checked through their use in tests/typing."""

from __future__ import annotations

import inspect

import lds_toolkit


def test_top_level_functions_are_annotated():
    missing = []
    for name in lds_toolkit.__all__:
        obj = getattr(lds_toolkit, name)
        if not inspect.isfunction(obj):
            continue
        sig = inspect.signature(obj)
        bare = [p for p in sig.parameters.values() if p.annotation is inspect.Parameter.empty]
        if bare or sig.return_annotation is inspect.Signature.empty:
            missing.append(f"{name}: {[p.name for p in bare]}"
                           + (" (return)" if sig.return_annotation is inspect.Signature.empty
                              else ""))
    assert not missing, "unannotated public functions:\n" + "\n".join(missing)
