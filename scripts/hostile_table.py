"""The hostile-input suite's tally as a Markdown table, one row per surface.

    ENCONDA_HOSTILE_FIGURES=figures.json python -m pytest tests/hostile -p no:cacheprovider
    python scripts/hostile_table.py figures.json

A tally kind is ``surface: detail`` (``tests/hostile/conftest.py``); a row sums the inputs of one
surface and counts its faults by what went wrong (crash, hang, memory, host read).
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

FAULTS = ("crash", "hang", "memory", "host read")
HEADERS = ("crashes", "hangs", "memory blow-ups", "host reads")


def main(path: str) -> None:
    figures = json.loads(Path(path).read_text())
    inputs: Counter[str] = Counter()
    faults: dict[str, Counter[str]] = defaultdict(Counter)
    for kind, count in figures["inputs"].items():
        inputs[kind.split(":")[0]] += count
    for kind, count in figures["faults"].items():
        surface, _, fault = kind.rpartition(": ")
        faults[surface.split(":")[0]][fault] += count
    print(
        "| surface | inputs | "
        + " | ".join(f"{f}es" if f == "crash" else f"{f}s" for f in FAULTS)
        + " |"
    )
    print("| --- | ---: |" + " ---: |" * len(FAULTS))
    for surface, count in sorted(inputs.items(), key=lambda item: (-item[1], item[0])):
        row = " | ".join(str(faults[surface][f]) for f in FAULTS)
        print(f"| {surface} | {count} | {row} |")
    total = " | ".join(str(sum(c[f] for c in faults.values())) for f in FAULTS)
    print(f"| **all** | **{sum(inputs.values())}** | {total} |")


if __name__ == "__main__":
    main(sys.argv[1])
