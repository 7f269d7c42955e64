"""Re-create the slides' vendored scripts (``docs/_site/slides_vendor/``) from pinned npm
tarballs, and check the committed copy against its manifest.

The lesson slides (``docs/_site/slides.py``) load reveal.js, require.js and MathJax from a
``vendor/`` folder next to them. That folder is the subset of three npm packages listed in
:data:`PACKAGES`, each at a pinned version whose tarball must match the registry's
``dist.integrity`` (sha512) pinned here, with each package's licence. The subset was found
by opening every lesson's slides in headless Chromium with the whole packages beside them and
recording what the browser asked for (``make docs-check`` repeats that check with every request
outside the site aborted), plus what MathJax loads only for some equations: all TeX fonts
(woff), all of the CommonHTML output (``autoload/mtable.js`` for matrices, ``multiline.js``
for long equations, per-font data), the operator tables and the TeX extensions that macros
such as ``\\boldsymbol`` or ``\\bbox`` load. Left out: the accessibility explorer
(``extensions/a11y``, 2.6 MB, loaded only when a reader turns it on in MathJax's menu) and the
menu's translations (English is built in).

Usage (no network: download the three tarballs first, e.g. ``npm pack reveal.js@4.0.2`` or
from the URLs in :data:`PACKAGES`)::

    python docs/_site/vendor_slides.py --tarballs DIR            # rewrite slides_vendor/
    python docs/_site/vendor_slides.py --tarballs DIR --check    # compare, write nothing
    python docs/_site/vendor_slides.py                           # committed files vs manifest

The manifest (``slides_vendor/manifest.json``) records each package's version, tarball and
integrity and each file's sha256; the test suite checks the committed files against it
(:func:`manifest_problems`), so a vendored file edited by accident fails a test.
"""

from __future__ import annotations

import argparse
import base64
import fnmatch
import hashlib
import json
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

VENDOR = Path(__file__).resolve().parent / "slides_vendor"
MANIFEST = "manifest.json"

#: name -> version, the registry's dist.integrity of its tarball, the files taken from it
#: (fnmatch patterns relative to the tarball's ``package/`` folder; ``*`` crosses folders).
PACKAGES: dict[str, dict] = {
    "reveal.js": {
        "version": "4.0.2",
        "integrity": "sha512-LWZSUenufF1gpD7npxJ7KfoQQFKgc1D6XrLTFgKlwWNP1BQ74hT48KONFWMAw+8R"
                     "/QUeaScCLCLrBVHDfFIEiw==",
        "files": ["LICENSE", "dist/reveal.js", "dist/reveal.css", "dist/theme/white.css",
                  # the white theme's font, woff only (what every current browser takes)
                  "dist/theme/fonts/source-sans-pro/LICENSE",
                  "dist/theme/fonts/source-sans-pro/source-sans-pro.css",
                  "dist/theme/fonts/source-sans-pro/*.woff",
                  "plugin/notes/notes.js"],
    },
    "requirejs": {
        "version": "2.1.10",
        "integrity": "sha512-4JqdTihK3kOnT387LxCHuJZ/9QsKg2EIl7LmaW35PIyM4LwCI2jwyy4fy6pbY/ZZH2J"
                     "oY/QEcb5PzULFPP6gcQ==",
        "files": ["require.js"],  # the tarball has no LICENSE file: see _requirejs_license
    },
    "mathjax": {
        "version": "2.7.7",
        "integrity": "sha512-OOl0B2/0tSJAtAZarXnQuLDBLgTNRqiI9VqHTQzPsxf4okT2iIpDrvaklK9x2QEMD1s"
                     "Dj4yRn11Ygci41DxMAQ==",
        "files": ["LICENSE", "MathJax.js",
                  # ?config=TeX-AMS_CHTML-full,Safe: the combined configuration (TeX input,
                  # CommonHTML output, menus, zoom) and the Safe extension
                  "config/TeX-AMS_CHTML-full.js", "config/Safe.js", "extensions/Safe.js",
                  "extensions/TeX/*.js", "jax/output/CommonHTML/*.js",
                  "jax/element/mml/optable/*.js", "fonts/HTML-CSS/TeX/woff/*.woff"],
    },
}

_MIT = """Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in
all copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN
THE SOFTWARE.
"""


def tarball_url(name: str) -> str:
    version = PACKAGES[name]["version"]
    return f"https://registry.npmjs.org/{name}/-/{name}-{version}.tgz"


def integrity(data: bytes) -> str:
    """npm's Subresource-Integrity string of ``data``: ``sha512-<base64 digest>``."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def _requirejs_license(require_js: bytes) -> bytes:
    """requirejs 2.1.10's npm tarball ships no LICENSE file; require.js's header names its
    licence ("Available via the MIT or new BSD license"). The header, verbatim, and the MIT
    licence's text, under which this copy is used."""
    lines = require_js.decode("utf-8").splitlines()
    end = next(i for i, line in enumerate(lines) if line.strip() == "*/")
    header = "\n".join(lines[:end + 1])
    if "@license RequireJS 2.1.10" not in header or "MIT" not in header:
        raise ValueError("require.js's licence header is not the expected one:\n" + header)
    return (f"The licence header of require.js (npm package requirejs 2.1.10), verbatim:\n\n"
            f"{header}\n\nThis copy is used under the MIT licence:\n\n"
            f"Copyright (c) 2010-2014, The Dojo Foundation\n\n{_MIT}").encode()


