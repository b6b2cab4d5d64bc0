"""Options are declared once: every option becomes a setting under its own name (issue 17)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_enconda.options import declared
from pytest_enconda.settings import EncondaSettings, from_config

pytest_plugins = ["pytester"]


def test_every_option_is_a_setting_and_every_setting_an_option() -> None:
    options = set(declared())
    assert "agent" in options and "keep_containers" in options  # the table was read
    # The one rename: repeated KEY=VALUE pairs arrive as a mapping.
    assert set(EncondaSettings.model_fields) == (options - {"agent_option"}) | {"agent_options"}


def test_settings_carry_the_parsed_values(pytester: pytest.Pytester) -> None:
    run = pytester.path / "run"
    config = pytester.parseconfig(
        "--run-dir",
        str(run),
        "--agent-option",
        "a=1",
        "--gpus",
        "2",
        "--ddp-cpu",
        "--probes",
        str(pytester.path),
    )
    settings = from_config(config)
    assert settings.run_dir == run.resolve()
    assert settings.agent_options == {"a": "1"}
    assert settings.gpus == "2" and settings.ddp_cpu is True
    assert settings.probes == (pytester.path.resolve(),)
    assert settings.resume is False and settings.judge == "offline"


def test_memory_goes_to_agents_that_take_it(pytester: pytest.Pytester) -> None:
    memory = pytester.path / "memory.sqlite"
    memory.write_bytes(b"")
    run = str(pytester.path / "run")
    settings = from_config(
        pytester.parseconfig("--run-dir", run, "--agent", "heuristic", "--memory", str(memory))
    )
    assert settings.memory == memory.resolve()
    with pytest.raises(pytest.UsageError, match="--agent=readme takes no prior knowledge"):
        from_config(
            pytester.parseconfig("--run-dir", run, "--agent", "readme", "--memory", str(memory))
        )


def _research_release(root: Path) -> Path:
    """A ResearchEnvBench-like release: its metadata in a subfolder, tests of its own beside."""
    data = root / "release" / "data"
    data.mkdir(parents=True)
    (data / "manifest.json").write_text("[]")
    (data / "scripts_repos_test_categories.csv").write_text("repo_id\n")
    (root / "release" / "tests").mkdir()
    (root / "release" / "tests" / "test_release.py").write_text("def test_x():\n    pass\n")
    return root / "release"


def test_cases_finds_the_dataset_in_a_release_subfolder(pytester: pytest.Pytester) -> None:
    release = _research_release(pytester.path)
    config = pytester.parseconfig("--cases", str(release))
    assert config.getoption("cases") == [(release / "data").resolve()]


def test_cases_without_any_dataset_is_a_usage_error(pytester: pytest.Pytester) -> None:
    empty = pytester.path / "nothing"
    empty.mkdir()
    (empty / "notes.txt").write_text("x\n")
    result = pytester.runpytest("--cases", str(empty))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "no dataset here or in its subfolders" in result.stderr.str()
