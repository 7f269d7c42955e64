"""Griffe extension: render the Sphinx roles of our docstrings as code, their math as math.

The docstrings are numpy style with a few Sphinx roles (``:func:`verify```,
``:class:`~lds_toolkit.systems.LDS```); mkdocstrings renders docstrings as Markdown, where a
role would show up literally. This turns each role into inline code of its target (the last
component when the target starts with ``~``, as Sphinx shows it), and the math of the
docstrings into the site's one math mechanism: ``:math:`x_t``` becomes ``$x_t$`` and a
``.. math::`` directive a ``$$ … $$`` block, both rendered by pymdownx.arithmatex and KaTeX
like the equations of every other page.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|obj|exc|const):`(~?)([^`]+)`")


_MATH_ROLE = re.compile(r":math:`([^`]+)`")
_MATH_DIRECTIVE = re.compile(r"^([ \t]*)\.\. math::[ \t]*\n((?:\1[ \t]+\S.*\n|[ \t]*\n)+)",
                             re.M)


def _replace(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    return f"`{target.rsplit('.', 1)[-1] if tilde else target}`"


def _math_block(match: re.Match[str]) -> str:
    indent, body = match.group(1), match.group(2)
    lines = [line.strip() for line in body.strip("\n").splitlines()]
    return f"{indent}$$\n" + "".join(f"{indent}{line}\n" for line in lines if line) + \
        f"{indent}$$\n\n"


def rst_math(text: str) -> str:
    """``text`` with ``:math:`…``` as ``$…$`` and ``.. math::`` blocks as ``$$ … $$``."""
    text = _MATH_DIRECTIVE.sub(_math_block, text if text.endswith("\n") else text + "\n")
    return _MATH_ROLE.sub(lambda m: f"${m.group(1).strip()}$", text).rstrip("\n")


class SphinxRoles(griffe.Extension):
    """Rewrite ``:role:`target``` as ```target``` in every docstring."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rst_math(_ROLE.sub(_replace, obj.docstring.value))
