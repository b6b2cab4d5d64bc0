"""The construct pipeline with a scripted validator (no Docker): layout, sidecar, resume, refusal,
the judge filter and the llm injector through a real HTTP server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scripted_llm import VERDICT_NO, ScriptedServer, completion

from pytest_enconda.agents.readme_commands import extract_commands
from pytest_enconda.cases.enconda_import import load_dataset
from pytest_enconda.cases.sidecar import RepoVerification
from pytest_enconda.construct.injection_facts import read_facts
from pytest_enconda.construct.llm import parse_injection
from pytest_enconda.construct.run import (
    ConstructError,
    ConstructOptions,
    construct,
    read_report,
    summary_lines,
)
from pytest_enconda.construct.validate import RepoWorkspace, classify

REPOS = Path(__file__).resolve().parents[2] / "benchmark_cases" / "repos"


class FakeValidator:
    """Verifies every original README except those named in ``refuse``; an erroneous README is
    'effective' unless it holds one of ``harmless`` (then its setup 'passes')."""

    refuse: tuple[str, ...] = ()
    harmless: tuple[str, ...] = ("PIP_NO_INDEX",)
    calls: list[str] = []

    def __init__(self, *, logs: Path, repo_mirror: Path | None, **_: Any) -> None:
        self.mirror = repo_mirror
        self.cache = logs / "cache"

    def workspace(self, repository: str, revision: str) -> RepoWorkspace:
        return RepoWorkspace(repository, revision, self.mirror, self.cache)

    def reference(self, repository: str, revision: str) -> RepoVerification:
        FakeValidator.calls.append(f"reference {repository}")
        if repository in self.refuse:
            return RepoVerification(
                repository=repository,
                revision=revision,
                status="unverified",
                reason="agent:readme: setup exited with 1: boom",
            )
        return RepoVerification(
            repository=repository,
            revision=revision,
            status="verified",
            test_command="python -m pytest -q tests",
            pass_set=["tests.test_a::test_one", "tests.test_a::test_two"],
            reference_setup="#!/bin/bash\npip install -e .\n",
            reference_source="agent:readme",
            pass_share=1.0,
        )

    def run_readme(self, ws, record, original, erroneous, tag, readme_name="README.md"):
        FakeValidator.calls.append(f"run {tag}")
        before, after = extract_commands(original), extract_commands(erroneous)
        if any(word in erroneous for word in self.harmless):
            return classify(before, after, 0, None, [])
        step = next(i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b)
        return classify(before, after, 1, step, [], "ERROR: scripted failure")

    def close(self) -> None:
        pass


@pytest.fixture(autouse=True)
def _reset() -> None:
    FakeValidator.calls = []
    FakeValidator.refuse = ()


def _options(tmp_path: Path, *names: str, **kwargs: Any) -> ConstructOptions:
    settings: dict[str, Any] = {"per_type": 1, "levels": (1, 2, 3), "workers": 1, **kwargs}
    return ConstructOptions(
        sources=tuple(str(REPOS / name) for name in names), out=tmp_path / "OUT", **settings
    )


def test_constructs_a_loadable_dataset_with_pass_at_1_ground_truth(tmp_path: Path) -> None:
    report = construct(_options(tmp_path, "wordstat"), lambda _: None, FakeValidator)
    outcome = report.repositories["local/wordstat"]
    assert outcome.accepted
    # The PIP_NO_INDEX error "passes" under the scripted validator: dropped with the reason.
    e8 = [i for i in outcome.injected if i.error_type == "E8"]
    for injection in e8:
        if "PIP_NO_INDEX" in injection.edits[0].new:
            assert outcome.dropped[injection.key].startswith("ineffective")
    load = load_dataset(tmp_path / "OUT")
    assert load.problems == []
    kept = [r for r in outcome.instances if r.kept]
    assert len(load.cases) == len(kept) > 0
    assert {r.level for r in kept} >= {1, 2, 3}
    for case in load.cases:
        assert case.reference.verified, case.reference.reason
        assert case.reference.pass_set == frozenset(
            {"tests.test_a::test_one", "tests.test_a::test_two"}
        )
        assert case.spec.repository.url == "https://github.com/local/wordstat"
    # Pass@1's repository comes from the mirror written beside the dataset.
    assert (tmp_path / "OUT" / "mirror" / "local+wordstat" / "repo").is_dir()
    assert any("level 3" in line for line in summary_lines(report))
    share = report.kept_share()["rules"]
    assert sum(row["injected"] for row in share.values()) == len(outcome.injected)


def test_a_second_run_redoes_nothing(tmp_path: Path) -> None:
    options = _options(tmp_path, "tabkit")
    construct(options, lambda _: None, FakeValidator)
    first = list(FakeValidator.calls)
    assert first[0] == "reference local/tabkit"
    before = sorted(p.stat().st_mtime_ns for p in (tmp_path / "OUT").glob("instances/*/*/*"))
    FakeValidator.calls = []
    construct(options, lambda _: None, FakeValidator)
    assert FakeValidator.calls == []
    after = sorted(p.stat().st_mtime_ns for p in (tmp_path / "OUT").glob("instances/*/*/*"))
    assert before == after
    # An instance folder deleted by hand is written again, with its README validated again.
    report = read_report(tmp_path / "OUT" / "construct-report.json")
    merged = next(r for r in report.repositories["local/tabkit"].instances if r.level == 2)
    for path in (tmp_path / "OUT").glob(f"instances/*/{merged.instance}/*"):
        path.unlink()
    construct(options, lambda _: None, FakeValidator)
    assert FakeValidator.calls == [f"run {merged.instance}"]


def test_resume_with_other_options_is_refused(tmp_path: Path) -> None:
    construct(_options(tmp_path, "confmerge"), lambda _: None, FakeValidator)
    with pytest.raises(ConstructError, match=r"other options \(seed\)"):
        construct(_options(tmp_path, "confmerge", seed=5), lambda _: None, FakeValidator)


def test_a_repository_whose_readme_does_not_verify_is_refused(tmp_path: Path) -> None:
    FakeValidator.refuse = ("local/confmerge",)
    report = construct(_options(tmp_path, "confmerge", "filesniff"), lambda _: None, FakeValidator)
    refused = report.repositories["local/confmerge"]
    assert not refused.accepted
    assert refused.reason == (
        "the original README does not verify: agent:readme: setup exited with 1: boom"
    )
    assert not (tmp_path / "OUT" / "instances" / "error_gen_local_confmerge").exists()
    repos = [
        json.loads(line)["repository"]
        for line in (tmp_path / "OUT" / "repo_info.jsonl").read_text().splitlines()
    ]
    assert repos == ["local/filesniff"]
    assert any("local/confmerge refused" in line for line in summary_lines(report))


def test_judge_filter_drops_what_the_judge_rejects(
    tmp_path: Path, llm_server: ScriptedServer
) -> None:
    llm_server.default = (200, completion(VERDICT_NO))
    options = _options(
        tmp_path,
        "confmerge",
        types=("E1",),
        judge="llm:judge-model",
        judge_api_base=llm_server.api_base,
        judge_cache=tmp_path / "judge-cache",
    )
    report = construct(options, lambda _: None, FakeValidator)
    outcome = report.repositories["local/confmerge"]
    assert outcome.injected
    assert all(reason.startswith("filter: judge:") for reason in outcome.dropped.values())
    assert len(outcome.dropped) == len(outcome.injected)
    assert not [r for r in outcome.instances if r.kept]
    assert llm_server.requests


def test_llm_injector_through_a_scripted_server(tmp_path: Path, llm_server: ScriptedServer) -> None:
    readme = (REPOS / "wordstat" / "README.md").read_text()
    line = readme.split("\n").index('pip install -e ".[test]"') + 1
    answer = {
        "edits": [{"line": line, "new": 'pip install -e ".[test]" "click<8.0"'}],
        "error_description": 'The command `pip install -e ".[test]" "click<8.0"` pins click '
        "below the version the project requires.",
        "correction_candidates": ['pip install -e ".[test]"', 'pip install "click<8.0"'],
        "golden_answer": 'pip install -e ".[test]"',
    }
    llm_server.default = (200, completion("Here it is:\n" + json.dumps(answer)))
    options = _options(
        tmp_path,
        "wordstat",
        types=("E7",),
        injector="llm:scripted",
        llm_api_base=llm_server.api_base,
        levels=(1,),
    )
    report = construct(options, lambda _: None, FakeValidator)
    outcome = report.repositories["local/wordstat"]
    # The same answer twice is one injection.
    assert len(outcome.injected) == 1
    injection = outcome.injected[0]
    assert injection.injector == "llm:scripted"
    assert injection.edits[0].old == 'pip install -e ".[test]"'
    assert outcome.dropped == {}
    prompt = llm_server.requests[0]["messages"][1]["content"]
    assert "Error type E7: version compatibility" in prompt and '"click>=8.0"' in prompt
    assert report.kept_share() == {"llm:scripted": {"E7": {"injected": 1, "kept": 1}}}
    load = load_dataset(tmp_path / "OUT")
    assert [case.golden.errors[0].golden_answer for case in load.cases] == [
        'pip install -e ".[test]"'
    ]


def test_llm_answers_that_are_not_injections_say_why() -> None:
    readme = "# x\n\n```bash\npip install -e .\n```\n"
    assert parse_injection("no json", readme, "o/x", "m", "E1") == "the answer holds no JSON object"
    bad_line = json.dumps({"edits": [{"line": 99, "new": "x"}]})
    assert "is not a line of the README" in parse_injection(bad_line, readme, "o/x", "m", "E1")
    no_golden = json.dumps(
        {
            "edits": [{"line": 4, "new": "pip install -e ./x"}],
            "error_description": "d",
            "correction_candidates": ["a"],
            "golden_answer": "pip install -e .",
        }
    )
    assert "golden_answer: expected it among correction_candidates" in parse_injection(
        no_golden, readme, "o/x", "m", "E4"
    )
    assert read_facts(REPOS / "wordstat").name == "wordstat"


def test_an_instance_the_audit_flags_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_enconda.construct import run as run_module

    real = run_module.inject

    def quoting_an_absent_token(*args: Any, **kwargs: Any) -> list:
        found = real(*args, **kwargs)
        first = found[0]
        label = first.label.model_copy(
            update={"error_description": "The step installs `pytest>=7`, which is wrong."}
        )
        return [first.model_copy(update={"label": label}), *found[1:]]

    monkeypatch.setattr(run_module, "inject", quoting_an_absent_token)
    report = construct(_options(tmp_path, "wordstat", levels=(1, 2)), lambda _: None, FakeValidator)
    outcome = report.repositories["local/wordstat"]
    flagged = outcome.injected[0].key
    dropped = [r for r in outcome.instances if flagged in r.error_keys]
    assert dropped and all(
        not r.kept and r.reason == "audit flags: error_text_absent" for r in dropped
    )
    for record in dropped:
        assert not list((tmp_path / "OUT").glob(f"instances/*/{record.instance}"))
    kept = [r for r in outcome.instances if r.kept]
    assert kept and len(load_dataset(tmp_path / "OUT").cases) == len(kept)
