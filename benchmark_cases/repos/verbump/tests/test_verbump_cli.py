import shutil
from pathlib import Path

import pytest
from verbump.cli import main

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo" / "pyproject.toml"


def test_bump_writes_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pyproject.toml"
    shutil.copy(DEMO, path)
    assert main(["bump", "pre", str(path)]) == 0
    assert capsys.readouterr().out.strip() == "1.4.0rc2 -> 1.4.0rc3"
    assert 'version = "1.4.0rc3"  # bumped by verbump' in path.read_text()
    assert 'version = "not the project version"' in path.read_text()


def test_dry_run_leaves_the_file_alone(capsys: pytest.CaptureFixture[str]) -> None:
    before = DEMO.read_text()
    assert main(["bump", "minor", str(DEMO), "--dry-run"]) == 0
    assert capsys.readouterr().out.strip() == "1.4.0rc2 -> 1.5.0 (dry run)"
    assert DEMO.read_text() == before


def test_missing_file_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(tmp_path / "pyproject.toml")]) == 1
    assert "No such file" in capsys.readouterr().err
