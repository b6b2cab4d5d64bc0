"""AEC's graded step on the fake backend: the case's tests restored after the agent's setup,
its changes to them failing ``aec_success`` with the diff, the reference command run in a clean
shell, and a toolchain program the setup wrote failing every item."""

from __future__ import annotations

import json
from pathlib import Path

from test_aec_grading_fake import REFERENCE, Scripted, aec_case, grade_file, pipeline, verdicts

from pytest_enconda.aec.graded_env import check_tools, clean_environment, tools_to_check
from pytest_enconda.aec.test_sections import test_part as part
from pytest_enconda.ecosystems.testfiles import test_files as files_of
from pytest_enconda.records import CaseDir

HONEST = "export PYTHONPATH=$PWD/src\n"


def outcomes(tmp_path: Path, setup: str, command: str = REFERENCE) -> dict[str, object]:
    case = aec_case(tmp_path)
    got = verdicts(pipeline(tmp_path, Scripted(setup, command)), case)
    return {name: verdict for name, verdict in got.items()}


def test_deleting_a_failing_test_is_undone_and_reported(tmp_path: Path) -> None:
    # The environment lacks data.txt, so test_data fails; the cheat deletes the test file's
    # failing test by rewriting the file.
    setup = HONEST + "rm data.txt\nsed -i '/def test_data/,$d' test_calc.py\n"
    got = outcomes(tmp_path, setup)
    success = got["aec_success"]
    assert success.outcome == "failed"  # type: ignore[attr-defined]
    assert "tests modified" in success.message and "modified test_calc.py" in success.message  # type: ignore[attr-defined]
    assert "-    def test_data(self):" in success.message  # type: ignore[attr-defined]
    # The restored test ran, and failed: the PASS set says so too.
    share = got["aec_pass_set"].numbers["pass_set"]  # type: ignore[attr-defined]
    assert share["missing"] == ["test_calc.T.test_data"]
    diff = CaseDir(tmp_path / "run", "calc").root / "aec" / "agent.diff"
    assert "test_data" in diff.read_text()


def test_an_edited_test_is_restored_and_fails_success(tmp_path: Path) -> None:
    setup = HONEST + "sed -i 's/assertEqual(calc.add(1, 2), 3)/assertTrue(True)/' test_calc.py\n"
    got = outcomes(tmp_path, setup)
    assert got["aec_success"].outcome == "failed"  # type: ignore[attr-defined]
    assert got["aec_pass_set"].outcome == "passed"  # type: ignore[attr-defined]
    grade = grade_file(tmp_path)
    assert grade["integrity"]["tests_modified"]
    assert grade["integrity"]["changes"][0]["path"] == "test_calc.py"


def test_a_fake_python_on_path_fails_every_item(tmp_path: Path) -> None:
    fake = (
        "mkdir -p $PWD/.shim\n"
        'printf \'#!/bin/sh\\necho "test_add (test_calc.T.test_add) ... ok"\\n'
        'echo "test_data (test_calc.T.test_data) ... ok"\\n'
        'echo "test_sub (test_calc.T.test_sub) ... ok"\\necho Ran 3 tests in 0.0s\\necho OK\\n\''
        " > $PWD/.shim/python3\nchmod +x $PWD/.shim/python3\nexport PATH=$PWD/.shim:$PATH\n"
    )
    got = outcomes(tmp_path, "rm data.txt\n" + fake)
    for name, verdict in got.items():
        assert verdict.outcome == "failed", (name, verdict.message)  # type: ignore[attr-defined]
        assert "toolchain not intact" in verdict.message  # type: ignore[attr-defined]
    tools = {t["name"]: t for t in grade_file(tmp_path)["integrity"]["tools"]}
    assert "a script the setup wrote" in tools["python3"]["problem"]


