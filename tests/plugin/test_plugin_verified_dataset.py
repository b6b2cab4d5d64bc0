"""Imported data with execution ground truth, end to end on the real Docker engine.

A made-up dataset of two repositories, served from a mirror in the fetch tool's layout
(``owner+name/repo``, bare): ``pytest-enconda verify`` builds the references and writes the
sidecar; then ``--cases`` with the oracle passes every verified instance's execution item, the
readme agent fails the instance whose injected error breaks setup, a test failing outside the PASS
set is reported but not counted, and the unverified repository's instances skip with the reason.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from gitutil import git

pytest_plugins = ["pytester"]
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.usefixtures("base_image")]

GOOD_README = "# good\n\n```bash\npip install -e .\n```\n"
BROKEN_README = "# good\n\n```bash\npip install -e ./goodpkg-src\n```\n"
ERROR = {
    "error_type": "E4",
    "error_description": "the source folder goodpkg-src does not exist",
    "correction_candidates": ["pip install -e ."],
    "golden_answer": "pip install -e .",
}
DOCS_ERROR = {
    "error_type": "E8",
    "error_description": "the README names the wrong project homepage",
    "correction_candidates": [],
    "golden_answer": "the homepage is example.org",
}
PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{name}"
version = "1.0"

[tool.setuptools]
packages = ["{name}"]
"""


def make_repo(root: Path, name: str, tests: str) -> str:
    """A package repository with one commit; returns the commit."""
    root.mkdir(parents=True)
    git(root, "init", "--quiet", "--initial-branch=main")
    (root / "pyproject.toml").write_text(PYPROJECT.format(name=name))
    (root / name).mkdir()
    (root / name / "__init__.py").write_text("VALUE = 42\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_it.py").write_text(tests)
    (root / "README.md").write_text(GOOD_README)
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "one")
    return git(root, "rev-parse", "HEAD")


def make_world(base: Path) -> tuple[Path, Path]:
    """(dataset, mirror): o/good verifies (one test needs the network and always fails),
    o/bad has no test that passes."""
    work = base / "work"
    good = make_repo(
        work / "good",
        "goodpkg",
        "import goodpkg\n\n"
        "def test_value():\n    assert goodpkg.VALUE == 42\n\n"
        "def test_needs_network():\n    raise ConnectionError('no network in the sandbox')\n",
    )
    bad = make_repo(work / "bad", "badpkg", "def test_broken():\n    assert False\n")
    mirror = base / "mirror"
    for name in ("good", "bad"):
        git(
            base, "clone", "--quiet", "--bare", str(work / name), str(mirror / f"o+{name}" / "repo")
        )
    data = base / "DATA"
    data.mkdir()
    lines = [{"repository": "o/good", "revision": good}, {"repository": "o/bad", "revision": bad}]
    (data / "repo_info.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    instances = {
        ("o_good", "error_readme_1"): (BROKEN_README, [ERROR]),
        ("o_good", "error_readme_2"): (GOOD_README, [DOCS_ERROR]),
        ("o_bad", "error_readme_1"): (BROKEN_README, [ERROR]),
    }
    for (key, short), (readme, errors) in instances.items():
        folder = data / "instances" / f"error_gen_{key}" / f"{key}_{short}"
        folder.mkdir(parents=True)
        (folder / "README.md").write_text(readme)
        (folder / "README.json").write_text(json.dumps({"level": "level1", "errors": errors}))
    return data, mirror


def outcomes(run: Path) -> dict[str, tuple[str, str]]:
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    return {row["case"]: (row["outcome"], row["message"]) for row in rows}


