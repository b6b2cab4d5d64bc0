"""A seventh ecosystem is one module plus one registration (issue 44): a conftest.py registers
"toy" (its file ``toy.mod``, its build and test commands, its log and per-test name parsers, its
profile), and an AEC case in it runs on the fake backend with the heuristic agent. The agent's
test command comes from the toy's profile (the repository was recognised by its file), the test
log is read by the toy's parser, and the PASS set by its name parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

TOY = r"""
import re

from pytest_enconda.ecosystems import ECOSYSTEMS, Ecosystem, Found, ProfileFields
from pytest_enconda.ecosystems.testfiles import TestFiles

SUMMARY = re.compile(r"^toy: (\d+) good, (\d+) bad$")
CASE = re.compile(r"^TOY (\S+) (good|bad)$")


def toy_log(lines):
    found = Found("toyrun")
    for line in lines:
        if match := SUMMARY.match(line):
            found.add("passed", int(match.group(1)))
            found.add("failed", int(match.group(2)))
            found.summary = True
            found.evidence.append(line)
    return found if found.summary else None


def toy_names(lines):
    for index, line in enumerate(lines):
        if match := CASE.match(line):
            yield index, match.group(1), "passed" if match.group(2) == "good" else "failed"


def toy_profile(checkout):
    return ProfileFields(
        package_manager="toypkg",
        config_file="toy.mod",
        install_command="./toyc build",
        test_command="./toyc test",
        build_tools=["toyc"],
    )


ECOSYSTEMS.register(
    Ecosystem(
        name="toy",
        title="Toy",
        languages=("toy",),
        manifests=("toy.mod",),
        programs=("toyc",),
        build_commands=(r"\./toyc\s+build",),
        test_commands=(r"\./toyc\s+test",),
        test_command="./toyc test --verbose",
        log_parsers=(toy_log,),
        name_parsers=(toy_names,),
        profile=toy_profile,
        test_files=TestFiles(paths=("*.toytest",), configs=("toy.mod",)),
        toolchain=("toyc", "sh"),
    )
)
"""

# The toy toolchain: `build` makes what the tests need, `test` prints a line per test and a
# summary no built-in runner reads.
TOYC = """\
#!/bin/sh
case "$1" in
build) mkdir -p out && echo 3 > out/value ;;
test)
  good=0; bad=0
  for name in alpha beta; do
    if [ -f out/value ]; then echo "TOY $name good"; good=$((good + 1));
    else echo "TOY $name bad"; bad=$((bad + 1)); fi
  done
  echo "toy: $good good, $bad bad"
  [ "$bad" -eq 0 ] ;;
esac
"""
CASE = """\
id = "toy-calc"
suite = "aec"

[repository]
kind = "folder"
path = "repo"

[aec]
language = "toy"

[aec.reference]
test_command = "./toyc test --verbose"
pass_set = ["alpha", "beta"]
"""


def _write_case(root: Path) -> Path:
    case = root / "cases" / "toy-calc"
    repo = case / "repo"
    repo.mkdir(parents=True)
    (repo / "toy.mod").write_text("toy 1\n")
    (repo / "alpha.toytest").write_text("alpha\n")
    (repo / "toyc").write_text(TOYC)
    (repo / "toyc").chmod(0o755)
    # The README builds and never tests: the test command can only come from the profile.
    (repo / "README.md").write_text("# calc\n\nBuild it:\n\n```bash\n./toyc build\n```\n")
    (case / "case.toml").write_text(CASE)
    return case


def test_a_conftest_ecosystem_is_detected_read_and_graded(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(TOY)
    _write_case(pytester.path)
    run = pytester.path / "run"
    # A subprocess: the registration must not leak into this test process's registry.
    result = pytester.runpytest_subprocess(
        "cases",
        "--backend",
        "fake",
        "--agent",
        "heuristic",
        "--run-dir",
        str(run),
        "-p",
        "no:cacheprovider",
    )
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    outcomes = {row["item"]: row["outcome"] for row in rows}
    assert outcomes == dict.fromkeys(("aec_tests_run", "aec_pass_set", "aec_success"), "passed")
    result.assert_outcomes(passed=3)

    folder = run / "cases" / "toy-calc"
    # Detection: toy.mod made the repository a toy one, whose profile names the test command.
    assert (folder / "agent" / "output" / "test_command").read_text().strip() == "./toyc test"
    setup = (folder / "agent" / "output" / "setup.sh").read_text()
    # The toy's build pattern made its build a setup step (the heuristic agent would read an
    # unknown `./toyc build` as a usage example), so the grader's fresh box is built.
    assert "./toyc build" in setup
    grade = json.loads((folder / "aec.json").read_text())
    assert grade["language"] == "toy"
    # The log parser: the toy's summary counted, the framework its own.
    assert grade["test_log"]["framework"] == "toyrun"
    assert (grade["test_log"]["passed"], grade["test_log"]["failed"]) == (2, 0)
    # The name parser: the PASS set read from the graded (the reference) command's per-test
    # lines; the agent's own command is recorded beside it.
    assert grade["pass_set"] == {
        "size": 2,
        "passed": 2,
        "share": 1.0,
        "missing": [],
        "log": "test",
    }
    assert grade["command_source"] == "reference" and grade["agent_test_command"] == "./toyc test"
    # The record's test files and toolchain reach the graded step: its test file and manifest
    # are saved to be restored, and its toolchain is resolved in the graded shell.
    integrity = grade["integrity"]
    assert integrity["test_files"] == 2 and integrity["checked"], integrity
    checked = {tool["name"]: tool for tool in integrity["tools"]}
    assert {"toyc", "sh"} <= set(checked) and checked["sh"]["path"], checked
