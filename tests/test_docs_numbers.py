"""No result number is typed into the prose: each is rendered from a committed run.

A number typed by hand goes stale the day its run is redone (issue 43 found "Region B 11.1×"
on the home page where the committed paper run gives 6.11). So every number in README.md and
docs/**/*.md that stands beside a unit of a result -- a factor (``×``, ``3.2x``), a share
(``%``), a duration (``s``, ``ms``, ``µs``, ``min``, ``h``, ``minutes``...), a rate
(``TFLOP/s``, ``GB/s``) or a size (``GB``, ``MB``, ``GiB``...) -- must be one of

* a quote, ``{{ median quick/cloze mse_seeds/s4+attention }}`` or
  ``{{ run medium/las-ablation sweep_seconds min:.1f }}``, rendered by the site's hook from
  ``docs/results/`` (:mod:`lds_toolkit.experiments.report.quotes`);
* inside a region generated from committed runs (:data:`RENDERED_REGIONS`), each with the
  test that fails when the region differs from what its generator writes;
* on :data:`ALLOWLIST`, with its source: a paper's constant, a definition, a budget we set.

Everything else fails, naming the page, the line and the number. The README is not rendered
(GitHub shows it as written), so it carries no result number: it links to the pages that do.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: Pages scanned: the README and every Markdown page of the docs (vendored files and the
#: committed runs' own files excluded).
PAGES = [ROOT / "README.md"] + sorted(
    p for p in DOCS.rglob("*.md")
    if not ({"_site", "results", "assets"} & set(p.relative_to(DOCS).parts)))

_NUMBER = r"(?<![\w.{/])\d+(?:[.,]\d+)*(?:e-?\d+)?"
_UNITS_SPACED = (r"×|%|ms|µs|us|min|mins|minutes?|seconds?|s|h|hours?|TFLOP/s|GFLOP/s|"
                 r"TB/s|GB/s|MB/s|GB|MB|kB|KB|GiB|MiB|KiB|TiB")
#: A number with the unit of a result: ``2.5 s``, ``48.5 minutes``, ``11.1×``, ``1.04x``.
RESULT = re.compile(rf"{_NUMBER}(?:\s?(?:{_UNITS_SPACED})(?![\w/])|x(?![\w]))")
#: What the site renders: ``{{ function scale/name ... }}``.
QUOTE = re.compile(r"\{\{.*?\}\}")

#: Regions written by a generator from committed numbers: page -> (begin marker, end marker,
#: the test that fails when the region is not what the generator writes).
RENDERED_REGIONS: dict[str, list[tuple[str, str, str]]] = {
    "docs/index.md": [(
        "<!-- reproduction-table:begin", "<!-- reproduction-table:end -->",
        "tests/test_docs_results.py::test_committed_table_equals_the_table_of_the_committed_"
        "numbers")],
    "docs/benchmarks.md": [(
        "<!-- bench-table:begin", "<!-- bench-table:end -->",
        "tests/test_docs_benchmarks.py::test_the_benchmarks_page_is_rendered_from_the_"
        "committed_inputs")],
    "docs/architecture.md": [(
        "<!-- module-map:begin", "<!-- module-map:end -->",
        "tests/test_architecture.py::test_module_map_is_generated_from_the_current_docstrings")],
}

#: The exceptions: (page, a text the line contains, the number as written, its source).
ALLOWLIST: list[tuple[str, str, str, str]] = [
    # README.md and the general pages
    ("docs/layers/README.md", "Every layer and `SequenceModel` stays within 1 %", "1 %",
     "the bar of tests/neural/test_bf16.py (BAR = 0.01, max-relative), a test tolerance"),
    ("docs/control.md", "the impulse response within 10 %", "10 %",
     "the tolerance tests/test_tutorials.py asserts on tutorial 4 (impulse_error_T < 0.1)"),
    ("docs/experiments/index.md", "a margin of 1 holds on 84 %", "84 %",
     "a definition: margin z = Φ⁻¹(share held), Φ(1) = 0.841 (lds_toolkit.experiments."
     "margins)"),
    ("docs/lessons/README.md", "it must take **≤ 100 ms warm**", "100 ms",
     "the slider budget we set (benchmarks/bench_sliders.py; tests/teaching/test_sliders.py "
     "checks the committed run meets it)"),

    # (separator: keep)

    # the experiment pages and docs/learning/

]


def _blank_regions(page: str, text: str) -> str:
    """``text`` with each rendered region's lines emptied (line numbers kept)."""
    for begin, end, _ in RENDERED_REGIONS.get(page, []):
        start = text.index(begin)
        stop = text.index(end, start)
        inner = text[start:stop]
        text = text[:start] + re.sub(r"[^\n]", "", inner) + text[stop:]
    return text


def typed_numbers(page: str, text: str) -> list[tuple[int, str, str]]:
    """(line number, number as written, line) for every result number typed into ``text``
    outside quotes and rendered regions."""
    text = _blank_regions(page, text)
    found = []
    for i, line in enumerate(text.splitlines(), start=1):
        bare = QUOTE.sub("⟨quote⟩", line)
        for m in RESULT.finditer(bare):
            found.append((i, m.group(0), line.strip()))
    return found


def _allowed(page: str, number: str, line: str) -> bool:
    return any(page == p and number == n and contains in line
               for p, contains, n, _ in ALLOWLIST)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_result_number_is_typed_into_the_page(page):
    rel = page.relative_to(ROOT).as_posix()
    bad = [f"{rel}:{i}: {number!r} in: {line[:160]}"
           for i, number, line in typed_numbers(rel, page.read_text())
           if not _allowed(rel, number, line)]
    assert not bad, ("result numbers typed by hand (render them from docs/results with a "
                     "{{ quote }}, or remove them):\n" + "\n".join(bad))


def test_every_allowlist_entry_is_used_and_has_a_source():
    texts = {p.relative_to(ROOT).as_posix(): p.read_text() for p in PAGES}
    for page, contains, number, source in ALLOWLIST:
        assert source.strip(), (page, number)
        hits = typed_numbers(page, texts[page]) if page in texts else []
        assert any(n == number and contains in line for _, n, line in hits), (
            f"allowlist entry {page}: {number!r} ({contains!r}) matches nothing: remove it")


def test_every_rendered_region_is_checked_by_a_test_that_exists():
    for page, regions in RENDERED_REGIONS.items():
        text = (ROOT / page).read_text()
        for begin, end, test in regions:
            assert begin in text and end in text, (page, begin)
            path, _, name = test.partition("::")
            assert f"def {name}(" in (ROOT / path).read_text(), test


def test_the_scanner_sees_typed_numbers_and_passes_rendered_ones():
    text = ("Region B 11.1× over seeds; 48.5 minutes; 1.04x SDPA; 3 ms a step; 7.7-17.7 s;\n"
            "{{ ratio paper/x a b }}× and {{ run quick/cloze sweep_seconds min:.1f }};\n"
            "T = 2^14, 24 filters, 2 cores, x4, H_T, 100x100 matrix, version 0.26\n")
    found = [n for _, n, _ in typed_numbers("page.md", text)]
    assert found == ["11.1×", "48.5 minutes", "1.04x", "3 ms", "17.7 s"]
