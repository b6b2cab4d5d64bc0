"""The heuristic agent on AEC tasks (any language): the README's build steps become the setup
script and its test runner the test command; the fake backend runs harmless commands (make,
python3) in temp folders. The shipped AEC repositories' READMEs are classified offline; the
agent's real-Docker runs on them are in the memory ablation (README) and the slow test below."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_enconda.agents.base import AgentTask
from pytest_enconda.agents.heuristic import agent as heuristic
from pytest_enconda.agents.heuristic.repo_view import scan
from pytest_enconda.agents.heuristic.steps import readme_steps
from pytest_enconda.backends.base import started
from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.loader import load_case
from pytest_enconda.memory.store import MemoryStore, Provenance, Triple

ROOT = Path(__file__).resolve().parents[2]
AEC_REPOS = ROOT / "benchmark_cases" / "repos" / "aec"

# (repository, the kinds of its README's commands on an AEC task)
SHIPPED = {
    "pyunits": ["env_create", "env_activate", "install", "test"],
    "rsroman": ["apt_update", "state", "install", "test"],
    "zpack": ["apt_update", "install", "install", "test"],
    "gostack": ["apt_update", "install", "test"],
    "jsslug": ["apt_update", "test"],
    "jvbits": ["apt_update", "install", "test"],
    "jsoncount": ["apt_update", "install", "install", "test"],
}


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_build_steps_are_setup_and_runners_are_tests_on_aec(name: str) -> None:
    root = AEC_REPOS / name
    steps = readme_steps((root / "README.md").read_text(), "README.md", scan(root), aec=True)
    assert [step.kind for step in steps] == SHIPPED[name]


def test_a_diagnosis_task_keeps_its_python_reading() -> None:
    # On a diagnosis task (a Python image) node is not there and `./...` reads as a placeholder.
    for name, skipped in (("jsslug", "node --test test/"), ("gostack", "go test -v ./...")):
        root = AEC_REPOS / name
        steps = readme_steps((root / "README.md").read_text(), "README.md", scan(root))
        assert {step.command: step.kind for step in steps}[skipped] == "skip"


MAKEFILE = """\
build:
\tmkdir -p build && printf 'VALUE = 3\\n' > build/generated.py
test:
\tpython3 -m unittest -v
"""
TEST = """\
import sys
import unittest

sys.path.insert(0, "build")


class T(unittest.TestCase):
    def test_value(self):
        import generated

        self.assertEqual(generated.VALUE, 3)
"""
CASE = """\
id = "calc"
suite = "aec"
[repository]
kind = "folder"
path = "repo"
[aec]
language = "c"
"""


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeBackend]:
    backend = FakeBackend(tmp_path / "fake")
    yield backend
    backend.close()


def run_aec(fake: FakeBackend, tmp_path: Path, readme: str, files: dict[str, str], **options):
    case_dir = tmp_path / "bench" / "calc"
    for rel, text in {"README.md": readme, **files}.items():
        (case_dir / "repo" / rel).parent.mkdir(parents=True, exist_ok=True)
        (case_dir / "repo" / rel).write_text(text)
    (case_dir / "case.toml").write_text(CASE)
    case = load_case(case_dir / "case.toml", [tmp_path / "bench"])
    image = fake.task_image(case, case_dir / "repo", {})
    task = AgentTask(
        case=case,
        readme_text=readme,
        readme_name="README.md",
        trajectory_path=tmp_path / "run" / "agent" / "trajectory.jsonl",
        start_container=lambda: started(fake, image, case_id=case.id, role="agent"),
    )
    return heuristic.HeuristicAgent(final_check=False, **options).run(task)


def test_the_agent_writes_the_build_as_setup_and_the_runner_as_test_command(
    fake: FakeBackend, tmp_path: Path
) -> None:
    readme = "# calc\n\n```bash\nmake build\npython3 -m unittest -v\n```\n"
    outcome = run_aec(fake, tmp_path, readme, {"Makefile": MAKEFILE, "test_calc.py": TEST})
    assert outcome.status == "completed"
    assert outcome.setup_script.splitlines()[1:] == ["make build"]
    assert outcome.test_command == "python3 -m unittest -v"
    # The tests really ran in the box after the build (the runner's verbose line).
    assert any("test_value" in step.output and "ok" in step.output for step in outcome.trajectory)


def test_without_a_test_in_the_readme_the_profile_names_the_runner(
    fake: FakeBackend, tmp_path: Path
) -> None:
    readme = "# calc\n\n```bash\nmake build\n```\n"
    makefile = "build:\n\ttouch built\ntest:\n\t@echo '1 test passed'\n"
    outcome = run_aec(fake, tmp_path, readme, {"Makefile": makefile})
    assert outcome.test_command == "make test"
    assert "make test" not in outcome.setup_script


def test_memory_repairs_a_failing_build_step_on_aec(fake: FakeBackend, tmp_path: Path) -> None:
    makefile = (
        "build:\n\t@test -f config.mk || (echo 'BuildConfigError: config.mk missing' && exit 2)\n"
        "test:\n\tpython3 -m unittest -v\n"
    )
    memory = tmp_path / "m.db"
    with MemoryStore(memory) as store:
        store.add(
            Triple(
                "`make build` fails: BuildConfigError: config.mk missing",
                "Root cause: the build reads a configuration file. Fix: create it",
                "touch config.mk",
                "BuildConfigError: config.mk missing",
            ),
            Provenance("other", "r", "heuristic", "", "elsewhere/another"),
        )
    readme = "# calc\n\n```bash\nmake build\nmake test\n```\n"
    outcome = run_aec(
        fake, tmp_path, readme, {"Makefile": makefile, "test_x.py": "x = 1\n"}, memory=str(memory)
    )
    assert outcome.setup_script.splitlines()[1:] == ["touch config.mk", "make build"]
    assert outcome.test_command == "make test"
    record = json.loads((tmp_path / "run" / "agent" / "memory.json").read_text())
    assert record["used"] == [1] and record["helped"] == [1]


@pytest.mark.slow
@pytest.mark.docker
def test_heuristic_passes_a_shipped_aec_case_in_docker(tmp_path: Path) -> None:
    """Real Docker: the heuristic agent on the Go case (Debian's golang-go, `go build`,
    `go test -v ./...`): all three AEC items pass, graded by the case's reference command; the
    agent's own is recorded."""
    run_dir = tmp_path / "run"
    subprocess.run(
        [sys.executable, "-m", "pytest", "benchmark_cases/aec/aec-go-gostack", "-q",
         "-p", "no:cacheprovider", "--agent=heuristic", f"--run-dir={run_dir}"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
        timeout=1800,
    )  # fmt: skip
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert {row["item"]: row["outcome"] for row in rows} == dict.fromkeys(
        ("aec_tests_run", "aec_pass_set", "aec_success"), "passed"
    )
    case = run_dir / "cases" / "aec-go-gostack"
    assert (case / "agent" / "output" / "test_command").read_text().strip() == "go test -v ./..."
    grade = json.loads((case / "aec.json").read_text())
    assert grade["command_source"] == "reference"
    assert grade["agent_test_command"] == "go test -v ./..."
    assert json.loads((case / "case.json").read_text())["repository"] == "../../repos/aec/gostack"
