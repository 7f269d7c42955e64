r"""No result number is typed into the prose: each is rendered from a committed run.

A number typed by hand goes stale the day its run is redone (issue 43 found "Region B 11.1×"
on the home page where the committed paper run gives 6.11). So every number in README.md and
docs/**/*.md that stands beside a unit of a result -- a factor (``×``, ``3.2x``), a share
(``%``), a duration (``s``, ``ms``, ``µs``, ``min``, ``h``, ``minutes``...), a rate
(``TFLOP/s``, ``GB/s``) or a size (``GB``, ``MB``, ``GiB``...) -- must be one of

* a quote, ``{{ median quick/cloze mse_seeds/s4+attention }}`` or
  ``{{ run medium/las-ablation sweep_seconds min:.1f }}``, rendered by the site's hook from
  ``docs/results/`` (:mod:`lds_toolkit.experiments.report.quotes`);
* inside a region generated from committed runs, or recomputed row by row from the
  configs it is arithmetic on (:data:`RENDERED_REGIONS`), each with the test that fails
  when the region differs from what it should say;
* on :data:`ALLOWLIST`, with its source: a paper's constant, a definition, a budget we set.

Everything else fails, naming the page, the line and the number. The README is not rendered
(GitHub shows it as written), so it carries no result number: it links to the pages that do.

A result often comes without a unit: a loss, an accuracy written as a fraction, a ratio
written as a power of ten, a state norm. A second scan (:func:`unitless_numbers`) catches
the two forms such numbers are typed in and definitions, configs and tolerances rarely are:

* **scientific notation with a mantissa other than 1**: ``1.1·10^4``, ``1.4·10⁶``,
  ``2.490\cdot10^{-4}``, ``3e-7``, ``2.35e-7``. A bare power of ten (``1e-10``, ``10⁻⁸``,
  ``10^6``) is a tolerance, a size or an order of magnitude and passes;
* **a decimal with three or more significant digits** (``98.2``, ``0.756``, ``12.67``,
  ``1.000``), or with two below 0.01 (``0.0071``). ``0.5``, ``0.25``, ``2.2`` pass: at that
  precision a number is a config, a bound or a paper's round value far more often than a
  measurement.

Not scanned by this rule, each for a reason a reader can check on the page:

* code, fenced or inline: configs, calls and printed outputs that the tests run
  (``tests/control/test_docs_control.py`` runs control.md's analysis block, for instance);
* a quotation in double quotes, ``"from 2·10² to 3·10¹"``: a paper's own words;
* a number in a clause that names the paper it comes from, ``(paper: 0.15)``, ``Table 3
  credits ELD with +1.14 points``: the text back to the clause's start (``. ``, ``;``, a
  table cell, a paragraph; a parenthesis is read with the clause around it, a finished one
  is skipped) contains ``paper``, ``paper's`` or ``Table N`` (``paper scale`` does not
  count);
* a threshold: a number right after ``<``, ``>``, ``≤``, ``≥`` or ``±`` (a claim's bar, a
  tolerance); a config: a number right after ``lr`` or ``learning rate``;
* a version (``Python 3.10``, ``torch 2.11.0``) and a modulus written as nines, ``0.9999``,
  ``0.9995`` (1 − 10⁻ᵏ, a system's config).

Anything else is rendered, rephrased, or put on :data:`ALLOWLIST` with its source.
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
    # the compute and gpu-sizing tables: arithmetic on the configs and on the step times of
    # tests/neural_experiments/test_gpu_scale.py's STEP_SECONDS (whose comment gives their
    # sources), recomputed row by row there
    **{f"docs/experiments/{name}.md": [
        ("<!-- compute-table:begin", "<!-- compute-table:end -->",
         "tests/neural_experiments/test_gpu_scale.py::test_the_compute_tables_are_the_configs_"
         "arithmetic"),
        ("<!-- gpu-sizing:begin", "<!-- gpu-sizing:end -->",
         "tests/neural_experiments/test_gpu_scale.py::test_the_pages_sizing_tables_are_this_"
         "arithmetic")] for name in ("assoc-recall", "las-ablation")},
}

#: The exceptions: (page, a text the line contains, the number as written, its source).
#: An entry covers every line of the page that contains the text and the number.
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
    ("docs/control.md", "\\sigma^* = \\lambda_{\\min}(M)/(2\\lVert PBK\\rVert)", "0.0519",
     "a closed form of the paper system's matrices: λ_min(M)/(2‖PBK‖) = 0.4410/8.5 "
     "(control.paper_system(); M's eigenvalue is quoted in section 1)"),
    ("docs/control.md", "a factor $e^{20}", "5\\cdot10^8", "a closed form: e^20 = 4.85e8"),
    ("docs/control.md", "eigenvalue 9.04096.", "9.04096",
     "the error message quoted verbatim, checked by tests/control/test_docs_control.py::"
     "test_quoted_sign_message_is_the_raised_one"),
    ("docs/experiments/assoc-recall.md", "Wilson lower bound (z = 1.96)", "1.96",
     "a definition: the standard normal's 97.5 % quantile, the z of a two-sided 95 % Wilson "
     "interval (catalog/assoc_recall.py)"),
    ("docs/experiments/assoc-recall.md", "| 1K | 100 |", "95.0",
     "the Focus paper's Table 1 (FlashTransformer at 1K; the summaries' "
     "paper_accuracy_percent holds Focus, Focus-H and the transformer only)"),
    ("docs/experiments/assoc-recall.md", "| 32K | 100 |", "32.4",
     "the Focus paper's Table 1 (FlashTransformer at 32K)"),
    ("docs/experiments/assoc-recall.md", "| 64K | 100 |", "26.7",
     "the Focus paper's Table 1 (FlashTransformer at 64K)"),
    ("docs/learning/spectral_filtering.md", "`RESOLVABLE_FLOOR` = 100 eps", "2.2e-14",
     "a definition: 100·eps with eps = 2^-52 (learning.filters.RESOLVABLE_FLOOR)"),
    ("docs/learning/spectral_filtering.md", "`EXTENDED_FLOOR` = 100·2^-96", "1.3e-27",
     "a definition: 100·2^-96 (learning.filters.EXTENDED_FLOOR)"),
    ("docs/learning/spectral_filtering.md", "0.95–1.05", "1.05",
     "the band of lengen-alg2's every-q-matches claims (catalog/lengen_alg2.py)"),
    ("docs/learning/spectral_filtering.md", "within 0.8–1.25", "1.25",
     "the band of lengen-region-a's 7/8-matches-quick claim (catalog/lengen_region_a.py)"),
    ("docs/learning/spectral_filtering.md", "above 5e-4", "5e-4",
     "the threshold of regret-scaling's slope claims (catalog/regret_scaling.py)"),
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


_SUPERSCRIPT = "⁰¹²³⁴⁵⁶⁷⁸⁹⁻"
#: Scientific notation: ``2.35e-7``, ``1.1·10^4``, ``1.4·10⁶``, ``2.490\cdot10^{-4}``.
SCIENTIFIC = re.compile(
    r"(?<![\w.])(?P<mantissa>\d+(?:\.\d+)?)"
    r"(?:[eE][-+]?\d+|\s?(?:[·×*]|\\cdot)\s?10(?:\^\{?[-−]?\d+\}?|[" + _SUPERSCRIPT + r"]+))"
    r"(?![\w]|\.\d)")
#: A decimal written out: ``98.2``, ``0.0071`` (not a part of ``2.11.0``).
DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?![\w]|\.\d)")
#: Words after which a number is a version.
VERSION = re.compile(r"(?:Python|python|PyTorch|torch|numpy|NumPy|scipy|python-control|CUDA|"
                     r"version|nbgrader|otter-grader|\bv)\s*[≥>=]*\s*$")
#: A comparison right before a number (a threshold or a tolerance), or a learning rate.
THRESHOLD = re.compile(r"(?:[<>≤≥±]=?|\blr\s*=?|\blearning rate)\s*$")
#: A clause that names the paper its number comes from.
PAPER = re.compile(r"(?<!scale )\b(?:papers?(?:'s|')?(?![\s-]scale|/|\w)|Tables? \d)")
_NINES = re.compile(r"0\.9+5?")


def _blank(text: str, pattern: re.Pattern | str, flags: int = 0) -> str:
    """``text`` with every match of ``pattern`` replaced by blanks (newlines kept), so that
    offsets and line numbers stay those of the page."""
    return re.sub(pattern, lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=flags)


def _prose(page: str, text: str) -> str:
    """The page with what the unit-less rule does not read blanked: rendered regions,
    quotes, fenced and inline code, quotations in double quotes."""
    text = _blank_regions(page, text)
    text = _blank(text, r"^[ \t]*```.*?^[ \t]*```[^\n]*$", re.S | re.M)
    text = _blank(text, QUOTE)
    text = _blank(text, r"`[^`\n]+`")
    text = _blank(text, r'"(?:[^"\n]|\n(?![ \t]*\n))*"')
    return _blank(text, r"“[^”]*”")


def _clause(prose: str, at: int) -> str:
    """The clause a number at ``at`` stands in, back to its start: a sentence (``. ``), a
    ``;``, a table cell or a paragraph; an enclosing parenthesis belongs to it, a finished
    one before the number does not."""
    out, depth, i = [], 0, at - 1
    while i >= 0:
        c = prose[i]
        if c == ")":
            depth += 1
        elif c == "(":
            depth = max(depth - 1, 0)
        elif depth == 0:
            if c in ";|" or prose.startswith(". ", i) or prose.startswith("\n\n", i - 1):
                break
            out.append(c)
        i -= 1
    return "".join(reversed(out))


def _significant(number: str) -> tuple[int, int]:
    """(significant digits as written, zeros between the point and the first of them)."""
    whole, _, frac = number.partition(".")
    digits = (whole + frac).lstrip("0")
    return len(digits), (len(frac) - len(frac.lstrip("0")) if whole.strip("0") == "" else 0)


def unitless_numbers(page: str, text: str) -> list[tuple[int, str, str]]:
    """(line number, number as written, line) for every result number typed into ``text``
    without a unit, by the rule of the module docstring."""
    prose = _prose(page, text)
    lines = text.splitlines()
    found = []

    def keep(m: re.Match, number: str) -> None:
        before = prose[max(0, m.start() - 40):m.start()]
        if VERSION.search(before) or THRESHOLD.search(before) or _NINES.fullmatch(number):
            return
        if PAPER.search(_clause(prose, m.start())):
            return
        i = prose.count("\n", 0, m.start())
        found.append((m.start(), i + 1, number, lines[i].strip()))

    for m in SCIENTIFIC.finditer(prose):
        if float(m.group("mantissa")) != 1:
            keep(m, m.group(0))
    rest = _blank(prose, SCIENTIFIC)
    for m in DECIMAL.finditer(rest):
        digits, zeros = _significant(m.group(0))
        if digits >= 3 or (zeros >= 2 and digits >= 2):
            keep(m, m.group(0))
    return [hit[1:] for hit in sorted(found)]


def _allowed(page: str, number: str, line: str) -> bool:
    return any(page == p and number == n and contains in line
               for p, contains, n, _ in ALLOWLIST)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_result_number_is_typed_into_the_page(page):
    rel = page.relative_to(ROOT).as_posix()
    text = page.read_text()
    bad = [f"{rel}:{i}: {number!r} in: {line[:160]}"
           for i, number, line in typed_numbers(rel, text) + unitless_numbers(rel, text)
           if not _allowed(rel, number, line)]
    assert not bad, ("result numbers typed by hand (render them from docs/results with a "
                     "{{ quote }}, or remove them):\n" + "\n".join(bad))


def test_every_allowlist_entry_is_used_and_has_a_source():
    texts = {p.relative_to(ROOT).as_posix(): p.read_text() for p in PAGES}
    for page, contains, number, source in ALLOWLIST:
        assert source.strip(), (page, number)
        text = texts.get(page, "")
        hits = typed_numbers(page, text) + unitless_numbers(page, text)
        assert any(n == number and contains in line for _, n, line in hits), (
            f"allowlist entry {page}: {number!r} ({contains!r}) matches nothing: remove it")


def test_every_rendered_region_is_checked_by_a_test_that_exists():
    for page, regions in RENDERED_REGIONS.items():
        text = (ROOT / page).read_text()
        for begin, end, test in regions:
            assert begin in text and end in text, (page, begin)
            path, _, name = test.partition("::")
            assert f"def {name}(" in (ROOT / path).read_text(), test


def test_the_unitless_scan_catches_results_and_passes_definitions():
    """What the second rule must catch, and the definitions, configs, tolerances, quotes,
    code and paper values it must let through (each example written as the pages write
    them)."""
    caught = ("with no perturbation, |x(20)| reaches 1.1·10^4.\n"
              "median |x(10)| between 1.4·10⁶ and 2.2·10⁶;\n"
              "seed 0: 0.283 → loss 2.35e-7, and 3e-7 at the end.\n"
              "the floor is 1 - 2.490\\cdot10^{-4} here; the error fell to 0.0071;\n"
              "LaS scores 98.2, the old ceiling 0.694, ratio -0.632, residual norm 12.67.\n"
              "| 0 | 3.2e-4 | 0.21 | 5.6e-11 |\n")
    got = [n for _, n, _ in unitless_numbers("page.md", caught)]
    assert got == ["1.1·10^4", "1.4·10⁶", "2.2·10⁶", "0.283", "2.35e-7", "3e-7",
                   "2.490\\cdot10^{-4}", "0.0071", "98.2", "0.694", "0.632", "12.67",
                   "3.2e-4", "5.6e-11"]
    passed = ("to 1e-10, 10⁻⁸ and 10^6; κ = 0.5, P = 0.25, lr 3e-3 and lr=4e-3, 2.2 s.\n"
              "Python ≥ 3.10, torch 2.11.0+cu130, numpy 2.5.2, version 0.26.\n"
              "ρ(A) up to 0.9999 at radius 0.9995; a bar of > 5e-4 and ±3e-3, ≤ 2.35e-7.\n"
              "S4+'s volume is {{ value medium/nss-s4 x .2f }} (paper: 0.153).\n"
              "Table 3 credits ELD with +1.14 points (cT + ELD 41.08 against 39.94).\n"
              'the paper: "from 2·10² to 3·10¹", and “12.345” in curly quotes.\n'
              "`rate = 0.99991` in code, and\n\n```\nlr 3.14159e-3  # 2.718\n```\n")
    assert unitless_numbers("page.md", passed) == []
    # a clause names the paper only up to its end; a finished parenthesis does not count
    text = ("the paper's claim fails. Ours is 1.234; (the paper's claim) needs 5.678,\n"
            "at paper scale 2.345 and 2.3·10^5 at `--scale paper` 3.456.\n")
    assert [n for _, n, _ in unitless_numbers("page.md", text)] == [
        "1.234", "5.678", "2.345", "2.3·10^5", "3.456"]
    assert [i for i, _, _ in unitless_numbers("page.md", caught)][:3] == [1, 2, 2]


def test_the_scanner_sees_typed_numbers_and_passes_rendered_ones():
    text = ("Region B 11.1× over seeds; 48.5 minutes; 1.04x SDPA; 3 ms a step; 7.7-17.7 s;\n"
            "{{ ratio paper/x a b }}× and {{ run quick/cloze sweep_seconds min:.1f }};\n"
            "T = 2^14, 24 filters, 2 cores, x4, H_T, 100x100 matrix, version 0.26\n")
    found = [n for _, n, _ in typed_numbers("page.md", text)]
    assert found == ["11.1×", "48.5 minutes", "1.04x", "3 ms", "17.7 s"]
