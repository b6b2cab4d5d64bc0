"""A real headless browser on the report: Debian's ``chromium`` (``--headless --no-sandbox
--disable-gpu``). Console messages come from its log (``--enable-logging=stderr``: every
``console.*`` call and uncaught error is a ``CONSOLE`` line), layout from a script run in a copy of
the page, pixels from a screenshot."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"]
_CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\]? ?(.*)")
_RESULT = re.compile(r'<pre id="visibility-result">(.*?)</pre>', re.S)

# Runs after the page's own script: which parts have a box on screen, and where they start.
PROBE = """
<script>
(function () {
  function box(sel) {
    var all = document.querySelectorAll(sel), shown = 0, top = null;
    all.forEach(function (e) {
      var b = e.getBoundingClientRect(), s = getComputedStyle(e);
      if (b.width > 0 && b.height > 0 && s.visibility !== 'hidden' && s.display !== 'none') {
        shown += 1; if (top === null || b.top < top) { top = b.top; }
      }
    });
    return {found: all.length, visible: shown, top: top};
  }
  var out = {};
  %SELECTORS%.forEach(function (sel) { out[sel] = box(sel); });
  var pre = document.createElement('pre'); pre.id = 'visibility-result';
  pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
})();
</script>
"""


def chromium() -> str:
    """The browser's path; skips without one (fails under ``CI=true``: .ci/run installs it)."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("CI=true but no chromium on PATH (.ci/run installs Debian's chromium)")
    pytest.skip("no chromium on PATH: apt-get install chromium")


def _run(exe: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [exe, *FLAGS, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def console_messages(exe: str, page: Path) -> tuple[str, list[str]]:
    """(DOM after scripts ran, console messages) of ``page``."""
    done = _run(
        exe,
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=5000",
        "--dump-dom",
        page.resolve().as_uri(),
    )
    messages = [m.group(1) for line in done.stderr.splitlines() if (m := _CONSOLE.search(line))]
    return done.stdout, messages


def visibility(exe: str, page: Path, selectors: list[str], scratch: Path) -> dict[str, Any]:
    """Per selector: elements found, those with a visible box, the first one's top (px)."""
    probe = scratch / f"probe-{page.name}"
    probe.write_text(
        page.read_text(encoding="utf-8").replace(
            "</body>", PROBE.replace("%SELECTORS%", json.dumps(selectors)) + "</body>"
        ),
        encoding="utf-8",
    )
    dom, _messages = console_messages(exe, probe)
    match = _RESULT.search(dom)
    assert match, f"the probe script did not run: {dom[-500:]}"
    return json.loads(match.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def screenshot(exe: str, page: Path, out: Path, size: str = "1400,1600") -> Path:
    done = _run(exe, f"--screenshot={out}", f"--window-size={size}", page.resolve().as_uri())
    assert out.is_file(), done.stderr[-2000:]
    return out


def non_blank(png: Path) -> float:
    """The spread of the screenshot's pixel values: 0 for a blank page."""
    from matplotlib import image

    pixels = image.imread(str(png))
    return float(pixels.std())
