"""``make docs-check``: the built site in a real browser, and its equations.

First, without a browser, every page of ``site/`` is read (:func:`static_problems`): the
site has one math mechanism (pymdownx.arithmatex marks ``$…$``/``$$…$$`` in the Markdown,
the vendored KaTeX renders them), so the check fails on

* raw math left in the text of any page: a ``$…$``, a LaTeX command (``\frac``) or a
  Sphinx ``:math:`` role outside code and outside the marked equations (a dollar that
  arithmatex did not take, e.g. next to a space, or a docstring's math not converted);
* a code block without a language (or marked ``text``, what an unlabelled block becomes) in
  a prose page (the user guide, the home and getting started pages, :data:`PROSE`):
  equations belong in ``$$ … $$``, code names its language (``python``, ``bash``).

Then it serves ``site/`` on 127.0.0.1 (an ephemeral port, Python's http.server in a thread),
opens the pages of :data:`PAGES` in headless Chromium (Debian's ``chromium`` package, driven
by Playwright through ``executable_path``: no browser download), and fails on

* a console error or an uncaught page error,
* a failed request (any resource the page asks for and does not get: 4xx/5xx or a network
  error, e.g. something fetched from outside),
* an image that did not load (``naturalWidth == 0``), a KaTeX error in an equation, or a
  marked equation that KaTeX did not render.

Lesson slides (:data:`SLIDES`, reveal.js decks that load reveal.js, require.js and MathJax
from ``lessons/vendor/``) are checked offline: the static pass lists every script, style sheet,
font or image a deck would load from outside (:func:`external_references`), and the browser
opens the deck twice, from the local server and as a file (``file://``), with **every request
that is not to the local site or file aborted**, and fails on

* any aborted, failed (network error, 4xx/5xx) request, a console error or a page error,
* MathJax not rendered: no rendered equation (``.mjx-chtml``), raw ``$…$`` or LaTeX left in
  the slides' text, a "Math Processing Error" or a TeX error,
* reveal.js not initialised (``Reveal.isReady()``),

and screenshots the first slide with an equation (``slides-http.png``, ``slides-file.png``).

It writes a full-page screenshot of each page to ``--out`` (default ``docs-check/``) and
prints what it found. Look at the screenshots: this checks that the pages work, not that
they read well.
"""

from __future__ import annotations

import argparse
import functools
import html
import html.parser
import http.server
import re
import shutil
import sys
import threading
from pathlib import Path

PAGES = {
    "home": "index.html",
    "systems": "systems.html",
    "control": "control.html",
    "spectral-filtering": "learning/spectral_filtering.html",
    "focus": "layers/focus.html",
    "las": "layers/las.html",
    "tutorial": "tutorials/02_spectral_filtering.html",
    "syllabus": "lessons/index.html",
    "lesson": "lessons/01_memory_and_regions.html",
    "api": "api/systems.html",
}
#: Lesson slides opened offline in the browser (paths in site/).
SLIDES = ("lessons/01_memory_and_regions.slides.html",)
#: Prose pages (paths in site/, ``*`` a folder): every code block names its language.
PROSE = ("index.html", "getting-started.html", "systems.html", "control.html",
         "learning/*", "layers/*")

_MATH = re.compile(r'<(span|div) class="arithmatex">.*?</\1>', re.S)
_CODE = re.compile(r"<(pre|code)\b[^>]*>.*?</\1>", re.S)
_DROP = re.compile(r"<(script|style|head|nav|header|footer)\b[^>]*>.*?</\1>", re.S)
_RAW_MATH = re.compile(r"(?<![\w$])\$(?=\S)[^$\n]{1,200}?(?<=\S)\$(?![\w$])|\$\$|"
                       r":math:`|\\[a-zA-Z]{2,}\b")
_BLOCK = re.compile(r'(<div class="([^"]*)highlight[^"]*">)?<pre\b[^>]*>(.*?)</pre>', re.S)


