"""An agent loop on the fake backend: the ``command`` agent acting in its box, as it does in a
container (prompt in, command run with the ENCONDA_* contract, outputs collected and read)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cases_for_tests import make_case

from pytest_enconda.agents.base import AgentTask
from pytest_enconda.agents.command import CommandAgent
from pytest_enconda.backends.base import started
from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.models import Case

AGENT = r"""
test -s "$ENCONDA_PROMPT_FILE" || exit 9
grep -q "pip install" "$ENCONDA_PROMPT_FILE" || exit 8
printf 'pip install -r requirements.txt\n' > "$ENCONDA_OUTPUT_DIR/setup.sh"
printf '%s' '[{"error_type": "E4", "error_description": "wrong path"}]' \
  > "$ENCONDA_OUTPUT_DIR/diagnosis.json"
echo "case $ENCONDA_CASE_ID in $(basename "$PWD")"
"""


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeBackend]:
    backend = FakeBackend(tmp_path / "fake")
    yield backend
    backend.close()


def task_for(fake: FakeBackend, case: Case, tmp_path: Path) -> AgentTask:
    image = fake.task_image(case, case.case_dir / "repo", {"README.md": case.readme_text.encode()})
    return AgentTask(
        case=case,
        readme_text=case.readme_text,
        readme_name="README.md",
        trajectory_path=tmp_path / "run" / "agent" / "trajectory.jsonl",
        start_container=lambda: started(fake, image, case_id=case.id, role="agent"),
    )


def test_command_agent_in_its_box_leaves_outputs_that_are_read(
    fake: FakeBackend, tmp_path: Path
) -> None:
    case = make_case(tmp_path / "case")
    agent = CommandAgent(command=AGENT, in_container=True, timeout=30)
    outcome = agent.run(task_for(fake, case, tmp_path))
    assert outcome.status == "completed", outcome.message
    assert outcome.setup_script == "pip install -r requirements.txt\n"
    assert [error.error_type for error in outcome.diagnosis] == ["E4"]
    assert outcome.trajectory[0].output.strip() == "case one in project"
    kept = tmp_path / "run" / "agent" / "output" / "diagnosis.json"
    assert json.loads(kept.read_text())[0]["error_description"] == "wrong path"
    assert (tmp_path / "run" / "agent" / "profile.json").is_file()
    # The box is removed once the agent is done with it.
    assert not fake.live


def test_command_agent_past_its_timeout(fake: FakeBackend, tmp_path: Path) -> None:
    case = make_case(tmp_path / "case")
    agent = CommandAgent(command="echo thinking; sleep 60", in_container=True, timeout=1)
    outcome = agent.run(task_for(fake, case, tmp_path))
    assert outcome.status == "timeout"
    assert outcome.trajectory[0].timed_out
    assert "setup.sh" in outcome.output_problems
