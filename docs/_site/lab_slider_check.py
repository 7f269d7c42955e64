"""A lesson in a real JupyterLab, in headless Chromium: run it, move a slider, see the figure
change.

    python docs/_site/lab_slider_check.py [--lesson 01_memory_and_regions] [--out docs-check]

Writes the lesson's solution notebook (jupytext) into a temporary folder, starts
``jupyter lab`` there (127.0.0.1, a free port, a random token, no browser), opens the notebook
in Debian's ``chromium`` through Playwright, runs every cell (Run → Run All Cells), waits for
the slider widget (``.lds-slider``) and its figure, types a new value into the first slider's
readout, and waits for the figure (the PNG in the widget's ``<img>``) and the numbers line
under it to change. Fails on a cell error, a missing widget or an unchanged figure;
screenshots before and after the move go to ``--out``. Used by ``make docs-check`` and by
``tests/teaching/test_lesson_browser.py`` (slow).
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The value typed into the first slider of each lesson checked here.
NEW_VALUE = {"01_memory_and_regions": "0.99999", "02_discretisation": "0.5",
             "03_lyapunov": "1.9", "04_etc_and_nss": "0.1"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_lab(folder: Path, port: int, token: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="module://matplotlib_inline."
               "backend_inline", JUPYTER_CONFIG_DIR=str(folder / ".jupyter"),
               JUPYTER_RUNTIME_DIR=str(folder / ".runtime"))
    env.pop("LDS_LESSON_QUICK", None)
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
           "--ip=127.0.0.1", f"--IdentityProvider.token={token}", "--allow-root",
           f"--ServerApp.root_dir={folder}", "--ServerApp.open_browser=False",
           "--LabApp.news_url=", "--LabApp.check_for_updates_class="
           "jupyterlab.NeverCheckForUpdate"]
    log = open(folder / "lab.log", "w")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(cmd, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)


def _wait_for(url: str, timeout: float, proc: subprocess.Popen | None = None) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with status {proc.returncode} before "
                               f"answering at {url}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:  # noqa: S310 - localhost
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"JupyterLab did not answer at {url} within {timeout:.0f} s")


def check(lesson: str = "01_memory_and_regions", out: Path = Path("docs-check"),
          timeout: float = 240.0) -> dict:
    """Run the check; returns what it saw (``before``/``after`` numbers lines, image sizes,
    screenshots). Raises ``AssertionError`` when the figure does not change."""
    import jupytext
    import nbformat
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "docs" / "_site"))
    from check_site import BROWSER_FLAGS, find_chromium

    out.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="lab-check-"))
    script = ROOT / "docs" / "lessons" / f"{lesson}.py"
    nb = jupytext.read(script)
    nb.metadata.pop("jupytext", None)
    nbformat.write(nb, folder / f"{lesson}.ipynb")
    port, token = _free_port(), secrets.token_hex(16)
    lab = _start_lab(folder, port, token)
    seen: dict = {}
    try:
        try:
            _wait_for(f"http://127.0.0.1:{port}/api/status?token={token}", timeout, lab)
        except RuntimeError as exc:
            log = (folder / "lab.log").read_text()[-2000:]
            raise RuntimeError(f"{exc}; its log ends:\n{log}") from None
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=find_chromium(), headless=True,
                                         args=[a for a in BROWSER_FLAGS if a != "--headless"])
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            try:
                seen.update(_drive(page, port, token, lesson, out, timeout))
            except Exception:
                page.screenshot(path=str(out / f"lab-{lesson}-failure.png"))
                raise
            browser.close()
        assert not seen["cell_errors"], f"cells raised: {seen['cell_errors']}"
        seen["page_errors"] = errors
        assert seen["changed"] and seen["pixels_changed"], \
            "moving the slider did not change the figure"
        assert seen["before"] != seen["after"], "moving the slider did not change the numbers"
        return seen
    finally:
        lab.terminate()
        try:
            lab.wait(timeout=20)
        except subprocess.TimeoutExpired:
            lab.kill()
        shutil.rmtree(folder, ignore_errors=True)


def _drive(page, port: int, token: str, lesson: str, out: Path, timeout: float) -> dict:
    """Open the notebook, run it, move the first slider; what was seen."""
    seen: dict = {}
    page.goto(f"http://127.0.0.1:{port}/lab/tree/{lesson}.ipynb?token={token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=timeout * 1000)
    # Run All Cells; a click made while the kernel is still connecting can be lost,
    # so repeat until the first cell has an execution count
    for attempt in range(6):
        page.wait_for_timeout(2000)
        for button in page.query_selector_all(".jp-Dialog .jp-mod-accept"):
            button.click()  # "Select Kernel" when the kernel was slow to start: the default
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_text("Run All Cells", exact=True).click()
        try:
            page.wait_for_function(
                "() => [...document.querySelectorAll('.jp-InputPrompt')]"
                ".some(e => /\\[1\\]/.test(e.textContent))", timeout=20_000)
            break
        except Exception:
            if attempt == 5:
                raise
    widget = page.wait_for_selector(".lds-slider img", timeout=timeout * 1000)
    page.wait_for_function(  # the last cell (the summary) has run
        "() => [...document.querySelectorAll('.jp-OutputArea-output')]"
        ".some(e => /checks pass/.test(e.textContent))", timeout=timeout * 1000)
    widget.scroll_into_view_if_needed()
    before_src = widget.get_attribute("src")
    before_pixels = widget.screenshot()
    line = page.query_selector(".lds-slider code")
    seen["before"] = line.inner_text() if line else ""
    page.screenshot(path=str(out / f"lab-{lesson}-before.png"))
    readout = page.query_selector(".lds-slider .widget-readout")
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(NEW_VALUE.get(lesson, "0.5"))
    page.keyboard.press("Enter")
    page.wait_for_function(
        "src => document.querySelector('.lds-slider img').getAttribute('src') !== src",
        arg=before_src, timeout=60_000)
    page.wait_for_timeout(300)
    after_img = page.query_selector(".lds-slider img")
    after_src = after_img.get_attribute("src")
    seen["pixels_changed"] = after_img.screenshot() != before_pixels
    line = page.query_selector(".lds-slider code")
    seen["after"] = line.inner_text() if line else ""
    page.screenshot(path=str(out / f"lab-{lesson}-after.png"))
    seen["cell_errors"] = page.eval_on_selector_all(
        ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
        "els => els.map(e => e.textContent).filter(t => /Error|Traceback/.test(t))")
    seen.update(changed=after_src != before_src, before_len=len(before_src or ""),
                after_len=len(after_src or ""),
                screenshots=[str(out / f"lab-{lesson}-{w}.png")
                             for w in ("before", "after")])
    return seen


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lesson", default="01_memory_and_regions")
    p.add_argument("--out", type=Path, default=Path("docs-check"))
    args = p.parse_args(argv)
    try:
        seen = check(args.lesson, args.out)
    except (AssertionError, RuntimeError) as exc:
        print(f"lab check: FAILED: {exc}")
        return 1
    print(f"lab check: {args.lesson} ran in JupyterLab; slider moved: the figure's "
          f"image and its pixels changed, numbers "
          f"'{seen['before']}' -> '{seen['after']}'; screenshots {', '.join(seen['screenshots'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
