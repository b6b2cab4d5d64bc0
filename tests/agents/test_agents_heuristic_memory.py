"""The heuristic agent with a memory file, and the mistakes hidden repositories showed it makes,
on the fake backend (boxes are temp folders: only harmless commands run)."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backends"))
from cases_for_tests import make_case

from pytest_enconda.agents.base import AgentTask
from pytest_enconda.agents.heuristic import agent as heuristic
from pytest_enconda.agents.heuristic.findings import Finding
from pytest_enconda.agents.heuristic.memory import expected_to_fail
from pytest_enconda.agents.heuristic.repo_view import scan
from pytest_enconda.agents.heuristic.run import Run
from pytest_enconda.agents.heuristic.steps import readme_steps
from pytest_enconda.agents.llm import TrajectoryWriter
from pytest_enconda.backends.base import started
from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.loader import load_case
from pytest_enconda.memory.store import MemoryStore, Provenance, Triple

TOOL = """\
import argparse, pathlib, sys
parser = argparse.ArgumentParser(prog="tool")
parser.add_argument("command", choices=["run"])
args = parser.parse_args()
if not pathlib.Path(".toolrc").exists():
    sys.exit("ToolConfigError: settings file .toolrc missing")
print("ran")
"""
PYPROJECT = '[project]\nname = "minitool"\nversion = "0.1.0"\n'


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeBackend]:
    backend = FakeBackend(tmp_path / "fake")
    yield backend
    backend.close()


def run_agent(fake: FakeBackend, tmp_path: Path, readme: str, files: dict[str, str], **options):
    case = make_case(
        tmp_path / "case", files={"tool.py": TOOL, "pyproject.toml": PYPROJECT, **files}
    )
    (case.case_dir / "README.md").write_text(readme)
    case = load_case(case.case_dir / "case.toml", [tmp_path / "case" / "bench"])
    image = fake.task_image(case, case.case_dir / "repo", {"README.md": readme.encode()})
    task = AgentTask(
        case=case,
        readme_text=readme,
        readme_name="README.md",
        trajectory_path=tmp_path / "run" / "agent" / "trajectory.jsonl",
        start_container=lambda: started(fake, image, case_id=case.id, role="agent"),
    )
    agent = heuristic.HeuristicAgent(final_check=False, **options)
    return agent.run(task)


def memory_file(path: Path, repository: str) -> Path:
    with MemoryStore(path) as store:
        store.add(
            Triple(
                "`<project> run` fails: ToolConfigError: settings file .toolrc missing",
                "Root cause: the tool needs its settings file. Fix: create it",
                "touch .toolrc",
                "ToolConfigError: settings file .toolrc missing",
                "E1",
            ),
            Provenance("other-e1", "r", "heuristic", "", repository),
        )
    return path


USAGE = "# minitool\n\n## Usage\n\n```bash\npython tool.py run\n```\n"


def test_a_failure_the_memory_knows_is_repaired_by_its_action(
    fake: FakeBackend, tmp_path: Path
) -> None:
    memory = memory_file(tmp_path / "m.db", "elsewhere/otherrepo")
    outcome = run_agent(fake, tmp_path, USAGE, {}, memory=str(memory))
    assert "touch .toolrc" in outcome.setup_script
    assert [e.error_type for e in outcome.diagnosis] == ["E1"]
    record = json.loads((tmp_path / "run" / "agent" / "memory.json").read_text())
    assert record["given"] == [1] and record["used"] == [1] and record["helped"] == [1]
    assert any(s.output.strip() == "ran" for s in outcome.trajectory)


ENV_TOOL = """\
import os, sys
if "TOOL_HOME" not in os.environ:
    sys.exit("ToolHomeError: TOOL_HOME is not set")
