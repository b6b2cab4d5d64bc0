import json
from pathlib import Path

import pytest
from tabkit import read_csv, to_markdown
from tabkit.cli import main

SALES = Path(__file__).resolve().parent.parent / "data" / "sales.csv"


def test_read_csv_strips_cells() -> None:
    table = read_csv(SALES)
    assert table.columns == ["date", "region", "product", "units", "amount"]
    assert len(table.rows) == 7
    assert table.rows[4]["units"] == ""


def test_markdown_preview_is_aligned(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("name,qty\napple,3\nkiwi,12\n")
    assert to_markdown(read_csv(path)).splitlines() == [
        "| name  | qty |",
        "|-------|-----|",
        "| apple | 3   |",
        "| kiwi  | 12  |",
    ]


def test_stats_command_on_sample_data(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(SALES), "--columns", "date,units"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["date"]["min"] == "2024-01-05"
    assert report["date"]["max"] == "2024-03-01"
    assert report["units"]["missing"] == 1
    assert report["units"]["max"] == 20.0


def test_unknown_column_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(SALES), "--columns", "price"]) == 2
    assert "no column 'price'" in capsys.readouterr().err
