"""The ``replay`` agent on both layouts: our AgentOutcome JSONL and EnConda-Bench's results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_enconda.agents import registry
from pytest_enconda.agents.base import AgentOutcome, AgentTask, PredictedError
from pytest_enconda.agents.replay import MissingPrediction, ReplayAgent, UnreadablePrediction
from pytest_enconda.cases.enconda_import import load_dataset
from pytest_enconda.cases.models import Case
from pytest_enconda.errors import EncondaError, HarnessError

KEY = "my-org_my_repo"
INSTANCES = [
    f"{KEY}_error_readme_1",
    f"{KEY}_error_readme_1_only_E1",
    f"{KEY}_error_readme_10",
    f"error_gen_{KEY}_error_readme_merge_k2",
]


@pytest.fixture
def cases(tmp_path: Path) -> dict[str, Case]:
    """Real imported cases (folder name → case) with the sibling names that confuse substrings."""
    root = tmp_path / "dataset"
    root.mkdir()
    (root / "repo_info.jsonl").write_text('{"repository": "my-org/my_repo", "revision": "abc"}\n')
    error = {
        "error_type": "E1",
        "error_description": "d",
        "correction_candidates": [],
        "golden_answer": "g",
    }
    for name in INSTANCES:
        folder = root / "instances" / f"error_gen_{KEY}" / name
        folder.mkdir(parents=True)
        (folder / "README.md").write_text("```bash\npip install x\n```\n")
        (folder / "README.json").write_text(json.dumps({"level": "level1", "errors": [error]}))
    loaded = load_dataset(root)
    assert loaded.problems == []
    return {case.case_dir.name: case for case in loaded.cases}


def task(case: Case) -> AgentTask:
    return AgentTask(case=case, readme_text=case.readme_text, readme_name="README.md")


def write_result(
    results: Path,
    instance: str,
    errors: Any,
    *,
    folder: str | None = None,
    setup: str | None = "#!/bin/bash\npip install x\n",
    **extra: Any,
) -> Path:
    """Write one prediction as EnConda-Bench's OutputManager does."""
    repo_name = folder or f"{KEY}_{instance}"
    directory = results / repo_name
    directory.mkdir(parents=True, exist_ok=True)
    data = {
        "repo_name": repo_name,
        "readme_name": instance,
        "timestamp": "2025-01-01T00:00:00",
        "errors": errors,
        **extra,
    }
    path = directory / f"{instance}_errors.json"
    path.write_text(json.dumps(data))
    if setup is not None:
        (directory / f"{instance}_setup.sh").write_text(setup)
    return path


def error(error_type: str, text: str) -> dict[str, str]:
    return {"error_type": error_type, "error_description": text, "fix_answer": f"fix {text}"}


# ----------------------------------------------------------------------------- EnConda layout


def test_enconda_results_match_each_case_exactly(tmp_path: Path, cases: dict[str, Case]) -> None:
    out = tmp_path / "out"
    for index, instance in enumerate(INSTANCES):
        write_result(out / "results", instance, [error("E1", instance)], setup=f"echo {index}\n")
    # Both the output folder and its results/ folder are accepted.
    for path in (out, out / "results"):
        agent = registry.create("replay", predictions=path, model="ignored")
        for index, instance in enumerate(INSTANCES):
            outcome = agent.run(task(cases[instance]))
            assert outcome.case_id == cases[instance].id
            assert outcome.diagnosis == [
                PredictedError(
                    error_type="E1", error_description=instance, fix_suggestion=f"fix {instance}"
                )
            ]
            assert outcome.setup_script == f"echo {index}\n"
            assert outcome.status == "completed"
            assert outcome.problems == []


def test_enconda_missing_case_raises_naming_the_case(
    tmp_path: Path, cases: dict[str, Case]
) -> None:
    results = tmp_path / "results"
    write_result(results, INSTANCES[0], [error("E1", "x")])
    # readme_10 and readme_1_only_E1 must not pick up readme_1's prediction (or vice versa).
    agent = ReplayAgent(results)
    assert agent.run(task(cases[INSTANCES[0]])).diagnosis[0].error_description == "x"
    for instance in INSTANCES[1:]:
        case = cases[instance]
        with pytest.raises(MissingPrediction) as info:
            agent.run(task(case))
        assert str(info.value) == f"no recorded prediction for case {case.id} in {results}"
        assert isinstance(info.value, EncondaError)


