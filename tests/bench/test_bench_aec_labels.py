"""``bench aec-labels``: the labelled AEC runs validate, and the figures are what the stored
artifacts imply (recomputed here by other means than the bench's own counting)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from scripted_llm import ScriptedServer, completion, prompt_text

from pytest_enconda.aec.cheat_rules import detect
from pytest_enconda.aec.judge import render_trajectory
from pytest_enconda.aec.testlogs import parse_test_log
from pytest_enconda.agents.base import Step
from pytest_enconda.bench import aec_labels
from pytest_enconda.bench.aec_labels import (
    DEFAULT_LABELS,
    LABELS_DIR,
    LabelsFormatError,
    load_labels,
    measure,
)
from pytest_enconda.grading.judges import create_judge

FIGURES = LABELS_DIR / "figures.json"


@pytest.fixture(scope="module")
def runs() -> list[aec_labels.LabelledRun]:
    return load_labels(DEFAULT_LABELS)


def test_labelled_set_is_large_varied_and_small(runs: list[aec_labels.LabelledRun]) -> None:
    assert len(runs) >= 60
    assert DEFAULT_LABELS.stat().st_size < 2 << 20
    assert {run.label for run in runs} == {"success", "failure"}
    assert len({run.agent for run in runs}) >= 5
    assert len({run.language for run in runs}) >= 5
    repositories = {
        run.case.split("-")[1] if run.case.startswith(("sw-", "zs-", "cmd-", "lab-")) else run.case
        for run in runs
    }
    assert len(repositories) >= 10
    # The criteria were committed before the labels (the file says so; git log shows it).
    assert (LABELS_DIR / "CRITERIA.md").is_file()


def _log_verdict(run: aec_labels.LabelledRun) -> str:
    """The log's verdict by the rules of README "AEC tasks", from the parser directly
    (``no_outputs``: no setup.sh, every item failed before any replay)."""
    if run.output_problem is not None:
        return "no_outputs"
    if run.test_command and (run.setup_exit_code is None or run.setup_exit_code != 0):
        return "failure"
    if run.test_log is None:
        return "inconclusive"
    return parse_test_log(run.test_log, run.test_exit_code).verdict


def _cheating(run: aec_labels.LabelledRun) -> bool:
    """The rules find a cheating sign in what the run left (the detector alone, no grading)."""
    trajectory = [Step(**s.model_dump()) for s in run.trajectory]
    own = run.test_command if run.command_source == "agent" else ""
    return bool(detect(trajectory, setup_script=run.setup_script, test_command=own))


def test_offline_figures_match_an_independent_count(runs: list[aec_labels.LabelledRun]) -> None:
    figures, rows = measure(runs, create_judge("offline"))
    # The offline judge never says success: a run is predicted success only when its log says
    # so and the rules find no cheating sign (their veto).
    verdicts = {run.id: _log_verdict(run) for run in runs}
    vetoed = {r.id for r in runs if verdicts[r.id] == "success" and _cheating(r)}
    assert len(vetoed) >= 4
    agree = sum(
        (verdicts[r.id] == "success" and r.id not in vetoed) == (r.label == "success") for r in runs
    )
    needed = [r for r in runs if verdicts[r.id] == "inconclusive"]
    assert figures["items"] == len(runs)
    assert figures["hybrid"]["agree"] == agree
    assert figures["judge_needed"]["items"] == len(needed)
    gone = [r for r in runs if verdicts[r.id] == "no_outputs"]
    assert figures["log_decided"]["items"] == len(runs) - len(needed) - len(gone)
    assert figures["no_outputs"]["items"] == len(gone)
    assert figures["no_outputs"]["agree"] == sum(r.label == "failure" for r in gone)
    assert figures["judge_needed"]["agree"] == sum(r.label == "failure" for r in needed)
    assert figures["decided_by"].get("judge", 0) == 0
    assert figures["decided_by"].get("veto", 0) == figures["vetoed"]["items"] == len(vetoed)
    # The stored artifacts give back what the harness recorded when it graded each run, but
    # for the veto: the runs were graded before the judge read every trajectory.
    assert figures["recomputed_equals_recorded"] == len(runs) - len(vetoed)
    assert {row["id"] for row in rows if not row["matches_recorded"]} == vetoed


def test_figures_on_file_are_a_recomputation(
    runs: list[aec_labels.LabelledRun], tmp_path: Path
) -> None:
    out = tmp_path / "figures.json"
    assert aec_labels.main(["--json", str(out)]) == 0
    fresh = json.loads(out.read_text())
    on_file = json.loads(FIGURES.read_text())
    assert on_file == fresh


def test_llm_judge_path_through_a_scripted_server(
    runs: list[aec_labels.LabelledRun],
    llm_server: ScriptedServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--judge llm:<model>``: the judge is asked on every run with a trajectory, is shown its
    trajectory and test output, and its answers decide the runs whose log is inconclusive
    (through the bench's command line and litellm's HTTP path)."""
    monkeypatch.setenv("ENCONDA_CACHE_DIR", str(tmp_path / "cache"))
    answers: list[tuple[str, bool]] = []

    def responder(request: dict) -> tuple[int, dict]:
        text = prompt_text(request)
        assert "You judge whether an AI agent succeeded" in text
        # Success where the replayed output shows per-test lines; the figures below are counted
        # from what was answered, not assumed.
        success = "[ OK ]" in text or "passed and 0 failed" in text
        answers.append((text, success))
        body = {"success": success, "confidence": 0.7, "reason": "scripted"}
        return 200, completion(json.dumps(body), 500, 20)

    llm_server.responder = responder
    out = tmp_path / "figures.json"
    argv = ["--judge", "llm:judge-model", "--judge-api-base", llm_server.api_base, "--json"]
    assert aec_labels.main([*argv, str(out)]) == 0
    figures = json.loads(out.read_text())
    needed = [r for r in runs if _log_verdict(r) == "inconclusive"]
    every = [r for r in runs if r.trajectory and r.output_problem is None]
    asked = [r for r in needed if r.trajectory]
    assert len(llm_server.requests) == len(answers) == len(every) > len(asked) > 0
    texts = [text for text, _ in answers]
    for run in every:
        # The request carries this run's trajectory as the judge renders it, and its test output.
        shown = render_trajectory([Step(**s.model_dump()) for s in run.trajectory])
        tail = (run.test_log or "(none)").strip()[-200:]
        assert any(shown in text and tail in text for text in texts), run.id
    said = {}
    for run in asked:
        shown = render_trajectory([Step(**s.model_dump()) for s in run.trajectory])
        said[run.id] = next(ok for text, ok in answers if shown in text)
    said_success = sum(said.values())
    assert figures["judge_needed"]["judge_verdicts"].get("success", 0) == said_success
    assert figures["decided_by"].get("judge", 0) == len(asked)
    # Runs without a trajectory (the oracle leaves none) stay inconclusive: nothing to judge.
    assert figures["decided_by"].get("neither", 0) == len(needed) - len(asked)
    # Agreement on the judge-needed share: the labels against what the server answered.
    agree = sum(said.get(r.id, False) == (r.label == "success") for r in needed)
    assert figures["judge_needed"]["agree"] == agree
    assert figures["judge"] == "llm:judge-model" or "judge-model" in figures["judge"]


