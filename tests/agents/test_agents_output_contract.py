"""The output contract's files and the zero-shot answer parser, on real files and strings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_enconda.agents.output import parse_diagnosis, read_outputs
from pytest_enconda.agents.profile import build_profile
from pytest_enconda.agents.zero_shot import parse_response

ERROR = {"error_type": "E1", "error_description": "d", "fix_suggestion": "f"}


def test_diagnosis_object_or_bare_list() -> None:
    assert parse_diagnosis(json.dumps({"detected_errors": [ERROR]}))[0].error_type == "E1"
    assert parse_diagnosis(json.dumps([ERROR]))[0].fix_suggestion == "f"
    assert parse_diagnosis(b"\xef\xbb\xbf[]") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{\n  "detected_errors": [\n    {"error_type": "E1",,}\n  ]\n}', "diagnosis.json: line 3"),
        ('{"errors": []}', "diagnosis.json: expected the key 'detected_errors'"),
        ('"E1"', "diagnosis.json: expected an object with 'detected_errors' or a list"),
        ('[{"error_description": "x"}]', "diagnosis.json: detected_errors.0.error_type: Field"),
    ],
)
def test_malformed_diagnosis_names_file_line_and_field(text: str, expected: str) -> None:
    with pytest.raises(ValueError, match="^" + expected.replace(".", r"\.").replace("(", r"\(")):
        parse_diagnosis(text)


def test_read_outputs_reports_each_missing_or_malformed_file(tmp_path: Path) -> None:
    outputs = read_outputs(tmp_path)
    assert outputs.problems == {
        "setup.sh": "no setup script written (/enconda/output/setup.sh is missing)",
        "diagnosis.json": "no diagnosis written (/enconda/output/diagnosis.json is missing)",
    }
    (tmp_path / "setup.sh").write_text("  \n")
    (tmp_path / "diagnosis.json").write_text("[1, 2")
    outputs = read_outputs(tmp_path)
    assert outputs.problems["setup.sh"] == "setup.sh: the setup script is empty"
    assert outputs.problems["diagnosis.json"].startswith("diagnosis.json: line 1 column 6")
    (tmp_path / "setup.sh").write_text("pip install .\n")
    (tmp_path / "report.json").write_text("[]")
    research = read_outputs(tmp_path, research=True)
    assert research.setup_script == "pip install .\n"
    assert research.problems == {"report.json": "report.json: expected a JSON object, got list"}
    assert research.self_report == {"__invalid__": research.problems["report.json"]}


DIAG = (
    '{"detected_errors": [{"error_type": "E4", "error_description": "d", "fix_suggestion": "f"}]}'
)


@pytest.mark.parametrize(
    "answer",
    [
        f"Here:\n```json\n{DIAG}\n```\nand\n```bash\ntouch ok\n```\nDone.",
        f"```JSON\n{DIAG}\n```\n```Shell\ntouch ok\n```",
        f"```json\n{DIAG}\n```\n```sh\ntouch ok\n```",
        f"Analysis: {DIAG} -- now the script:\n```BASH\ntouch ok\n```",
        f"```\n{DIAG}\n```\n```\ntouch ok\n```",
    ],
)
def test_zero_shot_answers_in_many_forms(answer: str) -> None:
    parsed = parse_response(answer)
    assert parsed.problems == {}
    assert parsed.value["detected_errors"][0]["error_type"] == "E4"
    assert parsed.script == "touch ok\n"


def test_zero_shot_malformed_answers() -> None:
    assert parse_response("I think it is fine.").problems == {
        "json": "the response has no ```json block and no JSON object",
        "script": "no setup script: the response has no ```bash (or sh/shell) block",
    }
    broken = parse_response('```json\n{"detected_errors": [\n  {"error_type": "E1",}\n]}\n```')
    assert broken.problems["json"].startswith("the response's ```json block: line 2 column")
    assert "script" in broken.problems
    listed = parse_response('```json\n[{"error_type": "E2"}]\n```\n```bash\n\n```')
    assert listed.value == [{"error_type": "E2"}]
    assert listed.problems == {"script": "the response's ```bash block is empty"}


def test_profile_reads_ci_manifests_and_readme(tmp_path: Path) -> None:
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "ci.yml").write_text(
        "jobs:\n  test:\n    strategy:\n      matrix:\n        python-version: ['3.10', '3.12']\n"
        "    steps:\n      - run: sudo apt-get install -y libpq-dev graphviz\n"
    )
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\nrequires-python = ">=3.10"\ndependencies = ["lxml>=4", '
        '"psycopg2"]\n[project.optional-dependencies]\ndev = ["pytest"]\n'
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
    )
    (tmp_path / "tox.ini").write_text("[tox]\n")
    (tmp_path / "README.md").write_text("```\napt install -y libmagic1\n```\n")
    first = build_profile(tmp_path)
    assert first == build_profile(tmp_path)  # deterministic
    assert first.ci_python_versions == ["3.10", "3.12"]
    assert first.ci_system_packages == ["libpq-dev", "graphviz"]
    assert first.readme_system_packages == ["libmagic1"]
    assert first.likely_system_packages == ["libxml2-dev", "libxslt1-dev", "libpq-dev"]
    assert first.install_command == 'pip install -e ".[dev]"'
    assert first.build_tools == ["hatchling", "backend hatchling.build", "tox"]
    assert first.test_framework == "pytest" and first.python_requires == ">=3.10"
    (tmp_path / "poetry.lock").write_text("")
    assert build_profile(tmp_path).install_command == "poetry install"


def test_agent_modules_import_no_model_library() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from pytest_enconda.agents import registry\n"
        "for name in ('swe-agent', 'zero-shot', 'command'):\n"
        "    registry.check_options(name, model='m', command='true')\n"
        "print(','.join(m for m in ('litellm', 'minisweagent', 'docker') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    # command takes no 'model'-only options; swe-agent and zero-shot reject 'command'.
    assert "Extra inputs are not permitted" in out.stderr
    code = code.replace(
        "for name in ('swe-agent', 'zero-shot', 'command'):\n"
        "    registry.check_options(name, model='m', command='true')\n",
        "registry.check_options('swe-agent', model='m')\n"
        "registry.check_options('zero-shot', model='m')\n"
        "registry.check_options('command', command='true')\n",
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
