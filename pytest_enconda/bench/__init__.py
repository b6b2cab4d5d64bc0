"""Benchmark scripts: ``python -m pytest_enconda.bench NAME [options]``.

Each entry of ``COMMANDS`` names a module with ``main(argv: list[str]) -> int``; other stages
add theirs here. Benchmarks print figures; they never assert on timings.
"""

from __future__ import annotations

import importlib
import statistics
import sys
from collections.abc import Sequence

COMMANDS: dict[str, str] = {
    "grading": "pytest_enconda.bench.grading",
    "judge": "pytest_enconda.bench.judge_set",
    "judge-handwritten": "pytest_enconda.bench.handwritten",
    "aec-labels": "pytest_enconda.bench.aec_labels",
    "collection": "pytest_enconda.bench.collection",
    "sandbox": "pytest_enconda.bench.sandbox",
    "overhead": "pytest_enconda.bench.overhead",
    "plugin-hooks": "pytest_enconda.bench.plugin_hooks",
    "embedders": "pytest_enconda.bench.embedders",
    "dispatch": "pytest_enconda.bench.dispatch",
    "agent-clock": "pytest_enconda.bench.agent_clock",
}


def summarize(samples: Sequence[float]) -> dict[str, float]:
    """Median and 90th percentile (nearest-rank) of ``samples`` in seconds."""
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    rank = max(0, min(len(ordered) - 1, round(0.9 * len(ordered) + 0.5) - 1))
    return {
        "n": float(len(ordered)),
        "median": statistics.median(ordered),
        "p90": ordered[rank],
        "min": ordered[0],
        "max": ordered[-1],
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help") or args[0] not in COMMANDS:
        names = ", ".join(sorted(COMMANDS))
        stream = sys.stdout if args and args[0] in ("-h", "--help") else sys.stderr
        print(f"usage: python -m pytest_enconda.bench {{{names}}} [options]", file=stream)
        if args and args[0] not in ("-h", "--help"):
            print(f"unknown benchmark {args[0]!r}; available: {names}", file=sys.stderr)
        return 0 if args and args[0] in ("-h", "--help") else 2
    module = importlib.import_module(COMMANDS[args[0]])
    return int(module.main(args[1:]))
