"""A lesson's reveal.js slides, working offline: scripts, styles and fonts from a ``vendor/``
folder next to the slides, nothing fetched from a network.

nbconvert's SlidesExporter (its ``reveal`` template) loads reveal.js, require.js, jQuery,
MathJax and mermaid from CDNs by default. :func:`slides_html` points reveal.js, require.js and
MathJax at ``vendor/`` (relative to the slides) and drops what the slides do not use (jQuery:
only the ``scroll`` option reads it; mermaid; the widget renderer, since a slider shows its
figure). The vendored files are a pinned subset of the upstream npm packages, committed in
``docs/_site/slides_vendor/`` with their licences and a manifest (file -> sha256), re-created
from the tarballs by ``docs/_site/vendor_slides.py``. :func:`publish_vendor` and
:func:`vendor_files` put that folder next to the slides as ``vendor/`` (``make lessons``' handout
and the site's ``lessons/``). Opened from disk or from a web server, the deck needs nothing
else: ``make docs-check`` opens one with every request outside the site aborted.
"""

from __future__ import annotations

import copy
import hashlib
import re
import shutil
from pathlib import Path

#: The committed subset of reveal.js, require.js and MathJax (what vendor_slides.py writes).
VENDOR = Path(__file__).resolve().parent / "slides_vendor"
#: Its name next to the slides; the slides refer to it by this relative path.
VENDOR_DIR = "vendor"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
#: reveal.js theme: ``white`` takes its fonts from reveal.js's own folder (``simple``, the
#: exporter's default, @imports Google Fonts).
THEME = "white"
#: MathJax's configuration, as nbconvert's default URL names it (the combined TeX input and
#: CommonHTML output, plus the Safe extension).
MATHJAX_CONFIG = "TeX-AMS_CHTML-full,Safe"

# nbconvert's reveal template without the blocks that load from a network what the slides do
# not use: jQuery (read only by the template's "scroll" option, off here), mermaid (an ES
# module import in the head) and the widget renderer (sliders show their figure instead); an
# empty icon, so that a browser does not ask the server for /favicon.ico.
_TEMPLATE_NAME = "lds_offline_slides.html.j2"
_TEMPLATE = """{%- extends 'reveal/index.html.j2' -%}
{%- block html_head_js_jquery -%}{%- endblock html_head_js_jquery -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_css -%}<link rel="icon" href="data:,">{%- endblock html_head_css -%}
"""


def slides_html(nb, *, title: str, vendor: str = VENDOR_DIR) -> str:
    """reveal.js slides of an executed notebook, titled ``title``: a new slide at each
    ``#``/``##`` heading, the rest continues the slide; sliders as their figure at the
    default values.

    reveal.js 4.0.2 (theme ``white``), require.js 2.1.10 and MathJax 2.7.7 are loaded from
    ``vendor`` (a path relative to the slides' file: :func:`publish_vendor` puts the vendored
    folder there), so the slides work without a network connection.
    """
    from jinja2 import DictLoader
    from nbconvert import SlidesExporter

    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    nb.metadata["title"] = title  # the page's <title> (nbconvert appends " slides")
    for cell in nb.cells:
        for output in cell.get("outputs", []):  # a slider shows its figure (PNG), not a
            output.get("data", {}).pop(WIDGET_MIME, None)  # widget with no kernel behind it
        first = cell.source.lstrip().split("\n", 1)[0] if cell.cell_type == "markdown" else ""
        kind = "slide" if re.match(r"#{1,2} ", first) else "-"
        cell.metadata["slideshow"] = {"slide_type": kind}
    exporter = SlidesExporter(
        extra_loaders=[DictLoader({_TEMPLATE_NAME: _TEMPLATE})], template_file=_TEMPLATE_NAME,
        reveal_url_prefix=f"{vendor}/reveal.js", reveal_theme=THEME,
        require_js_url=f"{vendor}/requirejs/require.js",
        mathjax_url=f"{vendor}/mathjax/MathJax.js?config={MATHJAX_CONFIG}")
    body, _ = exporter.from_notebook_node(nb)
    return body


def _vendored(folder: Path | None = None) -> list[Path]:
    folder = VENDOR if folder is None else folder
    return sorted(p for p in folder.rglob("*") if p.is_file())


def vendor_files(folder: Path | None = None) -> dict[str, bytes]:
    """The vendored folder as the site publishes it: ``{"vendor/<path>": bytes}``."""
    folder = VENDOR if folder is None else folder
    return {f"{VENDOR_DIR}/{p.relative_to(folder).as_posix()}": p.read_bytes()
            for p in _vendored(folder)}


def publish_vendor(slides_dir: Path, folder: Path | None = None) -> Path:
    """Copy the vendored folder to ``slides_dir/vendor`` (replacing an older copy); its path."""
    folder = VENDOR if folder is None else folder
    dest = Path(slides_dir) / VENDOR_DIR
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(folder, dest)
    return dest


def vendor_digest(folder: Path | None = None) -> str:
    """sha256 over the vendored files' paths and bytes (part of the slide cache's key)."""
    folder = VENDOR if folder is None else folder
    h = hashlib.sha256()
    for p in _vendored(folder):
        h.update(p.relative_to(folder).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()