def is_prose(path: str) -> bool:
    """Whether ``path`` (relative to site/) is one of the :data:`PROSE` pages."""
    return any(path == p or (p.endswith("*") and path.startswith(p[:-1])) for p in PROSE)


def page_problems(text: str, prose: bool) -> list[str]:
    """Raw math in the readable text of one HTML page, and (``prose``) code blocks without
    a language."""
    problems = []
    main = _DROP.sub(" ", text)
    body = html.unescape(re.sub(r"<[^>]+>", " ", _CODE.sub(" ", _MATH.sub(" ", main))))
    for m in _RAW_MATH.finditer(body):
        around = " ".join(body[max(0, m.start() - 30):m.end() + 30].split())
        problems.append(f"raw math in the text: {m.group(0)!r} in \"…{around}…\"")
    if prose:
        for m in _BLOCK.finditer(main):
            lang = re.search(r"language-([\w+-]+)", m.group(2) or "")
            if lang is None or lang.group(1) in ("text", "plaintext", "none"):
                first = html.unescape(re.sub(r"<[^>]+>", "", m.group(3))).strip()
                first = first.splitlines()[0][:70] if first else ""
                problems.append(f"code block without a language (an equation? write it as "
                                f"$$ … $$): {first!r}")
    return problems


def static_problems(site: Path) -> dict[str, list[str]]:
    """:func:`page_problems` of every HTML page of ``site`` (API pages and tutorials: raw
    math only), by path."""
    out = {}
    for f in sorted(site.rglob("*.html")):
        rel = f.relative_to(site).as_posix()
        if rel.startswith("assets/") or rel in ("404.html", "search.html"):
            continue
        if rel.endswith(".slides.html"):  # a reveal.js deck: its MathJax renders its own
            problems = [f"loads from outside: {u}"  # $…$ (checked in the browser)
                        for u in external_references(f.read_text(encoding="utf-8"))]
        else:
            problems = page_problems(f.read_text(encoding="utf-8"), is_prose(rel))
        if problems:
            out[rel] = problems
    return out
class _References(html.parser.HTMLParser):
    """What a page loads: the src/href of every element but ``<a>`` (a link the reader
    follows), and the text of its ``<style>`` and ``<script>`` elements."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.urls: list[str] = []
        self.code: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        if tag != "a":
            self.urls += [v for k, v in attrs if k in ("src", "href") and v]
        self._in = tag if tag in ("style", "script") else None

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in:
            self.code.append(data)


# CSS/JS comments: /* … */, and // … after a line start, a space, ; { or } (not in a URL)
_COMMENTS = re.compile(r"/\*.*?\*/|(?:^|(?<=[\s;{}]))//[^\n]*", re.S | re.M)
_CODE_URLS = re.compile(r"""(?:@import\s+(?:url\(\s*)?|url\(\s*)["']?([^"')\s;]+)"""  # CSS
                        r"""|["']((?:https?:)?//[^"'\s]+)["']""")  # a URL string in a script


def external_references(text: str) -> list[str]:
    """Every URL outside the page's own folder tree that an HTML page would load: a src/href
    with a scheme (other than ``data:``) or starting with ``//`` (links ``<a href>`` are
    the reader's to follow and left out), an ``@import``/``url(...)`` of a style sheet, a
    URL string in a script (comments are skipped)."""
    refs = _References()
    refs.feed(text)
    urls = list(refs.urls)
    for code in refs.code:
        for m in _CODE_URLS.finditer(_COMMENTS.sub(" ", code)):
            urls.append(m.group(1) or m.group(2))
    return [u for u in urls if re.match(r"^(//|[a-zA-Z][\w+.-]*:)", u)
            and not u.startswith("data:")]


def page_references(text: str) -> list[str]:
    """The src/href of every element but ``<a>`` in an HTML page (what it loads)."""
    refs = _References()
    refs.feed(text)
    return refs.urls


BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


def find_chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("docs-check: Chromium not found; install Debian's package: apt-get install "
             "chromium")


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


def _watch(page, problems: list[str]) -> None:
    """Append to ``problems`` each console error, page error, failed request (network error)
    and HTTP error response of ``page``."""
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} "
                                                       f"({r.failure})"))
    page.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}")
            if r.status >= 400 else None)


