"""Bad case folders cost only themselves, run as users run pytest (issues 7 and 8). No Docker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from casefactory import golden_error, write_case

pytest_plugins = ["pytester"]
DIAGNOSIS = "not execution"


def _rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def test_non_utf8_case_costs_only_itself(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "good")
    bad = write_case(pytester.path, "bad")
    (bad / "case.toml").write_bytes((bad / "case.toml").read_bytes() + b'title = "\xff"\n')
    run = pytester.path / "run"
    result = pytester.runpytest("cases", "-k", "error_types", "--run-dir", str(run))
    result.assert_outcomes(passed=1, errors=1)
    assert "cases/bad/case.toml: invalid case" in result.stdout.str()
    assert "not UTF-8 (byte 0xff" in result.stdout.str()


def test_infinite_budget_is_a_case_error_not_an_internal_error(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "good")
    write_case(pytester.path, "forever", extra_toml="").joinpath("case.toml").write_text(
        (pytester.path / "cases" / "good" / "case.toml")
        .read_text()
        .replace('id = "good"', 'id = "forever"')
        .replace("setup_seconds = 60", "setup_seconds = inf")
    )
    run = pytester.path / "run"
    result = pytester.runpytest("cases", "-k", "error_types", "--run-dir", str(run))
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=1, errors=1)
    assert "budgets.setup_seconds: Input should be a finite number" in result.stdout.str()
    assert [row["case"] for row in _rows(run)] == ["good"]


def test_readme_outside_is_refused_at_collection(pytester: pytest.Pytester) -> None:
    case_dir = write_case(pytester.path, "leak")
    toml = (case_dir / "case.toml").read_text()
    (case_dir / "case.toml").write_text(toml.replace('readme = "README.md"', 'readme = "l.md"'))
    (case_dir / "l.md").symlink_to("/etc/hostname")
    result = pytester.runpytest("cases", "--collect-only", "-q")
    assert "readme: resolves to /etc/hostname, outside the case's folder" in result.stdout.str()
    result.assert_outcomes(errors=1)


def test_outside_repository_needs_allow_path(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    shared = tmp_path_factory.mktemp("shared-repos")
    (shared / "widget").mkdir()
    (shared / "widget" / "w.txt").write_text("w\n")
    case_dir = write_case(pytester.path, "far")
    toml = (case_dir / "case.toml").read_text()
    (case_dir / "case.toml").write_text(toml.replace('"repo"', json.dumps(str(shared / "widget"))))
    refused = pytester.runpytest("cases", "--collect-only", "-q")
    refused.assert_outcomes(errors=1)
    assert f"repository.path: resolves to {shared / 'widget'}, outside" in refused.stdout.str()
    allowed = pytester.runpytest("cases", "--collect-only", "-q", "--allow-path", str(shared))
    assert allowed.ret == pytest.ExitCode.OK
    assert "cases/far/case.toml::execution" in allowed.stdout.str()


@pytest.mark.parametrize(
    ("pyproject", "refused"),
    [("[project]\nname = 'x'\n", True), ("[tool.pytest.ini_options]\naddopts = ''\n", False)],
)
def test_project_root_counts_only_when_its_ini_configures_pytest(
    pytester: pytest.Pytester, pyproject: str, refused: bool
) -> None:
    # A case under sub/ naming a repository beside sub/, inside the rootdir; a pyproject.toml
    # without a pytest table marks the rootdir but opens nothing (pytest finds such files
    # in home folders).
    (pytester.path / "pyproject.toml").write_text(pyproject)
    (pytester.path / "widget").mkdir()
    (pytester.path / "widget" / "w.txt").write_text("w\n")
    case_dir = write_case(pytester.path / "sub", "near")
    toml = (case_dir / "case.toml").read_text()
    (case_dir / "case.toml").write_text(toml.replace('"repo"', '"../../../widget"'))
    # In a process of its own: with ``-W error`` an in-process run would turn pytest's
    # "already imported, cannot be rewritten" warning about this package (imported by the outer
    # run through the editable install's finder) into an INTERNALERROR, depending on how pytest
    # was started. What is checked here is the plugin's own warnings, not the outer run's.
    result = pytester.runpytest_subprocess("sub/cases", "--collect-only", "-q", "-W", "error")
    if refused:
        result.assert_outcomes(errors=1)
        assert "repository.path: resolves to" in result.stdout.str()
    else:
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()
        assert "sub/cases/near/case.toml::execution" in result.stdout.str()


def test_duplicate_case_ids_are_refused(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "twin", errors=[golden_error("E4")])
    write_case(pytester.path, "twin", errors=[golden_error("E1")], suite_dir="more")
    run = pytester.path / "run"
    result = pytester.runpytest("cases", "more", "-k", DIAGNOSIS, "--run-dir", str(run))
    result.assert_outcomes(passed=3, errors=1)
    assert "id: 'twin' is already the id of " in result.stdout.str()
    assert len(_rows(run)) == 3


def test_ids_differing_in_a_dropped_character_keep_their_own_results(
    pytester: pytest.Pytester,
) -> None:
    """``tabkit-e4-e6.`` and ``tabkit-e4-e6`` once shared an artifact folder."""
    write_case(pytester.path, "tab", errors=[golden_error("E4")])
    dotted = write_case(pytester.path, "tabdot", errors=[golden_error("E6")])
    toml = (dotted / "case.toml").read_text().replace('id = "tabdot"', 'id = "tab."')
    (dotted / "case.toml").write_text(toml)
    run = pytester.path / "run"
    result = pytester.runpytest("cases", "-k", DIAGNOSIS, "--run-dir", str(run))
    result.assert_outcomes(passed=6)
    folders = sorted(path.name for path in (run / "cases").iterdir())
    assert folders == ["tab", "tab."]
    outcome = json.loads((run / "cases" / "tab." / "agent" / "outcome.json").read_text())
    assert [error["error_type"] for error in outcome["diagnosis"]] == ["E6"]


def test_item_duration_covers_setup(pytester: pytest.Pytester) -> None:
    """The harness works in setup: a call-only duration was 0.0 for every item."""
    write_case(pytester.path, "slowjudge", errors=[golden_error("E4")])
    pytester.makeconftest(
        "import time\n"
        "import pytest\n"
        "@pytest.hookimpl(tryfirst=True)\n"
        "def pytest_runtest_setup(item):\n"
        "    time.sleep(0.3)\n"
    )
    run = pytester.path / "run"
    pytester.runpytest("cases", "-k", "error_types", "--run-dir", str(run))
    (row,) = _rows(run)
    assert row["duration"] >= 0.3


def test_harness_errors_get_artifact_links(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_html", reason="pytest-html is an optional extra ('.[html]')")
    write_case(pytester.path, "one", errors=[golden_error("E4")])
    predictions = pytester.path / "empty.jsonl"
    predictions.write_text("")
    run = pytester.path / "run"
    result = pytester.runpytest(
        "cases",
        "-k",
        "error_types",
        "--agent",
        "replay",
        "--predictions",
        str(predictions),
        "--run-dir",
        str(run),
        "--html",
        "report.html",
    )
    result.assert_outcomes(errors=1)
    html = (pytester.path / "report.html").read_text()
    assert (run / "cases" / "one").resolve().as_uri() in html


def test_replay_records_naming_no_case_are_warned_about(pytester: pytest.Pytester) -> None:
    """Every case has its prediction, so nothing fails: the stray lines are still reported."""
    write_case(pytester.path, "one", errors=[golden_error("E4")])
    good = {
        "case_id": "one",
        "agent": "llm",
        "diagnosis": [{"error_type": "E4", "error_description": "d", "fix_suggestion": "f"}],
    }
    predictions = pytester.path / "predictions.jsonl"
    predictions.write_bytes(json.dumps(good).encode() + b"\ngarbage\n\xff\xfe\n")
    run = pytester.path / "run"
    result = pytester.runpytest(
        "cases", "-k", "error_types", "--agent", "replay", "--predictions", str(predictions),
        "--run-dir", str(run),
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "input read past (warnings)" in out
    assert f"{predictions}:2: not valid JSON" in out and f"{predictions}:3: not UTF-8" in out
    warnings = json.loads((run / "input_warnings.json").read_text())["warnings"]
    assert [w.split(": ")[0] for w in warnings] == [f"{predictions}:2", f"{predictions}:3"]


def test_a_budget_the_golden_setup_cannot_meet_is_a_harness_error(
    pytester: pytest.Pytester,
) -> None:
    """The sidecar says the reference setup took 1,200 s; the imported case's budget is 900 s:
    the execution item is an error naming both, before any agent runs or image is built."""
    from pytest_enconda.cases.sidecar import SIDECAR_NAME, RepoVerification, Sidecar
    from pytest_enconda.verify.sidecar_writer import write_sidecar

    data = pytester.path / "DATA"
    folder = data / "instances" / "error_gen_o_a" / "o_a_error_readme_1"
    folder.mkdir(parents=True)
    (data / "repo_info.jsonl").write_text('{"repository": "o/a", "revision": "abc"}\n')
    (folder / "README.md").write_text("# x\n")
    error = {**golden_error("E4"), "correction_candidates": []}
    (folder / "README.json").write_text(json.dumps({"level": "level1", "errors": [error]}))
    record = RepoVerification(
        repository="o/a",
        revision="abc",
        status="verified",
        test_command="pytest",
        reference_setup="pip install .\n",
        reference_source="recipe",
        pass_set=["t::a"],
        timings={"recipe_setup_s": 1200.0},
    )
    write_sidecar(data / SIDECAR_NAME, Sidecar(repositories={"o/a": record}))
    run = pytester.path / "run"
    result = pytester.runpytest("--cases", str(data), "-k", "execution", "--run-dir", str(run))
    result.assert_outcomes(errors=1)
    assert (
        "budgets.setup_seconds (900 s) is shorter than the reference setup" in result.stdout.str()
    )
    assert not list(run.glob("cases/*/agent/outcome.json"))  # the agent never ran


def test_resume_of_a_run_holding_a_fifo_is_a_usage_error_not_a_hang(
    pytester: pytest.Pytester,
) -> None:
    import os

    write_case(pytester.path, "one")
    run = pytester.path / "run"
    first = pytester.runpytest("cases", "-k", "error_types", "--run-dir", str(run))
    first.assert_outcomes(passed=1)
    (run / "results.jsonl").unlink()
    os.mkfifo(run / "results.jsonl")
    result = pytester.runpytest_subprocess("cases", "--resume", str(run), timeout=60)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"{run / 'results.jsonl'} (a FIFO)" in result.stderr.str()


def test_hostile_case_folders_beside_a_good_one_cost_only_themselves(
    pytester: pytest.Pytester,
) -> None:
    """One run over a link loop, a FIFO case.toml and README, a 300-character id, a 20,000-part
    dotted key, a 5,000-digit integer and a UTF-16 case.toml: no hang, no INTERNALERROR, each
    bad case named, the good case graded."""
    import os

    write_case(pytester.path, "good")
    loop = write_case(pytester.path, "loop")
    (loop / "repo" / "back").symlink_to(loop, target_is_directory=True)
    fifo = write_case(pytester.path, "fifo")
    (fifo / "case.toml").unlink()
    os.mkfifo(fifo / "case.toml")
    readme = write_case(pytester.path, "readme")
    (readme / "README.md").unlink()
    os.mkfifo(readme / "README.md")
    long_id = "l" * 300
    long_case = write_case(pytester.path, "long")
    toml = (long_case / "case.toml").read_text()
    (long_case / "case.toml").write_text(toml.replace('id = "long"', f'id = "{long_id}"'))
    deep = write_case(pytester.path, "deep")
    (deep / "case.toml").write_text(
        toml.replace('id = "long"', 'id = "deep"') + "a." * 20_000 + "b = 1\n"
    )
    big = write_case(pytester.path, "big")
    (big / "case.toml").write_text(toml.replace('id = "long"', 'id = "big"\ntitle = ' + "9" * 5000))
    utf16 = write_case(pytester.path, "utf16")
    (utf16 / "case.toml").write_bytes(toml.replace('id = "long"', 'id = "utf16"').encode("utf-16"))
    run = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        "cases", "-k", "error_types", "--run-dir", str(run), "-p", "no:randomly", timeout=300
    )
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out
    for name in ("fifo/case.toml", "readme", "deep/case.toml", "big/case.toml", "utf16/case.toml"):
        assert f"cases/{name}" in out, name
    assert "not a regular file" in out and "UTF-16" in out
    graded = {row["case"]: row["outcome"] for row in _rows(run)}
    assert graded["good"] == "passed" and graded["loop"] == "passed"
    assert graded[long_id] == "passed"  # a long id gets a short, distinct artifact folder


def test_resume_warns_of_the_result_lines_it_dropped(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "one")
    run = pytester.path / "run"
    pytester.runpytest("cases", "-k", "error_types", "--run-dir", str(run)).assert_outcomes(
        passed=1
    )
    with (run / "results.jsonl").open("ab") as handle:
        handle.write(b"{torn\n\xff\xfe\n")
    result = pytester.runpytest("cases", "-k", "error_types", "--resume", str(run))
    result.assert_outcomes(passed=1)
    assert "input read past (warnings)" in result.stdout.str()
    warnings = json.loads((run / "input_warnings.json").read_text())["warnings"]
    assert [w.split(": ")[0] for w in warnings] == [f"{run / 'results.jsonl'}:{n}" for n in (2, 3)]
    assert all("--resume dropped the line" in w for w in warnings)
