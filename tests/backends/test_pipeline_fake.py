"""The case pipeline on the fake backend: agent, replay, grading and stage dispatch as unit
tests (no Docker, no pytest run). Each was reachable only through a Docker-backed pytester run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.loader import load_case
from pytest_enconda.cases.models import Case
from pytest_enconda.errors import HarnessError
from pytest_enconda.pipeline import CasePipeline
from pytest_enconda.records import CaseDir
from pytest_enconda.settings import EncondaSettings

E4 = {
    "error_type": "E4",
    "error_description": "the README runs `python tools/run.py`, but the file is scripts/run.py",
    "correction_candidates": ["python scripts/run.py"],
    "golden_answer": "python scripts/run.py",
}


def _case(root: Path, *, setup: str, test_command: str = "test -f built.txt") -> Case:
    case_dir = root / "bench" / "cases" / "toy"
    (case_dir / "repo" / "scripts").mkdir(parents=True)
    (case_dir / "repo" / "scripts" / "run.py").write_text("print('ok')\n")
    (case_dir / "README.md").write_text("# toy\n\n```bash\npython tools/run.py\n```\n")
    (case_dir / "golden.json").write_text(json.dumps({"level": 1, "errors": [E4]}))
    (case_dir / "setup.sh").write_text(setup)
    (case_dir / "case.toml").write_text(
        'id = "toy"\nsuite = "diagnosis"\nreadme = "README.md"\ngolden = "golden.json"\n'
        f'golden_setup = "setup.sh"\ntest_command = {json.dumps(test_command)}\n'
        '[repository]\nkind = "folder"\npath = "repo"\n'
        "[budgets]\nsetup_seconds = 30\ntest_seconds = 30\n"
    )
    return load_case(case_dir / "case.toml", [root / "bench"])


def _pipeline(tmp_path: Path, backend: FakeBackend, **settings: Any) -> CasePipeline:
    messages: list[str] = []
    pipeline = CasePipeline(
        EncondaSettings(run_dir=tmp_path / "run", **settings),
        progress=messages.append,
        backend=backend,
    )
    return pipeline


def test_oracle_case_is_graded_on_every_aspect(tmp_path: Path) -> None:
    case = _case(tmp_path, setup="echo built > built.txt\n")
    backend = FakeBackend(tmp_path / "fake")
    pipeline = _pipeline(tmp_path, backend)
    verdicts = {
        aspect: pipeline.verdict(case, aspect).outcome
        for aspect in ("execution", "error_types", "descriptions", "fixes")
    }
    assert verdicts == dict.fromkeys(verdicts, "passed")
    paths = CaseDir(tmp_path / "run", "toy")
    record = json.loads(paths.execution_record.read_text())
    assert [step["name"] for step in record["steps"]][:2] == ["setup", "test"]
    assert json.loads(paths.facts.read_text())["error_types"] == ["E4"]
    # One agent run, one execution replay, however many aspects asked.
    assert len(paths.agent_runs.read_text().splitlines()) == 1
    setups = [c for c in backend.commands() if "setup.sh" in c]
    assert len(setups) == 1, setups


def test_a_setup_that_fails_fails_execution_only(tmp_path: Path) -> None:
    case = _case(tmp_path, setup="exit 3\n")
    pipeline = _pipeline(tmp_path, FakeBackend(tmp_path / "fake"))
    execution = pipeline.verdict(case, "execution")
    assert execution.outcome == "failed"
    assert execution.message.startswith("setup step exited with 3")
    assert pipeline.verdict(case, "error_types").outcome == "passed"


def test_a_readme_agent_that_follows_the_error_fails_the_diagnosis(tmp_path: Path) -> None:
    case = _case(tmp_path, setup="echo built > built.txt\n")
    pipeline = _pipeline(tmp_path, FakeBackend(tmp_path / "fake"), agent="readme")
    # The literal README agent reports no errors: the golden E4 is missed.
    assert pipeline.verdict(case, "error_types").outcome == "failed"
    assert pipeline.verdict(case, "fixes").outcome == "failed"


def test_a_harness_failure_is_kept_and_raised_again(tmp_path: Path) -> None:
    case = _case(tmp_path, setup="true\n")

    class Broken(FakeBackend):
        calls = 0

        def task_image(self, *args: Any, **kwargs: Any) -> str:
            Broken.calls += 1
            raise HarnessError("image build failed: disk full")

    pipeline = _pipeline(tmp_path, Broken(tmp_path / "fake"))
    for aspect in ("execution", "execution"):
        with pytest.raises(HarnessError, match="disk full"):
            pipeline.verdict(case, aspect)
    assert Broken.calls == 1  # the failure is the step's, not retried by every item


def test_stages_dispatch_through_the_registry(tmp_path: Path) -> None:
    from pytest_enconda.probing.pyramid import StageResult
    from pytest_enconda.stages import STAGES, Stage

    ran: list[str] = []

    def run(ctx: Any) -> StageResult:
        ran.append(ctx.case.id)
        probe = ctx.environment.run("echo from-the-box", timeout=10)
        return StageResult(stage="T9", outcome="passed", message=probe.output.strip())

    STAGES.register(Stage(name="T9", title="toy", run=run, probe="test_t9_toy"))
    try:
        case = _case(tmp_path, setup="true\n")
        backend = FakeBackend(tmp_path / "fake", existing="fake:existing")
        backend.add_image("fake:existing")
        pipeline = CasePipeline(
            EncondaSettings(
                run_dir=tmp_path / "run", python=Path("/usr/bin/python3"), repo=tmp_path
            ),
            progress=lambda _message: None,
            backend=backend,
        )
        first = pipeline.stage(case, "T9")
        again = pipeline.stage(case, "T9")
    finally:
        STAGES.unregister("T9")
    assert first.outcome == "passed"
    # Every stage that ran says which interpreter it graded (here the one --python gave).
    assert first.message == "from-the-box [graded python: /usr/bin/python3 (given by --python)]"
    assert again is first and ran == ["toy"]
    assert json.loads(CaseDir(tmp_path / "run", "toy").pyramid("T9").read_text())["outcome"] == (
        "passed"
    )


def test_a_snapshot_lacking_files_is_run_without_them_and_case_json_says_which(
    tmp_path: Path,
) -> None:
    """A fetched snapshot often lacks its largest files' contents: the agent's checkout goes on
    without them (as verify's did for the reference) and case.json names them."""
    from gitutil import git

    case = _case(tmp_path, setup="echo built > built.txt\n")
    work = tmp_path / "work"
    shutil.copytree(case.case_dir / "repo", work)
    (work / "data").mkdir()
    (work / "data" / "big.bin").write_bytes(b"\3" * 4096)
    git(work, "init", "--quiet", "--initial-branch=main")
    git(work, "add", "-A")
    git(work, "commit", "--quiet", "-m", "one")
    commit = git(work, "rev-parse", "HEAD")
    bare = case.case_dir / "repo.git"
    git(tmp_path, "clone", "--quiet", "--bare", str(work), str(bare))
    sha = git(bare, "rev-parse", f"{commit}:data/big.bin")
    (bare / "objects" / sha[:2] / sha[2:]).unlink()
    toml = case.case_dir / "case.toml"
    toml.write_text(
        toml.read_text().replace(
            'kind = "folder"\npath = "repo"',
            f'kind = "git"\npath = "repo.git"\nrevision = "{commit}"',
        )
    )
    case = load_case(toml, [tmp_path / "bench"])
    pipeline, messages = _said_pipeline(tmp_path)
    assert pipeline.verdict(case, "execution").outcome == "passed"
    facts = json.loads(CaseDir(tmp_path / "run", "toy").facts.read_text())
    assert facts["absent_files"] == ["data/big.bin"] and facts["absent_count"] == 1
    assert (
        "toy: warning: the repository's snapshot lacks 1 file(s), checked out without them: "
        "data/big.bin" in messages
    )
    from pytest_enconda.records import read_case_facts

    read = read_case_facts(CaseDir(tmp_path / "run", "toy"))
    assert read is not None and read.absent_files == ["data/big.bin"] and read.absent_count == 1


def test_the_cases_base_image_reaches_the_backend_and_the_download_cache(tmp_path: Path) -> None:
    """An imported case gets its repository's base from the sidecar (``apply_verification``);
    the image is built on it and every box shares that base's download cache."""
    case = _case(tmp_path, setup="echo built > built.txt\n")
    case = case.model_copy(
        update={"spec": case.spec.model_copy(update={"base_image": "bullseye-py3.9"})}
    )
    backend = FakeBackend(tmp_path / "fake")
    messages: list[str] = []
    pipeline = CasePipeline(
        EncondaSettings(run_dir=tmp_path / "run"), progress=messages.append, backend=backend
    )
    assert pipeline.verdict(case, "execution").outcome == "passed"
    assert [call.detail["base"] for call in backend.ops("task_image")] == ["bullseye-py3.9"]
    assert "toy: preparing image (base bullseye-py3.9)" in messages
    caches = {call.detail["download_cache"] for call in backend.ops("start")}
    assert caches == {"base:bullseye-py3.9"}, caches


def test_the_tests_meet_the_repositorys_own_readme_and_the_setup_the_cases(
    tmp_path: Path,
) -> None:
    """nevergrad checks its README's links: with the case's injected README in the tree, the
    oracle failed a PASS-set test that reads it. The setup (the agent's step) sees the case's
    README; the tests, after it, the repository's own."""
    setup = "cp README.md seen-by-setup.md\necho built > built.txt\n"
    test = "grep -q 'own readme' README.md && grep -q 'tools/run.py' seen-by-setup.md"
    case = _case(tmp_path, setup=setup, test_command=test)
    (case.case_dir / "repo" / "README.md").write_text("# toy: the own readme\n")
    backend = FakeBackend(tmp_path / "fake")
    assert _pipeline(tmp_path, backend).verdict(case, "execution").outcome == "passed"
    # The same test fails where the case's README stays (no own README to restore).
    other = _case(tmp_path / "other", setup=setup, test_command=test)
    verdict = _pipeline(tmp_path / "other", FakeBackend(tmp_path / "fake2")).verdict(
        other, "execution"
    )
    assert verdict.outcome == "failed"


def test_an_own_readme_that_cannot_be_restored_is_said(tmp_path: Path) -> None:
    """A repository whose README is a link out of its tree: nothing is read through it, and the
    run says that its tests meet the case's README."""
    case = _case(tmp_path, setup="echo built > built.txt\n")
    outside = tmp_path / "outside.md"
    outside.write_text("# not the repository's\n")
    (case.case_dir / "repo" / "README.md").symlink_to(outside)
    pipeline, messages = _said_pipeline(tmp_path)
    assert pipeline.verdict(case, "execution").outcome == "passed"
    said = [m for m in messages if "cannot be restored" in m]
    assert len(said) == 1 and said[0].startswith("toy: warning: the repository's own README.md")
    assert "the tests run on the case's README" in said[0]


def _said_pipeline(tmp_path: Path) -> tuple[CasePipeline, list[str]]:
    """A pipeline on the fake backend, and the progress lines it says."""
    messages: list[str] = []
    pipeline = CasePipeline(
        EncondaSettings(run_dir=tmp_path / "run"),
        progress=messages.append,
        backend=FakeBackend(tmp_path / "fake"),
    )
    return pipeline, messages