def check_page(context, url: str, screenshot: Path) -> list[str]:
    problems: list[str] = []
    page = context.new_page()
    _watch(page, problems)
    page.goto(url, wait_until="networkidle")
    page.wait_for_timeout(500)  # let KaTeX's auto-render run
    broken = page.eval_on_selector_all(
        "img", "imgs => imgs.filter(i => !i.complete || i.naturalWidth === 0)"
               ".map(i => i.getAttribute('src'))")
    problems += [f"image not loaded: {src}" for src in broken]
    katex_errors = page.eval_on_selector_all(".katex-error", "els => els.map(e => e.title)")
    problems += [f"KaTeX error: {t}" for t in katex_errors]
    unrendered = page.eval_on_selector_all(
        ".arithmatex", "els => els.filter(e => !e.querySelector('.katex'))"
                       ".map(e => e.textContent.slice(0, 60))")
    problems += [f"equation not rendered: {t!r}" for t in unrendered]
    n_images = page.eval_on_selector_all("img", "imgs => imgs.length")
    n_math = page.eval_on_selector_all(".katex", "els => els.length")
    page.screenshot(path=str(screenshot), full_page=True)
    page.close()
    print(f"  {url}: {n_images} images, {n_math} rendered equations, "
          f"{len(problems)} problem(s); screenshot {screenshot}")
    return problems


# JavaScript run in the slides' page.
#: Resolves true once MathJax has typeset everything queued so far; false without MathJax.
_MATHJAX_DONE = """() => new Promise(r => {
  if (!(window.MathJax && MathJax.Hub)) { r(false); return; }
  setTimeout(() => r(false), 60000);
  MathJax.Hub.Queue(() => r(true));
})"""
#: reveal.js's state, through require.js (which loaded it as an AMD module: no window.Reveal).
_REVEAL_STATE = """(path) => new Promise(r => {
  if (typeof require !== 'function') { r({error: 'require.js did not load'}); return; }
  const timer = setTimeout(() => r({error: 'reveal.js not ready after 30 s'}), 30000);
  require([path], R => {
    const done = () => { clearTimeout(timer);
                         r({ready: R.isReady(), slides: R.getTotalSlides()}); };
    R.isReady() ? done() : R.on('ready', done);
  }, err => { clearTimeout(timer); r({error: String(err)}); });
})"""
#: The slides' readable text: no scripts (MathJax keeps the TeX there), code, MathJax output.
_SLIDE_TEXT = """() => {
  const c = document.querySelector('.reveal .slides').cloneNode(true);
  c.querySelectorAll('script, style, pre, code, .MathJax_Preview, .mjx-chtml, '
                     + '.MJX_Assistive_MathML').forEach(e => e.remove());
  return c.textContent;
}"""
#: Index of the first slide with a rendered equation, or -1.
_FIRST_MATH_SLIDE = """() => [...document.querySelectorAll('.reveal .slides > section')]
  .findIndex(s => s.querySelector('.mjx-chtml'))"""


