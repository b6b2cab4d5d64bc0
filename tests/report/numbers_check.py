"""Reads the numbers back out of each output of a run, independently of the code that wrote them:
the HTML report's tables (stdlib HTML parser), ``tables.md``'s Markdown tables, ``results.csv``
(recounted from its rows), ``summary.json`` (formatted here) and the terminal summary's text."""

from __future__ import annotations

import csv
import json
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

TYPES = ("E1", "E2", "E4", "E6", "E7", "E8")
MAIN_KEYS = ("type_precision", "type_recall", "type_f1", "description_acc", "fix_acc")


class _Tables(HTMLParser):
    """Rows of every table with an id; nested tables (evidence inside a row) keep their own."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._stack: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._stack.append({"id": dict(attrs).get("id"), "row": None, "cell": None})
        elif self._stack and tag == "tr":
            self._stack[-1]["row"] = []
        elif self._stack and tag in ("td", "th") and self._stack[-1]["row"] is not None:
            self._stack[-1]["cell"] = []

    def handle_endtag(self, tag: str) -> None:
        if not self._stack:
            return
        top = self._stack[-1]
        if tag == "table":
            self._stack.pop()
        elif tag in ("td", "th") and top["cell"] is not None and top["row"] is not None:
            top["row"].append("".join(top["cell"]).strip())
            top["cell"] = None
        elif tag == "tr" and top["row"] is not None:
            if top["id"]:
                self.tables.setdefault(top["id"], []).append(top["row"])
            top["row"] = None

    def handle_data(self, data: str) -> None:
        for entry in self._stack:
            if entry["cell"] is not None:
                entry["cell"].append(data)


def html_tables(text: str) -> dict[str, list[list[str]]]:
    """Tables with an id, header row first."""
    parser = _Tables()
    parser.feed(text)
    return parser.tables


def markdown_table(text: str, heading: str) -> list[list[str]]:
    """The Markdown table under ``## heading`` (header row first, separator dropped)."""
    block = text.split(f"## {heading}", 1)[1]
    rows = []
    for line in block.splitlines()[1:]:
        if line.startswith("## "):
            break
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def pct(value: Any) -> str:
    return "-" if value is None else f"{100 * float(value):.1f}"


def summary_main(summary: dict[str, Any]) -> list[list[str]]:
    """The main table formatted here from summary.json's raw values."""
    return [
        [*(pct(summary[key][name]) for name in MAIN_KEYS), pct(summary.get("pass_at_1"))]
        for key in ("paper", "per_error")
    ]


def terminal_main(text: str) -> list[list[str]]:
    """The two main-table rows of the terminal summary (the rows naming the definition)."""
    block = text.split("Main table", 1)[1]
    rows = []
    for line in block.splitlines():
        parts = line.split()
        for label in ("paper", "per-error"):
            if label in parts and len(rows) < 2 and parts.index(label) + 7 <= len(parts):
                start = parts.index(label) + 1
                rows.append(parts[start : start + 6])
    return rows


def csv_counts(run_dir: Path) -> dict[str, Any]:
    """What results.csv says on its own: outcomes per item, Pass@1, type counts per case."""
    with (run_dir / "results.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    items: dict[str, Counter[str]] = {}
    golden: Counter[str] = Counter()
    predicted: Counter[str] = Counter()
    # Type counts come from the cases whose diagnosis was graded, once per case.
    graded = {row["case"] for row in rows if row["item"] == "error_types"}
    seen: set[str] = set()
    for row in rows:
        items.setdefault(row["item"], Counter())[row["outcome"]] += 1
        if row["case"] in graded and row["case"] not in seen:
            seen.add(row["case"])
            golden.update(row["golden_types"].split())
            predicted.update(row["predicted_types"].split())
    execution = items.get("execution", Counter())
    ran = execution["passed"] + execution["failed"]
    return {
        "items": {item: dict(c) for item, c in items.items()},
        "pass_at_1": pct(execution["passed"] / ran) if ran else "-",
        "golden": golden,
        "predicted": predicted,
    }


def assert_numbers_agree(run_dir: Path, terminal_text: str) -> dict[str, Any]:
    """Every output's main table, type counts and item outcomes are the same numbers."""
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    expected = summary_main(summary)
    page = html_tables((run_dir / "report.html").read_text(encoding="utf-8"))
    html_main = [row[3:] for row in page["enconda-main"][1:]]
    md = (run_dir / "tables.md").read_text(encoding="utf-8")
    md_main = [row[3:] for row in markdown_table(md, "Main table")[1:]]
    term = terminal_main(terminal_text)
    assert html_main == expected, (html_main, expected)
    assert md_main == expected, (md_main, expected)
    assert term == [row[:6] for row in expected], (term, expected)

    counts = csv_counts(run_dir)
    assert counts["pass_at_1"] == expected[0][5]
    assert counts["items"] == {
        item: {k: v for k, v in c.items() if v} for item, c in summary["items"].items()
    }
    html_items = {row[0]: row[1:] for row in page["enconda-items"][1:]}
    for item, c in summary["items"].items():
        assert html_items[item] == [
            str(c.get(k, 0)) for k in ("passed", "failed", "timeout", "skipped", "error")
        ]
    html_types = {row[0]: row for row in page["enconda-types"][1:]}
    md_types = {row[0]: row for row in markdown_table(md, "Per error type")[1:]}
    for error_type in TYPES:
        entry = summary["per_type"].get(error_type) or {}
        want = [str(entry.get("predicted", 0)), str(entry.get("golden", 0))]
        assert html_types[error_type][1:3] == want
        assert md_types[error_type][1:3] == want
        assert [str(counts["predicted"][error_type]), str(counts["golden"][error_type])] == want
        assert html_types[error_type][5] == pct(entry.get("f1")) == md_types[error_type][5]
    return summary
