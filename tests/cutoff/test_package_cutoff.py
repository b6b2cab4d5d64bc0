"""The reference's package cutoff is the instance's (issue 47 item 2): the agent's box, the
execution replay and the agent's task all carry it. Fake backend for the wiring, the real
engine and PyPI for what pip does with it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_enconda.agents.base import AgentTask
from pytest_enconda.agents.prompts import instance_prompt, zero_shot_prompt
from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.models import Case, ExecutionReference
from pytest_enconda.package_cutoff import CUTOFF_VARIABLES, cutoff_env, cutoff_note, cutoff_of
from pytest_enconda.probing.execution import run_execution
from pytest_enconda.records import CaseDir

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backends"))
from cases_for_tests import make_case

MOMENT = "2024-06-19T17:44:33Z"
SEES_CUTOFF = " && ".join(f'test "${name}" = {MOMENT}' for name in CUTOFF_VARIABLES)


def _with_reference(case: Case, moment: str, *, verified: bool = True) -> Case:
    reference = ExecutionReference(verified=verified, packages_before=moment)
    return case.model_copy(update={"reference": reference})


def test_only_a_verified_reference_with_a_cutoff_gives_one(tmp_path: Path) -> None:
    case = make_case(tmp_path / "c")
    assert cutoff_of(case) == "" and cutoff_env(case) == {}
    assert cutoff_env(_with_reference(case, MOMENT, verified=False)) == {}
    assert cutoff_env(_with_reference(case, "")) == {}
    assert cutoff_env(_with_reference(case, MOMENT)) == dict.fromkeys(CUTOFF_VARIABLES, MOMENT)


def test_the_task_says_the_date_only_where_there_is_one(tmp_path: Path) -> None:
    case = _with_reference(make_case(tmp_path / "c"), MOMENT)
    task = AgentTask(case=case, readme_text="# r\n", readme_name="README.md")
    assert task.packages_before == MOMENT
    common = {
        "case_id": case.id,
        "suite": "diagnosis",
        "workdir": "/data/project",
        "readme_name": "README.md",
        "readme_text": "# r\n",
        "profile": "python",
    }
    dated = instance_prompt(**common, packages_before=MOMENT)
    assert f"world of {MOMENT}" in dated and "PIP_UPLOADED_PRIOR_TO" in dated
    assert "reference's day" not in instance_prompt(**common)
    shot = zero_shot_prompt(**common, file_tree="x", environment="y", packages_before=MOMENT)
    assert cutoff_note(MOMENT) in shot
    assert cutoff_note("") == ""


def test_the_replay_runs_under_the_cutoff(tmp_path: Path) -> None:
    """The replayed setup sees the case's cutoff; a case without one sees none."""
    fake = FakeBackend(tmp_path / "fake")
    try:
        outcomes = []
        for name, moment in (("dated", MOMENT), ("today", "")):
            case = make_case(tmp_path / name, test_command="true")
            case = _with_reference(case, moment) if moment else case
            image = fake.task_image(case, case.case_dir / "repo", {})
            paths = CaseDir(tmp_path / "run", f"{name}-case")
            record = run_execution(fake, image, case, SEES_CUTOFF + "\n", paths)
            outcomes.append(record.steps[0].exit_code)
        assert outcomes == [0, 1]
        starts = [call.detail for call in fake.ops("start") if call.detail["role"] == "execution"]
        assert len(starts) == 2
    finally:
        fake.close()


@pytest.mark.slow  # installs pip 26 and asks PyPI: about a minute
def test_pip_in_a_box_with_the_cutoff_installs_the_release_of_that_day(sandbox, base_image) -> None:
    """In a real box with the case's variables, pip (26, as the task says to install) picks
    the release of the cutoff's day: packaging 24.1 (2024-06-10), not a later one."""
    case_env = dict.fromkeys(CUTOFF_VARIABLES, MOMENT)
    with sandbox.container(base_image, case_id="t/cutoff", role="agent", env=case_env) as box:
        upgrade = box.exec(
            "PIP_UPLOADED_PRIOR_TO= python3 -m pip install -q --break-system-packages "
            "'pip>=26' && python3 -m pip --version",
            timeout=300,
        )
        assert upgrade.exit_code == 0, upgrade.output
        fetched = box.exec(
            "python3 -m pip download -q --no-deps -d /tmp/dl packaging && ls /tmp/dl",
            timeout=300,
        )
        assert fetched.exit_code == 0, fetched.output
        assert "packaging-24.1-" in fetched.output, fetched.output
