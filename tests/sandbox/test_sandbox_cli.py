"""The ``pytest-enconda`` command line (images, recipes, build-base, cleanup, prune).

Kept under tests/sandbox/ for the Docker fixtures of its conftest (everything it manages is
sandbox state).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
from datetime import timedelta

import pytest

from pytest_enconda.cli import main, parse_duration


def test_parse_duration() -> None:
    assert parse_duration("7d") == timedelta(days=7)
    assert parse_duration("12h") == timedelta(hours=12)
    assert parse_duration("2w") == timedelta(weeks=2)
    with pytest.raises(argparse.ArgumentTypeError, match="expected a duration"):
        parse_duration("soon")


def test_bad_arguments_exit_with_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["prune", "--max-size", "huge"])
    assert info.value.code == 2
    assert "expected a size" in capsys.readouterr().err


def test_console_script_is_installed() -> None:
    script = shutil.which("pytest-enconda")
    if script is None:
        pytest.skip("pytest-enconda is not on PATH (package not installed with its scripts)")
    result = subprocess.run([script, "--help"], capture_output=True, text=True, check=False)
    assert result.returncode == 0
    for command in ("images", "build-base", "cleanup", "prune"):
        assert command in result.stdout


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    # rich would shorten table cells to 80 columns under capture.
    monkeypatch.setenv("COLUMNS", "250")


@pytest.mark.docker
def test_images_lists_the_base(
    base_image: str, wide: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["images"]) == 0
    out = capsys.readouterr().out
    assert base_image in out
    assert "bookworm-py3.11" in out


@pytest.mark.docker
def test_build_base_reuses_an_unchanged_recipe(
    base_image: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["build-base", "bookworm-py3.11"]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip().splitlines()[-1] == base_image
    assert "already present" in captured.err


@pytest.mark.docker
def test_unknown_recipe_is_an_error(capsys: pytest.CaptureFixture[str], docker_client) -> None:
    assert main(["build-base", "no-such-recipe"]) == 1
    assert "unknown base image recipe 'no-such-recipe'" in capsys.readouterr().err


@pytest.mark.docker
def test_cleanup_and_prune_dry_runs(
    docker_client, wide: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cleanup", "--dry-run"]) == 0
    assert "leftover containers (dry run)" in capsys.readouterr().out
    assert main(["prune", "--dry-run", "--older-than", "3650d"]) == 0
    assert "would remove 0 image(s)" in capsys.readouterr().out


@pytest.mark.docker
def test_cleanup_of_a_run_removes_its_containers(
    base_image: str, docker_client, sandbox_settings, capsys: pytest.CaptureFixture[str]
) -> None:
    from docker.errors import NotFound

    from pytest_enconda.sandbox.containers import Sandbox

    keep = sandbox_settings.model_copy(update={"keep_containers": True})
    run_id = f"cli-{os.getpid()}"
    with Sandbox(keep, run_id, client=docker_client).container(
        base_image, case_id="t/cli", role="agent"
    ) as box:
        pass
    assert main(["cleanup", "--run", run_id]) == 0
    assert "removed 1 container(s)" in capsys.readouterr().out
    with pytest.raises(NotFound):
        docker_client.containers.get(box.id)
