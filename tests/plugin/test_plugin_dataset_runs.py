"""Imported datasets run as a user runs them: ``--cases DATA`` or ``DATA/instances`` with every
agent, the original README variant, and the exit status when instances could not be read.

No Docker: only the diagnosis items run (``-k "not execution"``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

REVISION = "0123456789abcdef0123456789abcdef01234567"
ERROR = {
    "error_type": "E1",
    "error_description": "the package py-bad does not exist",
    "correction_candidates": ["pip install good"],
    "golden_answer": "pip install good",
}
ERRONEOUS = "# Tool\n\n```bash\npip install py-bad\n```\n"
ORIGINAL = "# Tool\n\n```bash\npip install good\n```\n"


def make_dataset(root: Path, *, original: bool = True) -> Path:
    """``o/r`` (with an original README) and ``p/q`` (without), one instance each."""
    lines = [{"repository": name, "revision": REVISION} for name in ("o/r", "p/q")]
    root.mkdir(parents=True)
    (root / "repo_info.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    for key in ("o_r", "p_q"):
        folder = root / "instances" / f"error_gen_{key}" / f"{key}_error_readme_1"
        folder.mkdir(parents=True)
        (folder / "README.md").write_text(ERRONEOUS)
        (folder / "README.json").write_text(json.dumps({"level": "level1", "errors": [ERROR]}))
    if original:
        (root / "instances" / "error_gen_o_r" / "README.md").write_text(ORIGINAL)
    return root


def write_predictions(folder: Path) -> Path:
    """EnConda-Bench's inference output for both instances: the golden diagnosis."""
    for key in ("o_r", "p_q"):
        instance = f"{key}_error_readme_1"
        result = folder / "results" / f"{key}_{instance}"
        result.mkdir(parents=True)
        errors = [{"error_type": "E1", "error_description": ERROR["error_description"]}]
        errors[0]["fix_answer"] = ERROR["golden_answer"]
        (result / f"{instance}_errors.json").write_text(json.dumps({"errors": errors}))
        (result / f"{instance}_setup.sh").write_text("pip install good\n")
    return folder


def results(run: Path) -> dict[tuple[str, str], dict]:
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    return {(row["case"], row["item"]): row for row in rows}


def outcomes(run: Path) -> dict[str, dict]:
    found = {}
    for path in run.glob("cases/*/agent/outcome.json"):
        data = json.loads(path.read_text())
        found[data["case_id"]] = data
    return found


# ----------------------------------------------------------------------------- 7.3


@pytest.mark.parametrize("agent", ["oracle", "readme", "replay"])
@pytest.mark.parametrize("spelling", ["DATA", "DATA/instances"])
def test_both_spellings_of_cases_work_with_every_agent(
    pytester: pytest.Pytester, agent: str, spelling: str
) -> None:
    make_dataset(pytester.path / "DATA")
    preds = write_predictions(pytester.path / "PREDS")
    extra = ["--predictions", str(preds)] if agent == "replay" else []
    run = pytester.path / "run"
    result = pytester.runpytest(
        "--cases", spelling, f"--agent={agent}", *extra, "-k", "error_types", "--run-dir", str(run)
    )
    assert "not found" not in result.stdout.str() + result.stderr.str()
    expected = {"passed": 2} if agent != "readme" else {"failed": 2}
    result.assert_outcomes(**expected, deselected=6)
    assert set(results(run)) == {
        ("o/r/error_readme_1", "error_types"),
        ("p/q/error_readme_1", "error_types"),
    }
    # The node ids name the folder given, as pytest does for any folder.
    assert f"{spelling}::o/r/error_readme_1::error_types" in {
        row["nodeid"] for row in results(run).values()
    }


def test_both_spellings_given_together_collect_each_case_once(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path / "DATA")
    result = pytester.runpytest("--cases", "DATA", "--cases", "DATA/instances", "--co", "-q")
    lines = [line for line in result.outlines if "::error_types" in line]
    assert len(lines) == 2, result.outlines