def test_enconda_malformed_fields_are_graded_as_far_as_possible(
    tmp_path: Path, cases: dict[str, Case]
) -> None:
    results = tmp_path / "results"
    errors = [
        {"error_type": "E3", "error_description": "unknown type", "fix_answer": "f"},
        {"error_type": "E2", "fix_answer": "no description"},
        {"error_type": "E4", "error_description": ["a", "list"], "golden_answer": "g"},
        "not an object",
    ]
    write_result(results, INSTANCES[0], errors, setup=None, readme_name="something_else")
    outcome = ReplayAgent(results).run(task(cases[INSTANCES[0]]))
    assert [e.error_type for e in outcome.diagnosis] == ["E3", "E2", "E4"]
    assert outcome.diagnosis[1].error_description == ""
    assert outcome.diagnosis[1].fix_suggestion == "no description"
    assert outcome.diagnosis[2].error_description == '["a", "list"]'
    assert outcome.diagnosis[2].fix_suggestion == "g"
    assert outcome.setup_script == ""
    assert outcome.status == "completed"
    text = "\n".join(outcome.problems)
    assert "errors[0].error_type: 'E3' is not one of E1, E2, E4, E6, E7, E8" in text
    assert "errors[1].error_description: missing" in text
    assert "errors[2].error_description: expected text, got list" in text
    assert "errors[2]: fix read from 'golden_answer' (expected 'fix_answer')" in text
    assert "errors[3]: expected an object, got str; skipped" in text
    assert "no setup script recorded" in text
    assert "readme_name 'something_else' differs from the file name" in text


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"{truncated", "not valid JSON: Expecting property name"),
        (b"\x00\x01\x02binary\xff\xfe", "not UTF-8 (byte 0xff at offset 9)"),
        (json.dumps({"errors": []}).encode("utf-16"), "UTF-16 text; expected UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "not valid JSON: nested too deeply"),
        (b'{"errors": ' + b'{"a": ' * 100_000, "not valid JSON: nested too deeply"),
        (b'["errors"]', "expected a JSON object, got list"),
    ],
    ids=["invalid", "binary", "utf-16", "deep", "deep-object", "list"],
)
def test_enconda_unreadable_file_is_a_harness_error_of_that_case_alone(
    tmp_path: Path, cases: dict[str, Case], content: bytes, reason: str
) -> None:
    results = tmp_path / "results"
    path = write_result(results, INSTANCES[2], [])
    path.write_bytes(content)
    write_result(results, INSTANCES[0], [error("E1", "fine")])
    agent = ReplayAgent(results)
    with pytest.raises(UnreadablePrediction) as info:
        agent.run(task(cases[INSTANCES[2]]))
    assert isinstance(info.value, HarnessError)
    assert str(info.value).startswith(
        f"unreadable recorded prediction for case {cases[INSTANCES[2]].id}: "
        f"cannot read {path}: {reason}"
    )
    # The other case of the same results folder is replayed as recorded.
    assert agent.run(task(cases[INSTANCES[0]])).diagnosis[0].error_description == "fine"


def test_enconda_bom_is_accepted(tmp_path: Path, cases: dict[str, Case]) -> None:
    results = tmp_path / "results"
    path = write_result(results, INSTANCES[0], [error("E1", "x")])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    outcome = ReplayAgent(results).run(task(cases[INSTANCES[0]]))
    assert (outcome.diagnosis[0].error_description, outcome.problems) == ("x", [])


