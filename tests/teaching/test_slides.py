"""The lesson slides work offline: they load reveal.js, require.js and MathJax from a
``vendor/`` folder beside them, the vendored files are the committed ones (manifest), and the
slide cache's key follows them. ``make docs-check`` opens built slides in Chromium with every
outside request aborted (docs/_site/check_site.py); these are the cheap checks of the same
things on the generated HTML."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("nbconvert", reason="the docs extra is not installed (pip install -e .[docs])")

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "docs" / "_site"


def _load(name: str):
    key = f"test_slides_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, SITE / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


vendor_slides = _load("vendor_slides")
check_site = _load("check_site")
lessons = _load("lessons")
slides = lessons._slides()


def _notebook():
    """A small executed notebook: title, a slide with inline and display math, a code cell
    with a PNG figure and a slider widget's output."""
    import nbformat

    png = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAA"
           "AABJRU5ErkJggg==")
    code = nbformat.v4.new_code_cell("show_slider('lesson01.memory')")
    code.outputs = [nbformat.v4.new_output(
        "display_data", data={"image/png": png, "text/plain": "<Figure>",
                              slides.WIDGET_MIME: {"model_id": "abc", "version_major": 2}})]
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Lesson 1 — Memory\n\nAn eigenvalue $\\lambda$."),
        nbformat.v4.new_markdown_cell("## Memory\n\n$$\\ell_\\varepsilon = 1/\\delta$$"),
        code])
    nb.metadata["widgets"] = {slides.WIDGET_MIME.replace("view", "state"): {"state": {}}}
    return nb


def test_vendored_files_match_their_manifest_with_a_licence_per_package():
    assert vendor_slides.manifest_problems(slides.VENDOR) == []
    manifest = json.loads((slides.VENDOR / vendor_slides.MANIFEST).read_text())
    assert set(manifest["packages"]) == set(vendor_slides.PACKAGES)
    for name, spec in vendor_slides.PACKAGES.items():
        assert manifest["packages"][name]["version"] == spec["version"]
        assert manifest["packages"][name]["integrity"] == spec["integrity"]
        assert f"{name}/LICENSE" in manifest["files"], name


def test_manifest_check_names_an_edited_a_missing_and_an_extra_file(tmp_path):
    copy = tmp_path / "v"
    shutil.copytree(slides.VENDOR, copy)
    (copy / "requirejs" / "require.js").write_bytes(b"edited")
    (copy / "mathjax" / "MathJax.js").unlink()
    (copy / "reveal.js" / "extra.js").write_text("")
    problems = vendor_slides.manifest_problems(copy)
    assert len(problems) == 3
    assert problems[:2] == ["missing: mathjax/MathJax.js",
                            "not in the manifest: reveal.js/extra.js"]
    assert problems[2].startswith("changed: requirejs/require.js (sha256 ")


def test_integrity_is_npm_sri_sha512():
    import base64
    import hashlib

    data = b"reveal"
    expected = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    assert vendor_slides.integrity(data) == expected


def test_slides_load_only_vendored_files_and_carry_the_title():
    html = slides.slides_html(_notebook(), title="Memory & regions")
    assert check_site.external_references(html) == []
    used = {m.split("?")[0] for m in re.findall(r"""["'](vendor/[^"']+)["']""", html)}
    expected = {"vendor/requirejs/require.js", "vendor/mathjax/MathJax.js",
                "vendor/reveal.js/dist/reveal.js", "vendor/reveal.js/dist/reveal.css",
                f"vendor/reveal.js/dist/theme/{slides.THEME}.css",
                "vendor/reveal.js/plugin/notes/notes.js"}
    assert used == expected
    for path in used:
        assert (slides.VENDOR / path.removeprefix("vendor/")).is_file(), path
    assert "<title>Memory &amp; regions slides</title>" in html
    assert slides.WIDGET_MIME not in html and "mermaid" not in html
    assert html.count("<section") >= 2  # a slide at each # / ## heading
    # the check sees nbconvert's defaults: its CDN scripts
    from nbconvert import SlidesExporter

    cdn = check_site.external_references(SlidesExporter().from_notebook_node(_notebook())[0])
    assert any("unpkg.com/reveal.js" in u for u in cdn) and any("mathjax" in u for u in cdn)


def test_vendored_style_sheets_find_their_fonts():
    """Each url()/@import of a vendored style sheet that a current browser loads (woff,
    css) names a vendored file."""
    refs = re.compile(r"""(?:@import\s+(?:url\(\s*)?|url\(\s*)["']?([^"')\s;?#]+)""")
    checked = 0
    for css in slides.VENDOR.rglob("*.css"):
        for ref in refs.findall(css.read_text()):
            if ref.endswith((".woff", ".css")):
                assert (css.parent / ref).is_file(), f"{css.name}: {ref}"
                checked += 1
    assert checked >= 5  # the white theme's font sheet and its four woff files


def test_vendored_folder_goes_beside_the_slides(tmp_path):
    dest = slides.publish_vendor(tmp_path / "slides")
    assert dest == tmp_path / "slides" / "vendor"
    assert vendor_slides.manifest_problems(dest) == []
    assets = lessons.slide_assets()
    assert set(assets) == {f"vendor/{p.relative_to(dest).as_posix()}"
                           for p in dest.rglob("*") if p.is_file()}


def test_slide_cache_key_follows_the_vendored_files_and_the_slide_code(tmp_path, monkeypatch):
    script = lessons.lesson_scripts()[0]
    key = lessons._cache_key(script)
    vendor = tmp_path / "v"
    shutil.copytree(slides.VENDOR, vendor)
    monkeypatch.setattr(slides, "VENDOR", vendor)
    assert lessons._cache_key(script) == key
    (vendor / "reveal.js" / "dist" / "reveal.css").write_text("/* edited */")
    assert lessons._cache_key(script) != key
    monkeypatch.setattr(slides, "VENDOR", SITE / "slides_vendor")
    code = tmp_path / "slides.py"
    code.write_text(Path(slides.__file__).read_text() + "\n# edited\n")
    monkeypatch.setattr(slides, "__file__", str(code))
    assert lessons._cache_key(script) != key


def test_external_reference_check_reads_attributes_styles_and_scripts():
    page = ('<link href="vendor/a.css"><img src="data:image/png;base64,AA==">'
            '<a href="https://example.org/paper">a paper</a>'
            '<style>/* from https://example.org */ @import url(https://fonts.example/x.css);'
            ' .a { background: url("//cdn.example/b.png"); }</style>'
            '<script>// docs: https://example.org/docs\n'
            'var widget = "https://unpkg.example/embed.js"; load("vendor/c.js");</script>'
            '<script src="http://cdn.example/d.js"></script>')
    assert check_site.external_references(page) == [
        "http://cdn.example/d.js", "https://fonts.example/x.css", "//cdn.example/b.png",
        "https://unpkg.example/embed.js"]
