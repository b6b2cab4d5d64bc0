"""``pytest-enconda imports REPO_DIR [--python PATH] [--json]`` (real pyright, real venv)."""

from __future__ import annotations

import json
import venv
from pathlib import Path

import pytest

from pytest_enconda.cli import main


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "main.py").write_text("import os\nimport zz_not_installed.sub\nimport helper\n")
    (root / "helper.py").write_text("from __future__ import annotations\n")
    return root


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli-venv") / "env"
    venv.create(root, with_pip=False)
    return root / "bin" / "python"


def test_json(repo: Path, bare_python: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["imports", str(repo), "--python", str(bare_python), "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 1
    assert document["names"] == ["__future__", "helper", "os", "zz_not_installed"]
    assert document["total"] == 4
    assert document["missing"] == ["zz_not_installed"]
    assert document["missing_count"] == 1
    assert document["error"] is None
    assert document["python"] == str(bare_python)


def test_text_and_nothing_missing(
    repo: Path, bare_python: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "main.py").write_text("import os\n")
    assert main(["imports", str(repo), "--python", str(bare_python)]) == 0
    assert capsys.readouterr().out.strip() == "0/2 imports missing"  # os, __future__


def test_unmeasured_is_exit_2(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["imports", str(repo), "--python", str(repo / "no-python"), "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 2
    assert document["error_kind"] == "interpreter"
    assert document["missing"] == []


def test_not_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 1 means "some imports missing"; a folder that is not there measured nothing.
    assert main(["imports", str(tmp_path / "nowhere")]) == 2
    assert "C0 not measured" in capsys.readouterr().err


def test_help_states_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["imports", "--help"])
    assert exited.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "0 every import resolves; 1 some imports are missing; 2 not measured" in text
    assert "REPO_DIR is not a directory" in text