def test_one_repository_folder_or_one_instance_folder_collects(pytester: pytest.Pytester) -> None:
    """``--cases DATA/instances/error_gen_<owner>_<name>`` (one repository) and its instance
    folders collect that repository's cases only, as the importer loads them."""
    make_dataset(pytester.path / "DATA")
    repo = "DATA/instances/error_gen_o_r"
    instance = f"{repo}/o_r_error_readme_1"
    assert (pytester.path / instance / "README.json").is_file()
    for spelling in (repo, instance):
        result = pytester.runpytest("--cases", spelling, "--co", "-q")
        lines = [line for line in result.outlines if "::error_types" in line]
        assert lines == [f"{spelling}::o/r/error_readme_1::error_types"], result.outlines
    # Given with the dataset itself, each case is still collected once.
    result = pytester.runpytest("--cases", "DATA", "--cases", repo, "--co", "-q")
    lines = [line for line in result.outlines if "::error_types" in line]
    assert len(lines) == 2, result.outlines


# ----------------------------------------------------------------------------- 7.2


def test_original_variant_shows_the_original_and_names_a_repository_it_cannot_read(
    pytester: pytest.Pytester,
) -> None:
    """``o/r`` has its original README in the dataset; ``p/q`` has none, so its repository's own
    README at the pinned revision is the original, and without a mirror that repository cannot
    be had: its items are harness errors naming it, never the erroneous README silently."""
    make_dataset(pytester.path / "DATA")
    run = pytester.path / "run"
    result = pytester.runpytest(
        "--cases",
        "DATA",
        "--agent=readme",
        "--readme-variant=original",
        "-k",
        "not execution",
        "-rs",
        "--run-dir",
        str(run),
    )
    seen = outcomes(run)
    # The readme agent follows what it is shown: the original README's command.
    assert seen["o/r/error_readme_1"]["setup_script"].count("pip install good") == 1
    assert "py-bad" not in seen["o/r/error_readme_1"]["setup_script"]
    rows = results(run)
    row = rows[("p/q/error_readme_1", "error_types")]
    assert row["outcome"] == "error"
    assert f"repository unavailable: https://github.com/p/q@{REVISION}" in row["message"]
    assert rows[("o/r/error_readme_1", "error_types")]["outcome"] == "passed"
    # Descriptions and fixes: an original README has no injected error to describe.
    result.assert_outcomes(passed=1, skipped=4, errors=1, deselected=2)