def test_enconda_bad_token_usage_costs_only_its_own_case(
    tmp_path: Path, cases: dict[str, Case]
) -> None:
    out = tmp_path / "out"
    for instance in INSTANCES[:3]:
        write_result(out / "results", instance, [error("E1", instance)])
    usages = [{"input_tokens": "abc"}, {"input_tokens": 7, "output_tokens": 2.0}, ["x"]]
    records = [
        {"repo_name": f"{KEY}_{instance}", "readme_name": instance, "token_usage": usage}
        for instance, usage in zip(INSTANCES[:3], usages, strict=True)
    ]
    lines = [json.dumps(r) for r in records] + ["{broken", "[" * 100_000]
    (out / "processing_records.jsonl").write_text("\n".join(lines) + "\n")
    agent = ReplayAgent(out)
    bad = agent.run(task(cases[INSTANCES[0]]))
    assert bad.status == "completed" and bad.diagnosis[0].error_description == INSTANCES[0]
    assert bad.usage.prompt_tokens == 0
    assert any("token_usage.input_tokens: expected a whole number" in p for p in bad.problems)
    good = agent.run(task(cases[INSTANCES[1]]))
    assert (good.usage.prompt_tokens, good.usage.completion_tokens, good.problems) == (7, 2, [])
    odd = agent.run(task(cases[INSTANCES[2]]))
    assert any("token_usage: expected an object, got list" in p for p in odd.problems)
    records_file = out / "processing_records.jsonl"
    assert agent.load_problems == [
        f"{records_file}:4: not valid JSON: Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1)",
        f"{records_file}:5: not valid JSON: nested too deeply",
    ]


def test_enconda_shell_script_in_json_and_records(tmp_path: Path, cases: dict[str, Case]) -> None:
    out = tmp_path / "out"
    write_result(out / "results", INSTANCES[0], [], setup=None, shell_script="make\n")
    records = [
        {
            "repo_name": f"{KEY}_{INSTANCES[0]}",
            "readme_name": INSTANCES[0],
            "success": True,
            "token_usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
        },
        {
            "repo_name": f"error_gen_{KEY}",
            "readme_name": INSTANCES[1],
            "success": False,
            "error_message": "Analysis failed",
        },
    ]
    (out / "processing_records.jsonl").write_text("\n".join(json.dumps(r) for r in records))
    agent = ReplayAgent(out)
    first = agent.run(task(cases[INSTANCES[0]]))
    assert first.setup_script == "make\n"
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (10, 5)
    assert first.usage.total_tokens == 15
    failed = agent.run(task(cases[INSTANCES[1]]))
    assert failed.status == "no_prediction"
    assert failed.message == "inference failed: Analysis failed"
    with pytest.raises(MissingPrediction):
        agent.run(task(cases[INSTANCES[2]]))


def test_enconda_folder_not_named_after_the_repository(
    tmp_path: Path, cases: dict[str, Case]
) -> None:
    results = tmp_path / "results"
    write_result(results, INSTANCES[2], [error("E6", "x")], folder="renamed")
    outcome = ReplayAgent(results).run(task(cases[INSTANCES[2]]))
    assert outcome.diagnosis[0].error_type == "E6"
    assert "matched by instance name alone" in outcome.problems[0]


# ----------------------------------------------------------------------------- our JSONL


def outcome_line(case_id: str, **fields: Any) -> str:
    data = AgentOutcome(case_id=case_id, agent="llm", model="m", **fields).model_dump(mode="json")
    return json.dumps(data)


def test_jsonl_outcomes_by_case_id(tmp_path: Path, cases: dict[str, Case]) -> None:
    case_a, case_b = cases[INSTANCES[0]], cases[INSTANCES[2]]
    diagnosis = [PredictedError(error_type="E1", error_description="d", fix_suggestion="f")]
    path = tmp_path / "outcomes.jsonl"
    path.write_text(
        "\n".join(
            [
                outcome_line(case_a.id, setup_script="old"),
                outcome_line(case_b.id, diagnosis=diagnosis, setup_script="b", wall_time=3.0),
                outcome_line(case_a.id, setup_script="new"),
                "",
            ]
        )
    )
    agent = ReplayAgent(path)
    outcome_b = agent.run(task(case_b))
    assert outcome_b.diagnosis == diagnosis
    assert (outcome_b.setup_script, outcome_b.wall_time, outcome_b.model) == ("b", 3.0, "m")
    assert outcome_b.problems == []
    outcome_a = agent.run(task(case_a))
    assert outcome_a.setup_script == "new"
    assert "replaces an earlier record" in outcome_a.problems[0]
    assert agent.case_ids() == {case_a.id, case_b.id}
    # Returned outcomes are copies: changing one does not change the next replay.
    outcome_a.problems.append("changed")
    assert "changed" not in agent.run(task(case_a)).problems
    with pytest.raises(MissingPrediction, match=cases[INSTANCES[1]].id):
        agent.run(task(cases[INSTANCES[1]]))


