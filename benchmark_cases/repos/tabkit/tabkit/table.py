"""Reading CSV files and rendering rows as Markdown."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Table:
    columns: list[str]
    rows: list[dict[str, str]]

    def column(self, name: str) -> list[str]:
        if name not in self.columns:
            raise KeyError(f"no column {name!r}; columns are: {', '.join(self.columns)}")
        return [row[name] for row in self.rows]


def read_csv(path: str | Path) -> Table:
    # newline="" lets the csv module handle quoted fields that contain line breaks.
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = [{key: (value or "").strip() for key, value in row.items()} for row in reader]
        return Table(columns=list(reader.fieldnames or []), rows=rows)


def to_markdown(table: Table, limit: int | None = None) -> str:
    rows = table.rows if limit is None else table.rows[:limit]
    cells = [table.columns] + [[row[col] for col in table.columns] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(table.columns))]

    def line(values: list[str]) -> str:
        return "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)) + " |"

    separator = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), separator, *(line(c) for c in cells[1:])])
