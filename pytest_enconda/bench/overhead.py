"""What the installed plugin costs a pytest run that collects no benchmark.

    python -m pytest_enconda.bench overhead [--runs 7]

Prints the plugin's own import time (``python -X importtime``) and the median wall time of
``pytest --co -q`` in an empty folder with and without the plugin (``-p no:enconda``), runs
interleaved so that load on the machine hits both alike. The goal is ≤ 30 ms added.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import summarize

_IMPORTTIME = re.compile(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\|\s+(\S.*)$")
_HEAVY = ("pydantic", "docker", "scipy", "litellm", "rich", "numpy")


def plugin_import(python: str = sys.executable) -> tuple[float, list[str]]:
    """Cumulative import time of the plugin module (seconds) and heavy packages it pulls in."""
    out = subprocess.run(
        [python, "-X", "importtime", "-c", "import pytest, pytest_enconda.plugin"],
        capture_output=True,
        text=True,
        check=True,
    )
    cumulative = 0.0
    heavy = set()
    for line in out.stderr.splitlines():
        match = _IMPORTTIME.search(line)
        if not match:
            continue
        name = match.group(3).strip()
        if name == "pytest_enconda.plugin":
            cumulative = int(match.group(2)) / 1e6
        if name.split(".")[0] in _HEAVY:
            heavy.add(name.split(".")[0])
    return cumulative, sorted(heavy)


def timed_run(folder: Path, *extra: str) -> float:
    env = {**os.environ, "PYTEST_ADDOPTS": ""}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", *extra],
        cwd=folder,
        capture_output=True,
        env=env,
        check=False,
    )
    return time.perf_counter() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_enconda.bench overhead")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    seconds, heavy = plugin_import()
    print(f"plugin modules, import time after pytest: {seconds * 1e3:.1f} ms")
    print(f"heavy packages imported by loading the plugin: {', '.join(heavy) or 'none'}")
    with_plugin, without = [], []
    with tempfile.TemporaryDirectory(prefix="enconda-overhead-") as tmp:
        folder = Path(tmp)
        timed_run(folder)  # warm the file cache once
        for _ in range(args.runs):
            with_plugin.append(timed_run(folder))
            without.append(timed_run(folder, "-p", "no:enconda"))
    on, off = summarize(with_plugin)["median"], summarize(without)["median"]
    print(f"pytest --co -q, empty folder, median of {args.runs}:")
    print(f"  with the plugin      {on * 1e3:7.1f} ms")
    print(f"  with -p no:enconda   {off * 1e3:7.1f} ms")
    print(f"  added                {(on - off) * 1e3:7.1f} ms  (ratio {on / off:.3f})")
    return 0
