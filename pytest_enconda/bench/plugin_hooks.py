"""Where the installed plugin's cost goes in a pytest run that collects no benchmark.

    python -m pytest_enconda.bench plugin-hooks [--runs 5] [--folder DIR]

Runs ``pytest --co -q`` in an empty folder (or ``--folder``) under cProfile, in a fresh process
each time, and prints the median CPU time of the plugin's module import and of each of its hooks
(cumulative, callees included), their sum, and that sum as a share of the whole run. CPU time,
not wall time, so that other processes on a loaded machine are not counted; the profiler slows
every call alike, so compare figures taken the same way. The whole run moves with what else is
installed (other plugins), so the share is for one environment. The goal is that an unrelated run
pays for the plugin's import and nothing costly in its hooks.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# Run in the child: pytest in-process under cProfile, the plugin's frames summed by function.
_CHILD = r"""
import cProfile, json, pstats, sys, time
import pytest

# CPU time, not wall time: what other processes on the machine take is not the plugin's.
profile = cProfile.Profile(time.process_time)
profile.enable()
pytest.main(["--co", "-q", "-p", "no:cacheprovider"])
profile.disable()
stats = pstats.Stats(profile)
plugin = {}
for (path, _line, name), (_cc, _nc, _tt, cumulative, _callers) in stats.stats.items():
    if path.replace("\\", "/").endswith("pytest_enconda/plugin.py"):
        if name == "<module>" or name.startswith("pytest_"):
            plugin[name] = plugin.get(name, 0.0) + cumulative
print(json.dumps({"total": stats.total_tt, "plugin": plugin}))
"""


def profile_once(folder: Path) -> tuple[float, dict[str, float]]:
    """One profiled run: the whole run's CPU seconds, and the plugin's by function."""
    env = {**os.environ, "PYTEST_ADDOPTS": ""}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD],
        cwd=folder,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    last = (out.stdout.strip().splitlines() or ["{}"])[-1]
    try:
        figures = json.loads(last)
        return float(figures["total"]), {str(k): float(v) for k, v in figures["plugin"].items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        message = f"the profiled run printed no figures:\n{out.stdout}\n{out.stderr}"
        raise SystemExit(message) from None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_enconda.bench plugin-hooks")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--folder", type=Path, default=None, help="default: an empty folder")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    with tempfile.TemporaryDirectory(prefix="enconda-hooks-") as tmp:
        folder = args.folder or Path(tmp)
        runs = [profile_once(folder) for _ in range(args.runs)]
    names = sorted({name for _total, plugin in runs for name in plugin})

    def median(name: str) -> float:
        return statistics.median(plugin.get(name, 0.0) for _total, plugin in runs)

    totals = [total for total, _plugin in runs]
    sums = [sum(plugin.values()) for _total, plugin in runs]
    shares = [part / whole for part, whole in zip(sums, totals, strict=True) if whole]
    where = args.folder or "an empty folder"
    print(f"pytest --co -q in {where}, under cProfile, median of {args.runs} runs (CPU ms):")
    for name in sorted(names, key=median, reverse=True):
        label = "import of pytest_enconda.plugin" if name == "<module>" else name
        print(f"  {label:40} {median(name) * 1e3:8.1f} ms")
    print(f"  {'plugin in all':40} {statistics.median(sums) * 1e3:8.1f} ms")
    print(f"  {'whole run':40} {statistics.median(totals) * 1e3:8.1f} ms")
    if shares:
        print(f"plugin share of the run: {statistics.median(shares):.3f} (median ratio)")
    return 0