def extract(name: str, tarball: Path) -> dict[str, bytes]:
    """The files of :data:`PACKAGES` ``[name]`` from its tarball, after checking the tarball
    against the pinned integrity: ``{path relative to the package: bytes}``."""
    spec = PACKAGES[name]
    data = Path(tarball).read_bytes()
    got = integrity(data)
    if got != spec["integrity"]:
        raise ValueError(f"{tarball}: integrity {got}, expected {spec['integrity']} (npm "
                         f"registry, {name} {spec['version']}); download {tarball_url(name)}")
    out: dict[str, bytes] = {}
    used = set()
    with tempfile.TemporaryFile() as buf:
        buf.write(data)
        buf.seek(0)
        with tarfile.open(fileobj=buf, mode="r:gz") as tar:
            for member in tar.getmembers():
                path = PurePosixPath(member.name)
                if not member.isfile() or path.parts[:1] != ("package",) or ".." in path.parts:
                    continue
                rel = PurePosixPath(*path.parts[1:]).as_posix()
                hits = [p for p in spec["files"] if fnmatch.fnmatchcase(rel, p)]
                if hits:
                    used.update(hits)
                    out[rel] = tar.extractfile(member).read()  # type: ignore[union-attr]
    unused = [p for p in spec["files"] if p not in used]
    if unused:
        raise ValueError(f"{tarball}: no file matches {unused}")
    if name == "requirejs":
        out["LICENSE"] = _requirejs_license(out["require.js"])
    return out


def build(tarballs: Path) -> tuple[dict[str, bytes], dict]:
    """Every vendored file (``{"<package>/<path>": bytes}``) and the manifest."""
    files: dict[str, bytes] = {}
    packages = {}
    for name, spec in PACKAGES.items():
        tarball = Path(tarballs) / f"{name}-{spec['version']}.tgz"
        if not tarball.is_file():
            raise FileNotFoundError(f"{tarball} not found; download {tarball_url(name)}")
        for rel, data in extract(name, tarball).items():
            files[f"{name}/{rel}"] = data
        packages[name] = {"version": spec["version"], "tarball": tarball_url(name),
                          "integrity": spec["integrity"]}
    manifest = {"packages": packages,
                "files": {rel: hashlib.sha256(files[rel]).hexdigest() for rel in sorted(files)}}
    return files, manifest


def write(folder: Path, files: dict[str, bytes], manifest: dict) -> None:
    """Replace ``folder`` (created by this script: it holds a manifest, or is absent) by
    ``files`` and the manifest."""
    folder = Path(folder)
    if folder.exists():
        if not (folder / MANIFEST).is_file():
            raise ValueError(f"{folder} exists without {MANIFEST}: not replacing a folder this "
                             "script did not write")
        shutil.rmtree(folder)
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")


def manifest_problems(folder: Path = VENDOR) -> list[str]:
    """How the files under ``folder`` differ from its manifest: missing, extra or changed
    files (an empty list when they match)."""
    folder = Path(folder)
    try:
        listed = json.loads((folder / MANIFEST).read_text())["files"]
    except (OSError, ValueError, KeyError) as exc:
        return [f"{folder / MANIFEST}: cannot be read ({exc})"]
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    present.discard(MANIFEST)
    problems = [f"missing: {rel}" for rel in sorted(set(listed) - present)]
    problems += [f"not in the manifest: {rel}" for rel in sorted(present - set(listed))]
    for rel in sorted(present & set(listed)):
        digest = hashlib.sha256((folder / rel).read_bytes()).hexdigest()
        if digest != listed[rel]:
            problems.append(f"changed: {rel} (sha256 {digest[:12]}…, manifest "
                            f"{listed[rel][:12]}…)")
    return problems


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tarballs", type=Path,
                   help="folder holding reveal.js-4.0.2.tgz, requirejs-2.1.10.tgz, "
                        "mathjax-2.7.7.tgz; without it, only check the committed files "
                        "against the manifest")
    p.add_argument("--out", type=Path, default=VENDOR)
    p.add_argument("--check", action="store_true",
                   help="compare what the tarballs give with --out; write nothing")
    args = p.parse_args(argv)
    problems = manifest_problems(args.out) if args.out.exists() else [f"{args.out}: absent"]
    if args.tarballs is None:
        print("\n".join(problems) or f"{args.out}: every file matches {MANIFEST}")
        return 1 if problems else 0
    files, manifest = build(args.tarballs)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            write(Path(tmp) / "v", files, manifest)
            fresh = (Path(tmp) / "v" / MANIFEST).read_text()
        same = args.out.is_dir() and not problems and fresh == (args.out / MANIFEST).read_text()
        print(f"{args.out}: " + ("identical to the tarballs' subset" if same else
                                 "differs from the tarballs' subset"))
        return 0 if same else 1
    write(args.out, files, manifest)
    size = sum(len(d) for d in files.values())
    print(f"{args.out}: {len(files)} files, {size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
