"""Collection of an EnConda-Bench dataset: import time, counts, README command extraction.

    python -m pytest_enconda.bench collection [PATH] [--runs 7] [--pytest]

PATH defaults to ``../shared/data/enconda-dev`` beside the working directory. ``--pytest`` also
times ``pytest --collect-only --cases PATH`` in a subprocess (plugin start-up included).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from . import summarize

DEFAULT_DATA = Path("../shared/data/enconda-dev")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_enconda.bench collection")
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--pytest", action="store_true", help="also time pytest --collect-only")
    parser.add_argument("--show", type=int, default=5, help="problems and notes to list")
    args = parser.parse_args(argv)
    if not args.path.is_dir():
        print(f"dataset not found: {args.path}", file=sys.stderr)
        return 2
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    from ..agents.readme_commands import extract_commands
    from ..cases.enconda_import import load_dataset

    samples = []
    loaded = None
    for index in range(args.runs):
        started = time.perf_counter()
        loaded = load_dataset(args.path)
        samples.append(time.perf_counter() - started)
        # The first run reads from disk; later ones from the page cache.
        print(f"  load_dataset run {index + 1}/{args.runs}: {samples[-1]:.3f} s", file=sys.stderr)
    assert loaded is not None  # --runs is at least 1
    stats = summarize(samples)
    print(f"dataset: {args.path.resolve()}")
    print(
        f"load_dataset: {len(loaded.cases)} cases, median {stats['median']:.3f} s, "
        f"p90 {stats['p90']:.3f} s, min {stats['min']:.3f} s, max {stats['max']:.3f} s "
        f"({args.runs} runs; the first includes cold reads: {samples[0]:.3f} s)"
    )

    print(
        "golden errors by type: "
        + ", ".join(f"{t} {n}" for t, n in loaded.counts_by_type().items())
    )
    print(
        "cases by level: "
        + ", ".join(f"{level}: {count}" for level, count in loaded.counts_by_level().items())
    )
    print(f"problems: {len(loaded.problems)}")
    for problem in loaded.problems[: args.show]:
        print(f"  {problem.file}: {problem.reason}")
    kinds = Counter(note.reason.split(":")[0] for note in loaded.notes)
    print(
        f"notes: {len(loaded.notes)} ({', '.join(f'{k!r} {n}' for k, n in kinds.most_common(6))})"
    )
    for note in loaded.notes[: args.show]:
        print(f"  {note.file}: {note.reason}")

    started = time.perf_counter()
    commands = [
        extract_commands(case.readme_text, case.spec.readme_target) for case in loaded.cases
    ]
    elapsed = time.perf_counter() - started
    total = sum(len(found) for found in commands)
    empty = sum(1 for found in commands if not found)
    print(
        f"README extraction: {len(commands)} READMEs, {total} commands, {empty} with none, "
        f"{elapsed:.3f} s"
    )

    if args.pytest:
        started = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "--cases", str(args.path)],
            capture_output=True,
            text=True,
            check=False,
        )
        elapsed = time.perf_counter() - started
        tail = (result.stdout.strip().splitlines() or [""])[-1]
        print(f"pytest --collect-only: exit {result.returncode}, {elapsed:.2f} s: {tail}")
        if result.returncode not in (0, 5):
            print(result.stderr[-2000:], file=sys.stderr)
    return 0