print("ran with", os.environ["TOOL_HOME"])
"""


def test_an_action_that_sets_shell_state_reaches_the_retried_step(
    fake: FakeBackend, tmp_path: Path
) -> None:
    # Each command runs in a fresh shell: the stored `export` must be carried to the retry and
    # to every later step (the setuptools-scm triple never helped before).
    with MemoryStore(tmp_path / "m.db") as store:
        store.add(
            Triple(
                "`python tool.py` fails: ToolHomeError: TOOL_HOME is not set",
                "Root cause: the tool reads its home from the environment.",
                "export TOOL_HOME=/tmp",
                "ToolHomeError: TOOL_HOME is not set",
            ),
            Provenance("other-e8", "r", "heuristic", "", "elsewhere/otherrepo"),
        )
    readme = "# minitool\n\n```bash\npython tool.py\npython tool.py\n```\n"
    outcome = run_agent(
        fake, tmp_path, readme, {"tool.py": ENV_TOOL}, memory=str(tmp_path / "m.db")
    )
    record = json.loads((tmp_path / "run" / "agent" / "memory.json").read_text())
    assert record["used"] == [1] and record["helped"] == [1]
    # The export joins the setup script (the tool's runs are usage checks, not setup).
    assert "export TOOL_HOME=/tmp" in outcome.setup_script.splitlines()
    # The second README line ran after the export too, in its own shell.
    assert sum(s.output.strip() == "ran with /tmp" for s in outcome.trajectory) >= 2


def test_the_leakage_guard_withholds_the_cases_own_repository(
    fake: FakeBackend, tmp_path: Path
) -> None:
    # make_case's repository folder is called "repo".
    memory = memory_file(tmp_path / "m.db", "../somewhere/repo")
    outcome = run_agent(fake, tmp_path, USAGE, {}, memory=str(memory))
    assert "touch .toolrc" not in outcome.setup_script
    record = json.loads((tmp_path / "run" / "agent" / "memory.json").read_text())
    assert record["given"] == [] and record["helped"] == []
    opened = run_agent(
        fake, tmp_path / "again", USAGE, {}, memory=str(memory), memory_same_repository=True
    )
    assert "touch .toolrc" in opened.setup_script


def test_a_repair_after_which_the_command_fails_the_same_way_is_not_repeated(
    fake: FakeBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    useless = Finding(
        None,
        "needs something",
        "true",
        action="prepend",
        commands=["true"],
        key="useless",
        rule="test",
    )
    monkeypatch.setattr(
        "pytest_enconda.agents.heuristic.run.classify",
        lambda step, command, code, *rest: useless if code else None,
    )
    outcome = run_agent(fake, tmp_path, USAGE, {})
    runs = [s for s in outcome.trajectory if s.command == "python tool.py run"]
    assert len(runs) == 2  # the first failure and one retry after the repair; before: 4


def test_an_example_the_readme_says_fails_is_no_usage_error(
    fake: FakeBackend, tmp_path: Path
) -> None:
    readme = (
        "# minitool\n\n## Usage\n\n```bash\ntouch .toolrc\npython tool.py run\n```\n\n"
        "An unknown command is rejected:\n\n```bash\npython tool.py walk\n```\n"
    )
    outcome = run_agent(fake, tmp_path, readme, {})
    assert [e.error_type for e in outcome.diagnosis] == []
    plain = readme.replace("An unknown command is rejected:", "Walking:")
    assert [e.error_type for e in run_agent(fake, tmp_path / "b", plain, {}).diagnosis] == ["E2"]


def test_expected_to_fail_reads_the_prose_around_the_block() -> None:
    assert expected_to_fail("This fails with an error:\n\n```\nx --bad\n```\n", "x --bad")
    assert expected_to_fail("```\nx --bad\n```\n\nwhich is rejected.\n", "x --bad")
    assert not expected_to_fail("If the install fails, see below.\n\n```\nx\n```\n", "x")


def test_cd_into_the_repositorys_own_name_is_skipped_not_repaired_into_a_subfolder(
    fake: FakeBackend, tmp_path: Path
) -> None:
    readme = (
        "# minitool\n\n## Usage\n\n```bash\ncd minitool-main\ntouch .toolrc\n"
        "python tool.py run\n```\n"
    )
    outcome = run_agent(fake, tmp_path, readme, {"minitool/__init__.py": ""})
    assert not any(s.command.startswith("cd ") for s in outcome.trajectory)
    assert any(s.command == "python tool.py run" and s.exit_code == 0 for s in outcome.trajectory)
    assert "cd " not in outcome.setup_script


def _run_for(tmp_path: Path, readme: str, files: dict[str, str]) -> Run:
    repo = tmp_path / "repo"
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    case = make_case(tmp_path / "case")
    task = AgentTask(case=case, readme_text=readme, readme_name="README.md")
    facts = scan(repo)
    steps = readme_steps(readme, "README.md", facts)
    writer = TrajectoryWriter(None)
    return Run(None, task, facts, steps, writer, heuristic.HeuristicConfig(), 0.0, 10)


def test_pip_install_of_the_project_installs_the_checkout(tmp_path: Path) -> None:
    readme = (
        "# minitool\n\n## Install\n\n```bash\npip install minitool[yaml]\npip install rich\n```\n"
    )
    run = _run_for(tmp_path, readme, {"pyproject.toml": PYPROJECT, "minitool_pkg/__init__.py": ""})
    plan = run.initial_plan([])
    finals = [run.steps[i].final for i in plan]
    assert finals[:2] == ['pip install ".[yaml]"', "pip install rich"]


def test_extras_of_a_setup_py_written_with_variables(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text(
        textwrap.dedent("""\
        from setuptools import setup
        test_deps = ["pytest", "pytest-cov"]
        yaml = ["pyyaml>=6"]
        extras = {"test": test_deps, "yaml": yaml}
        extras["all"] = test_deps + yaml
        setup(name="minitool", extras_require=extras)
    """)
    )
    facts = scan(tmp_path)
    assert facts.extras == {
        "test": ["pytest", "pytest-cov"],
        "yaml": ["pyyaml>=6"],
        "all": ["pytest", "pytest-cov", "pyyaml>=6"],
    }


def test_helped_counts_are_written_back_once_per_run(fake: FakeBackend, tmp_path: Path) -> None:
    """The heuristic agent's real record of a repair, credited to the memory file by
    ``pytest-enconda memory credit``: once, however often the run is given."""
    import shutil
    import subprocess
    import sys

    memory = memory_file(tmp_path / "m.db", "elsewhere/otherrepo")
    run_agent(fake, tmp_path, USAGE, {}, memory=str(memory))
    run = tmp_path / "bench-run"
    (run / "cases" / "toy" / "agent").mkdir(parents=True)
    shutil.copy(tmp_path / "run" / "agent" / "memory.json", run / "cases" / "toy" / "agent")
    # A record that names another memory file is not credited to this one.
    (run / "cases" / "other" / "agent").mkdir(parents=True)
    (run / "cases" / "other" / "agent" / "memory.json").write_text(
        json.dumps({"memory": str(tmp_path / "else.db"), "given": [1], "helped": [1]})
    )
    # Nor is a record that is a link out of the run directory.
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"given": [1], "used": [1], "helped": [1]}))
    (run / "cases" / "linked" / "agent").mkdir(parents=True)
    (run / "cases" / "linked" / "agent" / "memory.json").symlink_to(outside)

    def credit() -> str:
        done = subprocess.run(
            [sys.executable, "-m", "pytest_enconda.cli", "memory", "credit", str(memory), str(run)],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    first = credit()
    assert "1 runs credited (1 cases): retrieved +1, used +1, helped +1" in first
    assert "given by another memory file" in first and "linked" in first
    second = credit()
    assert "0 runs credited" in second and "already credited" in second
    with MemoryStore(memory, readonly=True) as store:
        row = store.db.execute(
            "SELECT retrieved, used, helped FROM triples WHERE id = 1"
        ).fetchone()
        assert tuple(row) == (1, 1, 1)
        assert store.stats()["helped"] == 1