def test_verify_then_oracle_readme_and_skips(pytester: pytest.Pytester) -> None:
    data, mirror = make_world(pytester.path)
    sidecar_path = pytester.path / "side.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_enconda.cli",
            "verify",
            str(data),
            "--repo-mirror",
            str(mirror),
            "--out",
            str(sidecar_path),
            "--logs",
            str(pytester.path / "verify-logs"),
            "-n",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verify: 1 of 2 repositories verified" in done.stdout
    sidecar = json.loads(sidecar_path.read_text())["repositories"]
    good, bad = sidecar["o/good"], sidecar["o/bad"]
    assert good["status"] == "verified"
    # The test that needs the network fails in both runs: not in the PASS set.
    assert good["pass_set"] == ["tests.test_it::test_value"]
    assert good["reference_source"] == "agent:readme"
    assert good["reference_setup"] == "#!/bin/bash\npip install -e .\n"
    assert good["test_command_source"] == "default"
    assert good["checkout_proof"]["verdict"] == "checkout"
    assert good["pass_share"] == 0.5
    assert [run["passed"] for run in good["runs"]] == [1, 1]
    assert [run["failed"] for run in good["runs"]] == [1, 1]
    assert bad["status"] == "unverified"
    # The recipe, then the recipe with the packages of the revision's day (the commit's time,
    # read from the snapshot): a broken test fails on any day's packages.
    assert [line.split(": ", 1)[0] for line in bad["attempts"]] == [
        "agent:readme",
        "recipe",
        "recipe:as-of",
    ]
    assert all("no test passed in both runs" in line for line in bad["attempts"])
    assert bad["reason"].startswith("recipe:as-of: no test passed in both runs")
    assert bad["revision_date"] and bad["packages_before"] == ""  # no reference was made

    common = ["--cases", str(data), "--verification", str(sidecar_path), "-k", "execution"]
    common += ["--repo-mirror", str(mirror)]
    run = pytester.path / "run-oracle"
    result = pytester.runpytest(*common, "--run-dir", str(run))
    result.assert_outcomes(passed=2, skipped=1)
    found = outcomes(run)
    assert found["o/good/error_readme_1"][0] == "passed"
    verdicts = [json.loads(path.read_text()) for path in run.glob("cases/*/grading/execution.json")]
    passed = [verdict for verdict in verdicts if verdict["outcome"] == "passed"]
    assert len(passed) == 2
    for verdict in passed:
        assert verdict["message"] == "all 1 PASS-set tests passed; outside the PASS set: 1 failed"
        assert verdict["numbers"]["pass_set"] == {"size": 1, "passed": 1}
    assert found["o/bad/error_readme_1"][0] == "skipped"
    assert (
        "no verified reference: o/bad: recipe:as-of: no test passed"
        in found["o/bad/error_readme_1"][1]
    )
    summary = json.loads((run / "summary.json").read_text())
    assert summary["execution_coverage"] == {
        "instances": 3,
        "covered": 2,
        "no_verified_reference": 1,
    }
    assert "Pass@1 covers 2 of 3 instances" in result.stdout.str()

    run = pytester.path / "run-readme"
    result = pytester.runpytest(*common, "--agent", "readme", "--run-dir", str(run))
    result.assert_outcomes(passed=1, failed=1, skipped=1)
    found = outcomes(run)
    assert found["o/good/error_readme_1"][0] == "failed"
    assert "setup step exited with 1" in found["o/good/error_readme_1"][1]
    # A documentation-only error does not break setup: the README's own commands still pass.
    assert found["o/good/error_readme_2"][0] == "passed"
    assert found["o/bad/error_readme_1"][0] == "skipped"


SRC_PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "six"
version = "1.16.0"

[project.optional-dependencies]
test = ["iniconfig"]
"""


def test_verify_refuses_a_reference_that_tests_the_released_package(
    pytester: pytest.Pytester,
) -> None:
    """The original README installs the release from PyPI; the checkout (src layout) is never
    imported, though its test passes. That reference is refused, and the recipe, which installs
    the checkout, becomes the reference. A test-only dependency declared as an extra is installed
    before the tests (the test imports it)."""
    work = pytester.path / "work" / "six"
    (work / "src").mkdir(parents=True)
    git(work, "init", "--quiet", "--initial-branch=main")
    (work / "pyproject.toml").write_text(SRC_PYPROJECT)
    (work / "src" / "six.py").write_text("PY3 = True\nFROM_CHECKOUT = True\n")
    (work / "tests").mkdir()
    (work / "tests" / "test_six.py").write_text(
        "import iniconfig\nimport six\n\ndef test_py3():\n    assert six.PY3\n"
    )
    (work / "README.md").write_text("# six\n\n```bash\npip install six==1.16.0\n```\n")
    git(work, "add", "-A")
    git(work, "commit", "--quiet", "-m", "one")
    revision = git(work, "rev-parse", "HEAD")
    mirror = pytester.path / "mirror"
    git(pytester.path, "clone", "--quiet", "--bare", str(work), str(mirror / "o+six" / "repo"))
    data = pytester.path / "DATA"
    folder = data / "instances" / "error_gen_o_six" / "o_six_error_readme_1"
    folder.mkdir(parents=True)
    (data / "repo_info.jsonl").write_text(
        json.dumps({"repository": "o/six", "revision": revision}) + "\n"
    )
    (folder / "README.md").write_text(BROKEN_README)
    (folder / "README.json").write_text(json.dumps({"level": "level1", "errors": [ERROR]}))
    sidecar_path = pytester.path / "side.json"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pytest_enconda.cli", "verify", str(data)),
            *("--repo-mirror", str(mirror), "--out", str(sidecar_path)),
            *("--logs", str(pytester.path / "verify-logs")),
        ],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads(sidecar_path.read_text())["repositories"]["o/six"]
    assert record["attempts"][0].startswith("agent:readme: not a reference of the checkout: six")
    assert "-packages/six.py (installed distribution six)" in record["attempts"][0]
    assert record["status"] == "verified", record["attempts"]
    assert record["reference_source"] == "recipe"
    assert record["checkout_proof"]["verdict"] == "checkout"
    assert record["test_requirements"] == ["iniconfig"]
    assert record["pass_share"] == 1.0
    assert record["pass_set"] == ["tests.test_six::test_py3"]
    # Progress per step, not one line per repository at the end.
    for step in ("o/six: fetching", "o/six: building its image", "o/six: agent:readme: setup"):
        assert step in done.stdout