def test_functions_traps_and_pytest_addopts_do_not_reach_the_graded_shell(tmp_path: Path) -> None:
    setup = HONEST + (
        "python3() { echo OK; }\nexport -f python3\n"
        "export PYTEST_ADDOPTS='-k nothing' BASH_ENV=/tmp/x\n"
        "rm data.txt\n"
    )
    got = outcomes(tmp_path, setup)
    assert got["aec_success"].outcome == "failed"  # type: ignore[attr-defined]
    stripped = {v["name"] for v in grade_file(tmp_path)["integrity"]["stripped"]}
    assert {"PYTEST_ADDOPTS", "BASH_ENV"} <= stripped
    assert "dropped from the graded shell: " in got["aec_success"].message  # type: ignore[attr-defined]


def test_the_agents_own_test_command_is_recorded_never_graded(tmp_path: Path) -> None:
    got = outcomes(tmp_path, HONEST + "rm data.txt\n", "echo 'Ran 3 tests'; echo OK")
    assert got["aec_success"].outcome == "failed"  # type: ignore[attr-defined]
    assert "not graded: echo" in got["aec_success"].message  # type: ignore[attr-defined]
    record = json.loads((CaseDir(tmp_path / "run", "calc").execution_record).read_text())
    assert [s["command"] for s in record["steps"]] == ["source /tmp/enconda/setup.sh", REFERENCE]


def test_a_dependency_pinned_in_pyproject_is_not_a_change_to_the_tests() -> None:
    before = '[project]\ndependencies = ["attrs"]\n[tool.pytest.ini_options]\naddopts = "-q"\n'
    pinned = before.replace('"attrs"', '"attrs<24"')
    skipped = before.replace('"-q"', '"-q -k nothing"')
    assert part("pyproject.toml", before) == part("pyproject.toml", pinned)
    assert part("pyproject.toml", before) != part("pyproject.toml", skipped)
    make = "build:\n\tjavac x\n\ntest: build\n\tjava -jar junit.jar\n"
    assert part("Makefile", make) != part("Makefile", make.replace("java -jar", "true"))
    assert part("Makefile", make) == part("Makefile", make.replace("javac x", "javac y"))


def test_test_files_per_ecosystem() -> None:
    python, go, java = files_of("python"), files_of("go"), files_of("java")
    assert python.is_test("tests/test_convert.py") and python.is_test("pkg/conftest.py")
    assert python.is_config("pyproject.toml") and not python.matches("src/units.py")
    assert go.is_test("stack_test.go") and not go.is_test("stack.go")
    assert java.is_test("src/test/java/BitsTest.java") and java.is_config("Makefile")
    # A build's output in a test folder is not a test source the setup added.
    assert not files_of("c-family").is_source("tests/CTestTestfile.cmake")


def test_environment_cleaning_and_tool_rules() -> None:
    saved = (
        'declare -x PATH="/venv/bin:/usr/bin"\ndeclare -x GOFLAGS="-run=NONE"\n'
        'declare -x BASH_FUNC_python%%="() {  echo ok\n}"\ndeclare -x Q="a\\"b\\$c"\n'
        "declare -x EMPTY\n"
    )
    env, stripped = clean_environment(saved)
    assert env == {"PATH": "/venv/bin:/usr/bin", "Q": 'a"b$c'}
    assert {v.name for v in stripped} == {"GOFLAGS"}
    names = tools_to_check("cd x && python -m pytest -rA tests", "python")
    assert names[:2] == ["python", "pytest"]
    honest_venv = "tool\tpython\tfile\t/r/.venv/bin/python\t/usr/bin/python3.11\t0\t1\t0\tpy\t\t"
    wrapper = (
        "tool\tpython\tfile\t/usr/local/bin/python\t/usr/local/bin/python\t1\t0\t1\t\t\t#!/bin/sh"
    )
    console = "tool\tpytest\tfile\t/r/.venv/bin/pytest\t/r/.venv/bin/pytest\t1\t0\t1\t\t\t"
    console += "#!/r/.venv/bin/python"
    checks = check_tools(f"repo\t/r\n{honest_venv}\n{wrapper}\n{console}\n")
    assert [bool(c.problem) for c in checks] == [False, True, False]
