"""The manual builds with ``mkdocs build --strict`` (a broken link or anchor fails it), holds the
generated reference, and renders in a real headless browser without a console error.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from chromium_devtools import open_browser
from test_docs_drift import README, ROOT, reference

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
import browser as report_browser  # tests/report/browser.py: finds chromium (or skips)

MIN_PAGES = 12


def _mkdocs_available() -> None:
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
    except ImportError:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI=true but mkdocs is not installed (.ci/run installs the docs extra)")
        pytest.skip("mkdocs and mkdocs-material are not installed: pip install -e '.[docs]'")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The manual, built strictly into a folder of this test's own."""
    _mkdocs_available()
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    return out


def _ids(page: Path) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', page.read_text(encoding="utf-8")))


def test_the_site_builds_strictly_with_the_generated_reference(site: Path) -> None:
    pages = [p for p in site.rglob("index.html") if "search" not in p.parts]
    assert len(pages) >= MIN_PAGES
    ref = reference()
    options = _ids(site / "reference" / "pytest-options" / "index.html")
    assert {option.anchor for option in ref.pytest_options().options} <= options
    commands = _ids(site / "reference" / "cli" / "index.html")
    names = {name.replace(" ", "-") for name, _sub in ref.subcommands(ref.cli_parser())}
    assert names <= commands
    formats = (site / "reference" / "file-formats" / "index.html").read_text(encoding="utf-8")
    for field in ("ddp_entry_point", "pass_set", "python_path", "timed_out", "problem"):
        assert f"<code>{field}</code>" in formats, field


def test_the_readmes_links_into_the_manual_resolve(site: Path) -> None:
    links = re.findall(r"\]\((docs/[^)#\s]+)(?:#([^)\s]+))?\)", README.read_text(encoding="utf-8"))
    assert len(links) > 20
    for target, anchor in links:
        path = Path(target).relative_to("docs")
        built = site / path.with_suffix("") / "index.html"
        if path.name == "index.md":
            built = site / path.parent / "index.html"
        assert built.is_file(), target
        if anchor:
            assert anchor in _ids(built), f"{target}#{anchor}"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serving(folder: Path) -> Iterator[str]:
    """The built site over HTTP on 127.0.0.1 (the search's worker needs http, not file://)."""
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def test_three_pages_render_in_a_headless_browser(site: Path, tmp_path: Path) -> None:
    exe = report_browser.chromium()
    with serving(site) as base, open_browser(exe) as chromium:
        page = chromium.new_page()

        page.goto(f"{base}/")
        assert page.evaluate("document.title") == "pytest-enconda"
        heading = page.evaluate("document.querySelector('article h1').firstChild.textContent")
        assert heading == "pytest-enconda"
        assert page.evaluate("document.querySelectorAll('.md-nav__link').length") > MIN_PAGES
        start = page.screenshot(tmp_path / "start.png")

        page.goto(f"{base}/?q=resume")
        found = page.wait_until("document.querySelectorAll('.md-search-result__item').length")
        assert found > 0
        meta = page.evaluate("document.querySelector('.md-search-result__meta').textContent")
        assert "matching" in meta
        search = page.screenshot(tmp_path / "search.png")

        page.goto(f"{base}/reference/pytest-options/")
        ids = page.evaluate("Array.from(document.querySelectorAll('h3[id]')).map(h => h.id)")
        assert {option.anchor for option in reference().pytest_options().options} <= set(ids)
        options = page.screenshot(tmp_path / "pytest-options.png")

        assert page.messages == [], page.messages
    for shot in (start, search, options):
        assert report_browser.non_blank(shot) > 0.05, shot


def test_the_browser_check_sees_console_errors_and_missing_files(tmp_path: Path) -> None:
    exe = report_browser.chromium()
    (tmp_path / "index.html").write_text(
        "<html><body><h1>broken</h1><img src='missing.png'>"
        "<script>console.error('boom'); window.setTimeout(() => undefinedName(), 10);</script>"
        "</body></html>",
        encoding="utf-8",
    )
    with serving(tmp_path) as base, open_browser(exe) as chromium:
        page = chromium.new_page()
        page.goto(f"{base}/index.html")
        page.wait_until("true")
        chromium.pump(0.5)
    shown = "\n".join(page.messages)
    assert "console.error: boom" in shown
    assert "uncaught: ReferenceError: undefinedName is not defined" in shown
    assert "log.error: Failed to load resource" in shown and "missing.png" in shown