def test_jsonl_malformed_records(tmp_path: Path, cases: dict[str, Case]) -> None:
    case = cases[INSTANCES[0]]
    record = {
        "case_id": case.id,
        "agent": "llm",
        "status": "exploded",
        "wall_time": "fast",
        "setup_script": "make\n",
        "diagnosis": [
            {"error_type": "E9", "error_description": "d", "fix_suggestion": "f"},
            {"error_description": "no type"},
            42,
        ],
    }
    path = tmp_path / "outcomes.jsonl"
    path.write_text(
        "\n".join([json.dumps(record), "{broken", json.dumps({"no": "case id"})]) + "\n"
    )
    agent = ReplayAgent(path)
    outcome = agent.run(task(case))
    assert outcome.setup_script == "make\n"
    assert outcome.status == "completed"
    assert outcome.wall_time == 0.0
    assert [e.error_type for e in outcome.diagnosis] == ["E9", ""]
    text = "\n".join(outcome.problems)
    assert "status" in text and "wall_time" in text
    assert "diagnosis[0].error_type: 'E9' is not one of" in text
    assert "diagnosis[1].error_type: missing" in text
    assert "diagnosis[1].error_type: '' is not" not in text
    assert "diagnosis[2]: expected an object, got int; skipped" in text
    assert [p.split(": ", 1)[1][:19] for p in agent.load_problems] == [
        "not valid JSON: Exp",
        "not an AgentOutcome",
    ]
    assert agent.load_problems[0].startswith(f"{path}:2: ")


def test_jsonl_valid_record_with_unknown_type_is_kept_and_reported(
    tmp_path: Path, cases: dict[str, Case]
) -> None:
    case = cases[INSTANCES[0]]
    diagnosis = [PredictedError(error_type="E5", error_description="d")]
    path = tmp_path / "o.jsonl"
    path.write_text(outcome_line(case.id, diagnosis=diagnosis) + "\n")
    outcome = ReplayAgent(path).run(task(case))
    assert outcome.diagnosis[0].error_type == "E5"
    assert "'E5' is not one of" in outcome.problems[0]


def test_run_directory_outcomes(tmp_path: Path, cases: dict[str, Case]) -> None:
    case = cases[INSTANCES[3]]
    folder = tmp_path / "run" / "cases" / "x" / "agent"
    folder.mkdir(parents=True)
    (folder / "outcome.json").write_text(outcome_line(case.id, setup_script="s"))
    assert ReplayAgent(tmp_path / "run").run(task(case)).setup_script == "s"


def test_nothing_to_replay(tmp_path: Path, cases: dict[str, Case]) -> None:
    agent = ReplayAgent(tmp_path / "missing.jsonl")
    with pytest.raises(MissingPrediction):
        agent.run(task(cases[INSTANCES[0]]))
    assert agent.load_problems == [f"{tmp_path / 'missing.jsonl'}: no such file or directory"]
    empty = tmp_path / "empty"
    empty.mkdir()
    agent = ReplayAgent(empty)
    with pytest.raises(MissingPrediction):
        agent.run(task(cases[INSTANCES[0]]))
    assert "no predictions found" in agent.load_problems[0]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{broken", "not valid JSON: Expecting property name"),
        ('{"agent": "llm"}', "not an AgentOutcome: case_id: expected a non-empty string, got no"),
        (
            '{"case_id": 7}',
            "not an AgentOutcome: case_id: expected a non-empty string, got case_id 7",
        ),
        ("[1]", "not an AgentOutcome: expected a JSON object, got list"),
        ("[" * 100_000, "not valid JSON: nested too deeply"),
    ],
    ids=["invalid", "no-case-id", "int-case-id", "list", "deep"],
)
def test_jsonl_unreadable_lines_are_named_where_a_prediction_is_missing(
    tmp_path: Path, cases: dict[str, Case], line: str, reason: str
) -> None:
    good, missing = cases[INSTANCES[0]], cases[INSTANCES[1]]
    path = tmp_path / "o.jsonl"
    path.write_text(outcome_line(good.id, setup_script="s") + "\n" + line + "\n")
    agent = ReplayAgent(path)
    assert agent.run(task(good)).setup_script == "s"
    with pytest.raises(MissingPrediction) as info:
        agent.run(task(missing))
    assert isinstance(info.value, HarnessError)
    message = str(info.value)
    assert message.startswith(f"no recorded prediction for case {missing.id} in {path}; 1 record")
    assert f"\n  {path}:2: {reason}" in message