def test_original_variant_reads_the_repository_readme_at_its_revision(
    pytester: pytest.Pytester,
) -> None:
    from gitutil import git

    work = pytester.path / "work"
    work.mkdir()
    git(work, "init", "--quiet", "--initial-branch=main")
    (work / "README.md").write_text("# q\n\n```bash\npip install from-the-repository\n```\n")
    git(work, "add", "-A")
    git(work, "commit", "--quiet", "-m", "one")
    revision = git(work, "rev-parse", "HEAD")
    (work / "README.md").write_text("# q\n\n```bash\npip install a-later-readme\n```\n")
    git(work, "commit", "--quiet", "-am", "two")
    mirror = pytester.path / "mirror"
    git(pytester.path, "clone", "--quiet", "--bare", str(work), str(mirror / "p+q" / "repo"))
    data = make_dataset(pytester.path / "DATA")
    lines = [
        {"repository": "o/r", "revision": REVISION},
        {"repository": "p/q", "revision": revision},
    ]
    (data / "repo_info.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    run = pytester.path / "run"
    result = pytester.runpytest(
        *("--cases", "DATA", "--agent=readme", "--readme-variant=original"),
        *("--repo-mirror", str(mirror), "-k", "error_types", "--run-dir", str(run)),
    )
    script = outcomes(run)["p/q/error_readme_1"]["setup_script"]
    assert "pip install from-the-repository" in script
    assert "a-later-readme" not in script and "py-bad" not in script
    # No injected error in either original: the empty diagnosis is right.
    result.assert_outcomes(passed=2, deselected=6)


def test_erroneous_variant_is_unchanged_by_an_original(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path / "DATA")
    run = pytester.path / "run"
    result = pytester.runpytest(
        "--cases", "DATA", "--agent=readme", "-k", "error_types", "--run-dir", str(run)
    )
    result.assert_outcomes(failed=2, deselected=6)
    assert all("py-bad" in outcome["setup_script"] for outcome in outcomes(run).values())


# ----------------------------------------------------------------------------- 8.3, 8.5: replay


def replay(pytester: pytest.Pytester, preds: Path, *args: str) -> pytest.RunResult:
    run = pytester.path / "run"
    return pytester.runpytest(
        "--cases", "DATA", "--agent=replay", "--predictions", str(preds), "--run-dir", str(run),
        "-k", "error_types", *args,
    )  # fmt: skip


def test_unreadable_prediction_is_an_error_showing_the_reason(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path / "DATA")
    preds = write_predictions(pytester.path / "PREDS")
    bad = preds / "results/o_r_o_r_error_readme_1/o_r_error_readme_1_errors.json"
    bad.write_bytes(bad.read_text().encode("utf-16"))
    result = replay(pytester, preds)
    result.assert_outcomes(passed=1, errors=1, deselected=6)
    result.stdout.fnmatch_lines(
        [f"*o/r/error_readme_1::error_types: unreadable recorded prediction*{bad}: UTF-16 text*"]
    )
    row = results(pytester.path / "run")[("o/r/error_readme_1", "error_types")]
    assert row["outcome"] == "error" and "UTF-16 text; expected UTF-8" in row["message"]


def test_bad_token_usage_costs_nothing_but_a_note(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path / "DATA")
    preds = write_predictions(pytester.path / "PREDS")
    record = {
        "repo_name": "o_r_o_r_error_readme_1",
        "readme_name": "o_r_error_readme_1",
        "token_usage": {"input_tokens": "abc"},
    }
    (preds / "processing_records.jsonl").write_text(json.dumps(record) + "\n")
    result = replay(pytester, preds)
    result.assert_outcomes(passed=2, deselected=6)
    seen = outcomes(pytester.path / "run")
    assert {outcome["status"] for outcome in seen.values()} == {"completed"}
    assert "expected a whole number of tokens" in seen["o/r/error_readme_1"]["problems"][0]


def test_jsonl_line_without_case_id_is_named_in_the_error(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path / "DATA")
    preds = pytester.path / "outcomes.jsonl"
    good = {"case_id": "p/q/error_readme_1", "agent": "x", "diagnosis": []}
    preds.write_text(json.dumps(good) + "\n" + json.dumps({"agent": "x"}) + "\n")
    result = replay(pytester, preds)
    result.assert_outcomes(failed=1, errors=1, deselected=6)
    result.stdout.fnmatch_lines(
        [
            "*o/r/error_readme_1::error_types: no recorded prediction for case o/r/error_readme_1*",
            f"*{preds}:2: not an AgentOutcome: case_id: expected a non-empty string*",
        ]
    )


# ----------------------------------------------------------------------------- 8.6: exit status


def lose_an_instance(root: Path) -> Path:
    bad = root / "instances/error_gen_p_q/p_q_error_readme_1/README.json"
    bad.write_bytes(b"\xff\xfe{")
    return bad


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_unreadable_instances_make_the_exit_status_non_zero(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    bad = lose_an_instance(make_dataset(pytester.path / "DATA"))
    run = pytester.path / "run"
    result = pytester.runpytest(
        "--cases", "DATA", "-k", "error_types", "--run-dir", str(run), *workers
    )
    # xdist's controller reports no deselected count.
    result.assert_outcomes(passed=1, deselected=0 if workers else 3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*enconda: instances that could not be read*",
            f"{bad}: UTF-16 text*",
            "1 import problem(s): input was lost, so the exit status is non-zero*",
        ]
    )


def test_allow_import_problems_keeps_exit_status_zero(pytester: pytest.Pytester) -> None:
    lose_an_instance(make_dataset(pytester.path / "DATA"))
    run = pytester.path / "run"
    args = ["--cases", "DATA", "-k", "error_types", "--run-dir", str(run)]
    result = pytester.runpytest(*args, "--allow-import-problems")
    result.assert_outcomes(passed=1, deselected=3)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["1 import problem(s): exit status left as is*"])


def test_a_complete_dataset_exits_zero(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path / "DATA")
    result = pytester.runpytest("--cases", "DATA", "-k", "error_types", "--run-dir", "run")
    assert result.ret == pytest.ExitCode.OK
    assert "import problem" not in result.stdout.str()