def check_slides(context, url: str, inside: str, screenshot: Path) -> list[str]:
    """Open the reveal.js deck at ``url`` with every request whose URL does not start with
    ``inside`` (the local site, or the site's folder as a ``file://`` URL) aborted; the
    problems found (see the module's docstring). Prints the requests made and the equations
    rendered; screenshots the first slide with an equation."""
    problems: list[str] = []
    requests: list[str] = []
    aborted: list[str] = []

    def route(r):
        if r.request.url.startswith((inside, "data:")):
            r.continue_()
        else:
            aborted.append(r.request.url)
            r.abort()

    page = context.new_page()
    page.route("**/*", route)
    page.on("request", lambda r: requests.append(r.url))
    _watch(page, problems)
    page.goto(url, wait_until="load")
    if not page.evaluate(_MATHJAX_DONE):
        problems.append("MathJax did not load or did not finish typesetting within 60 s")
    source = page.content()
    reveal_js = re.search(r"""["']([^"']*/dist/reveal\.js)["']""", source)
    state = page.evaluate(_REVEAL_STATE, reveal_js.group(1) if reveal_js else "reveal.js")
    if not state.get("ready"):
        problems.append(f"reveal.js not initialised: {state}")
    n_math = page.eval_on_selector_all(".mjx-chtml", "els => els.length")
    if n_math == 0:
        problems.append("no equation rendered by MathJax")
    tex_errors = page.eval_on_selector_all(".mjx-merror", "els => els.map(e => e.textContent)")
    problems += [f"TeX error: {t[:80]!r}" for t in tex_errors]
    if "Math Processing Error" in page.evaluate("document.body.textContent"):
        problems.append("MathJax shows a Math Processing Error")
    text = page.evaluate(_SLIDE_TEXT)
    for m in _RAW_MATH.finditer(text):
        around = " ".join(text[max(0, m.start() - 30):m.end() + 30].split())
        problems.append(f"raw math in the slides: {m.group(0)!r} in \"…{around}…\"")
    first = page.evaluate(_FIRST_MATH_SLIDE)
    if reveal_js and first >= 0:
        page.evaluate("([path, i]) => new Promise(r => require([path], R => { R.slide(i); "
                      "r(true); }))", [reveal_js.group(1), first])
        page.evaluate(_MATHJAX_DONE)  # reveal's slidechanged re-renders the slide's math
        page.wait_for_timeout(1000)   # the slide transition
    page.screenshot(path=str(screenshot))
    page.close()
    problems += [f"request aborted (outside {inside}): {u}" for u in aborted]
    print(f"  {url}: {len(requests)} requests ({len(aborted)} outside, aborted), "
          f"{state.get('slides')} slides, {n_math} rendered equations, {len(problems)} "
          f"problem(s); screenshot {screenshot}")
    return problems


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--site", default="site", help="the built site (mkdocs build)")
    p.add_argument("--out", default="docs-check", help="folder for the screenshots")
    args = p.parse_args(argv)
    site, out = Path(args.site), Path(args.out)
    if not (site / "index.html").is_file():
        sys.exit(f"docs-check: {site}/index.html not found; run `make docs` first")
    out.mkdir(parents=True, exist_ok=True)
    failures = static_problems(site)
    print(f"docs-check: {sum(1 for _ in site.rglob('*.html'))} pages read, "
          f"{len(failures)} with raw math or unlabelled code blocks")
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    server, base = serve(site)
    user_data = out / "chromium-profile"
    shutil.rmtree(user_data, ignore_errors=True)
    try:
        with sync_playwright() as pw:
            # a fresh profile (--user-data-dir) each run; headless=True adds --headless
            context = pw.chromium.launch_persistent_context(
                str(user_data.resolve()), executable_path=chromium, headless=True,
                args=[a for a in BROWSER_FLAGS if a != "--headless"],
                viewport={"width": 1280, "height": 900})
            print(f"docs-check: {chromium}, {context.browser.version if context.browser else ''}"
                  f", serving {site} at {base}")
            for name, path in PAGES.items():
                problems = check_page(context, base + path, out / f"{name}.png")
                if problems:
                    failures.setdefault(path, []).extend(problems)
            for path in SLIDES:  # offline: from the server, and as a file
                for mode, url, inside in (
                        ("http", base + path, base),
                        ("file", (site / path).resolve().as_uri(), site.resolve().as_uri() + "/")):
                    problems = check_slides(context, url, inside, out / f"slides-{mode}.png")
                    if problems:
                        failures.setdefault(f"{path} ({mode})", []).extend(problems)
            context.close()
    finally:
        server.shutdown()
        shutil.rmtree(user_data, ignore_errors=True)
    for path, problems in failures.items():
        print(f"FAIL {path}:")
        for line in problems:
            print(f"    {line}")
    print("docs-check: " + ("failed" if failures else "passed") + f"; screenshots in {out}/")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
