"""The oracle on a research case without a golden setup: the case's gap, a harness error."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_enconda.agents.base import AgentTask
from pytest_enconda.agents.oracle import OracleAgent
from pytest_enconda.cases.loader import load_case
from pytest_enconda.errors import HarnessError


def _research_case(root: Path, *, golden_setup: bool) -> AgentTask:
    case_dir = root / "cases" / "tiny"
    (case_dir / "repo").mkdir(parents=True)
    (case_dir / "repo" / "train.py").write_text("print('step')\n")
    (case_dir / "README.md").write_text("# tiny\n\nRun `python train.py`.\n")
    lines = ['id = "tiny"', 'suite = "research"', 'readme = "README.md"']
    if golden_setup:
        (case_dir / "setup.sh").write_text("true\n")
        lines.append('golden_setup = "setup.sh"')
    lines += [
        '[repository]\nkind = "folder"\npath = "repo"',
        '[research]\nentry_point = "python train.py"',
    ]
    (case_dir / "case.toml").write_text("\n".join(lines) + "\n")
    case = load_case(case_dir / "case.toml", [root])
    return AgentTask(
        case=case,
        readme_text=case.readme_text,
        readme_name="README.md",
        log_path=root / "agent.log",
        trajectory_path=root / "trajectory.jsonl",
        run_dir=root / "run",
    )


def test_research_case_without_golden_setup_is_a_harness_error(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="the oracle needs the case's golden_setup"):
        OracleAgent().run(_research_case(tmp_path, golden_setup=False))


def test_research_case_with_golden_setup_replays_it(tmp_path: Path) -> None:
    outcome = OracleAgent().run(_research_case(tmp_path, golden_setup=True))
    assert outcome.status == "completed" and outcome.setup_script == "true\n"
