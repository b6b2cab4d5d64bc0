"""The ``readme`` agent: the README's commands as the setup script, no diagnosis."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_enconda.agents import registry
from pytest_enconda.agents.base import AgentTask
from pytest_enconda.agents.readme import ReadmeAgent
from pytest_enconda.cases.enconda_import import load_dataset
from pytest_enconda.cases.models import Case

README = """# Demo

```console
$ git clone https://github.com/o/r.git
$ cd r
Cloning into 'r'...
```

```python
import r
```

1. Install: `pip install -e .`
"""


def _case(tmp_path: Path, text: str, readme: str = "README.md") -> Case:
    root = tmp_path / "d"
    folder = root / "instances" / "error_gen_o_r" / "o_r_error_readme_1"
    folder.mkdir(parents=True)
    (root / "repo_info.jsonl").write_text('{"repository": "o/r", "revision": "abc123"}\n')
    (folder / readme).write_text(text)
    error = {
        "error_type": "E1",
        "error_description": "d",
        "correction_candidates": [],
        "golden_answer": "g",
    }
    (folder / "README.json").write_text(json.dumps({"level": "level1", "errors": [error]}))
    (case,) = load_dataset(root).cases
    return case


def test_readme_agent_follows_the_readme_literally(tmp_path: Path) -> None:
    case = _case(tmp_path, README)
    task = AgentTask(case=case, readme_text=case.readme_text, readme_name="README.md")
    outcome = ReadmeAgent().run(task)
    assert outcome.case_id == case.id
    assert outcome.agent == "readme"
    assert outcome.status == "completed"
    assert outcome.diagnosis == []
    assert outcome.setup_script == (
        "#!/bin/bash\ngit clone https://github.com/o/r.git\ncd r\npip install -e .\n"
    )
    assert [step.command for step in outcome.trajectory] == [
        "git clone https://github.com/o/r.git",
        "cd r",
        "pip install -e .",
    ]


def test_readme_agent_reads_rst_by_the_task_readme_name(tmp_path: Path) -> None:
    text = "Install::\n\n    pip install r\n"
    case = _case(tmp_path, text, readme="README.rst")
    task = AgentTask(case=case, readme_text=text, readme_name="README.rst")
    outcome = registry.create("readme", model="ignored").run(task)
    assert outcome.setup_script == "#!/bin/bash\npip install r\n"


def test_readme_agent_with_no_commands_says_so(tmp_path: Path) -> None:
    case = _case(tmp_path, "Just prose.\n")
    outcome = ReadmeAgent().run(
        AgentTask(case=case, readme_text=case.readme_text, readme_name="README.md")
    )
    assert outcome.setup_script == "#!/bin/bash\n"
    assert outcome.message == "no shell commands found in README.md"
