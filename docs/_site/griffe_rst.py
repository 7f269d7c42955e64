"""Griffe extension: render the Sphinx roles of our docstrings as code.

The docstrings are numpy style with a few Sphinx roles (``:func:`verify```,
``:class:`~lds_toolkit.systems.LDS```); mkdocstrings renders docstrings as Markdown, where a
role would show up literally. This turns each role into inline code of its target (the last
component when the target starts with ``~``, as Sphinx shows it).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|obj|exc|const):`(~?)([^`]+)`")


def _replace(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    return f"`{target.rsplit('.', 1)[-1] if tilde else target}`"


class SphinxRoles(griffe.Extension):
    """Rewrite ``:role:`target``` as ```target``` in every docstring."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(_replace, obj.docstring.value)