def test_log_excerpt_grows_until_it_reads_as_the_whole_log() -> None:
    """A stored tail must read as the whole log does: a compiler error at the top of a long log
    with exit 0 (failure; its last 4,000 characters alone are inconclusive) is kept, and a log
    too long to keep so is flagged."""
    from pytest_enconda.bench.aec_labels import LOG_TAIL_CHARS, MAX_LOG_CHARS, log_excerpt

    noise = "".join(f"note {i}: building\n" for i in range(600))
    text = "src/x.c:3:1: error: expected ';' before '}' token\n" + noise
    assert parse_test_log(text, 0).verdict == "failure"
    assert parse_test_log(text[-LOG_TAIL_CHARS:], 0).verdict == "inconclusive"
    tail, exact = log_excerpt(text, 0)
    assert exact and tail == text
    tail, exact = log_excerpt(text + noise * 2, 0)
    assert not exact and len(tail) == MAX_LOG_CHARS
    short = "Ran 3 tests in 0.01s\n\nOK\n"
    assert log_excerpt(short, 0) == (short, True)


def test_a_bad_labels_file_names_line_and_field(tmp_path: Path) -> None:
    line = json.loads(DEFAULT_LABELS.read_text().splitlines()[0])
    bad = dict(line, label="maybe")
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps(line) + "\n" + json.dumps(bad) + "\n{oops\n" + json.dumps(line))
    with pytest.raises(LabelsFormatError) as caught:
        load_labels(path)
    message = str(caught.value)
    assert "line 2: label:" in message
    assert "line 3: not JSON" in message
    assert "line 4: id:" in message and "also line 1" in message


def test_labels_file_through_a_link_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "labels.jsonl"
    os.symlink(DEFAULT_LABELS, link)
    with pytest.raises(LabelsFormatError, match="cannot be read"):
        load_labels(link)
