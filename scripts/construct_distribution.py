"""A constructed set's error-type and level distribution beside EnConda-Bench's release.

    PYTHONPATH=$PWD python scripts/construct_distribution.py CONSTRUCTED [CONSTRUCTED ...]
        [--release PATH]

Several constructed folders (runs made in parallel into separate ``--out``) are counted together.

The release is read from ``--release``, else ``../shared/data/enconda-dev`` from the project
root; when it is absent, only the constructed set is printed, with a message saying so.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_enconda.cases.enconda_import import load_dataset
from pytest_enconda.error_types import ERROR_TYPES

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RELEASE = ROOT.parent / "shared" / "data" / "enconda-dev"
TYPES = ("E1", "E2", "E4", "E6", "E7", "E8")


def _share(count: int, total: int) -> str:
    return f"{count} ({count / total:.0%})" if total else "0"


def _levels(counts: dict[int, int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for level, count in counts.items():
        key = str(level) if level <= 5 else "6-9" if level < 10 else "10+"
        out[key] = out.get(key, 0) + count
    return out


def _sum(counts: list[dict]) -> dict:
    total: dict = {}
    for part in counts:
        for key, value in part.items():
            total[key] = total.get(key, 0) + value
    return total


def table(title: str, rows: list[str], columns: dict[str, dict[str, int]]) -> list[str]:
    totals = {name: sum(col.values()) for name, col in columns.items()}
    lines = [f"| {title} | " + " | ".join(columns) + " |", "| --- " * (len(columns) + 1) + "|"]
    for row in rows:
        cells = [_share(col.get(row, 0), totals[name]) for name, col in columns.items()]
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    lines.append("| all | " + " | ".join(str(t) for t in totals.values()) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "constructed", nargs="+", help="the folder(s) pytest-enconda construct wrote"
    )
    parser.add_argument("--release", help=f"the release (default {DEFAULT_RELEASE})")
    args = parser.parse_args(argv)
    parts = [load_dataset(Path(folder)) for folder in args.constructed]
    loads = {"constructed": parts[0]}
    release = Path(args.release) if args.release else DEFAULT_RELEASE
    if (release / "repo_info.jsonl").is_file():
        loads["release"] = load_dataset(release)
    else:
        print(f"release not found at {release}: printing the constructed set only")
    for name, load in [*zip(args.constructed, parts, strict=True), *list(loads.items())[1:]]:
        if load.problems:
            print(f"{name}: {len(load.problems)} problems, e.g. {load.problems[0].reason}")
    by_type = {"constructed": _sum([part.counts_by_type() for part in parts])}
    by_level = {"constructed": _sum([part.counts_by_level() for part in parts])}
    if "release" in loads:
        by_type["release"] = loads["release"].counts_by_type()
        by_level["release"] = loads["release"].counts_by_level()
    types = {
        name: {t: c for t, c in counts.items() if t in ERROR_TYPES}
        for name, counts in by_type.items()
    }
    levels = {name: _levels(counts) for name, counts in by_level.items()}
    order = [str(n) for n in range(6)] + ["6-9", "10+"]
    rows = [k for k in order if any(k in col for col in levels.values())]
    print("\n".join(table("error type (golden errors)", list(TYPES), types)))
    print()
    print("\n".join(table("level (instances)", rows, levels)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