def test_jsonl_bom_and_a_stray_byte_cost_only_their_line(
    tmp_path: Path, cases: dict[str, Case]
) -> None:
    first, second = cases[INSTANCES[0]], cases[INSTANCES[2]]
    path = tmp_path / "o.jsonl"
    bad = outcome_line(second.id, setup_script="caf").encode().replace(b"caf", b"caf\xe9")
    path.write_bytes(
        b"\xef\xbb\xbf" + outcome_line(first.id, setup_script="a").encode() + b"\n" + bad + b"\n"
    )
    agent = ReplayAgent(path)
    assert agent.run(task(first)).setup_script == "a"
    # The line still names its case: that case's prediction is unreadable (not missing).
    with pytest.raises(UnreadablePrediction, match=r"o\.jsonl:2: not UTF-8 \(byte 0xe9 at col"):
        agent.run(task(second))


def test_jsonl_in_utf16_is_named(tmp_path: Path, cases: dict[str, Case]) -> None:
    path = tmp_path / "o.jsonl"
    path.write_bytes(outcome_line(cases[INSTANCES[0]].id).encode("utf-16"))
    with pytest.raises(MissingPrediction, match="cannot read: UTF-16 text; expected UTF-8"):
        ReplayAgent(path).run(task(cases[INSTANCES[0]]))


def test_run_directory_outcome_unreadable_or_with_bom(
    tmp_path: Path, cases: dict[str, Case]
) -> None:
    run = tmp_path / "run"
    for name, content in [
        ("a", b"\xef\xbb\xbf" + outcome_line(cases[INSTANCES[0]].id, setup_script="s").encode()),
        ("b", b'{"a": ' * 100_000),
    ]:
        folder = run / "cases" / name / "agent"
        folder.mkdir(parents=True)
        (folder / "outcome.json").write_bytes(content)
    agent = ReplayAgent(run)
    assert agent.run(task(cases[INSTANCES[0]])).setup_script == "s"
    with pytest.raises(MissingPrediction, match="nested too deeply"):
        agent.run(task(cases[INSTANCES[1]]))


@pytest.mark.parametrize(
    "torn",
    ['{"case_id": "no-such-case", "setup_scr', b'{"case_id": "no-such-case", "x": "\xff"}'],
    ids=["cut off", "not UTF-8"],
)
def test_a_torn_line_naming_a_case_not_graded_is_a_warning_with_its_line(
    tmp_path: Path, cases: dict[str, Case], torn: str | bytes
) -> None:
    """Filed under a case that does not exist, it was said nowhere (issue 43)."""
    case = cases[INSTANCES[0]]
    path = tmp_path / "outcomes.jsonl"
    raw = torn if isinstance(torn, bytes) else torn.encode()
    path.write_bytes(outcome_line(case.id).encode() + b"\n" + raw + b"\n")
    agent = ReplayAgent(path)
    assert agent.run(task(case)).case_id == case.id
    (warning,) = agent.input_warnings()
    assert warning.startswith(f"{path}:2: ")
    assert "'no-such-case', which this run did not grade" in warning
    # The run's own list of graded cases decides when it is given (xdist: the controller's
    # agent replays nothing itself).
    assert agent.input_warnings({case.id, "no-such-case"}) == []
