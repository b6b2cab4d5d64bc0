"""Per-test names from the real logs in tests/data/testlogs, and the AEC prompt's slots."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_enconda.aec.prompt import (
    AEC_INSTANCE_TEMPLATE,
    KNOWLEDGE_SLOT,
    NO_MEMORY,
    PROFILE_SLOT,
    aec_instance_prompt,
    prior_knowledge_for,
)
from pytest_enconda.aec.testnames import test_outcomes as outcomes_of
from pytest_enconda.agents.readme import split_test_command

LOGS = Path(__file__).resolve().parents[1] / "data" / "testlogs"


@pytest.mark.parametrize(
    ("log", "expected"),
    [
        ("cargo/fail.log", {"tests::adds": "passed", "integration": "failed"}),
        ("cargo/skip.log", {"slow": "skipped"}),
        ("go/fail-v.log", {"TestMul": "failed", "TestMulOne": "passed"}),
        ("go/skip-v.log", {"TestMulSlow": "skipped"}),
        ("ctest/fail.log", {"t_one": "passed", "t_two": "failed", "t_three": "passed"}),
        ("ctest/skip.log", {"t_three": "skipped"}),
        ("automake/fail.log", {"sum": "passed", "ok.sh": "passed", "bad.sh": "failed"}),
        # An expected failure is a pass of the suite; exit 77 a skip.
        ("automake/skip.log", {"bad.sh": "passed", "skip.sh": "skipped"}),
        ("junit5/fail.log", {"CalcTest.a()": "passed", "CalcTest.b()": "failed"}),
        ("junit5/skip.log", {"CalcTest.c()": "skipped"}),
        ("node/fail.log", {"a": "passed", "b": "failed"}),
        ("node/fail-spec.log", {"a": "passed", "b": "failed", "c": "passed"}),
        ("node/skip.log", {"c": "skipped"}),
        ("unittest/fail.log", {"test_m.T.test_b": "failed", "test_m.T.test_c": "failed"}),
        ("pytest/fail.log", {"test_m.py::test_b": "failed"}),
    ],
)
def test_names_and_outcomes_from_real_logs(log: str, expected: dict[str, str]) -> None:
    found = outcomes_of((LOGS / log).read_text(errors="replace"))
    assert {name: found.get(name) for name in expected} == expected


def test_a_name_keeps_its_worst_outcome() -> None:
    text = "test a ... ok\ntest a ... FAILED\ntest a ... ok\n"
    assert outcomes_of(text) == {"a": "failed"}


def test_prose_names_no_test() -> None:
    assert outcomes_of("All 12 tests passed!\nok\nPASS\n") == {}


def test_the_prompt_fills_both_slots_and_keeps_the_rules() -> None:
    assert PROFILE_SLOT in AEC_INSTANCE_TEMPLATE and KNOWLEDGE_SLOT in AEC_INSTANCE_TEMPLATE
    text = aec_instance_prompt(
        case_id="c1",
        task="configure the environment and run test cases",
        workdir="/data/project",
        profile="- language: Go {{Prior_Knowledge}}",
        prior_knowledge=NO_MEMORY,
        language="go",
    )
    assert "{{Prior_Knowledge}}" in text  # the profile's own text, not substituted again
    assert text.count(NO_MEMORY) == 1
    order = [text.index(word) for word in ("CI configuration", "dependency files", "README")]
    assert order == sorted(order)
    for rule in ("pip install <the project>", "Never modify", "Dockerfile", "root", "matrix"):
        assert rule in text
    assert "/enconda/output/" in text and "test_command" in text
    assert "main language is go" in text


def test_no_memory_says_so() -> None:
    assert prior_knowledge_for(None, object(), "repo") == NO_MEMORY


def test_memory_fills_prior_knowledge(tmp_path: Path) -> None:
    from pytest_enconda.agents.profile import CodebaseProfile
    from pytest_enconda.memory.store import MemoryStore, Provenance, Triple

    path = tmp_path / "memory.sqlite"
    with MemoryStore(path) as store:
        store.add(
            Triple(
                problem="Rust cargo build tools: linker cc command not found",
                solution="install a C toolchain",
                action="apt-get install -y build-essential",
            ),
            Provenance(repository="other/widget", run="r", case_id="c"),
        )
    profile = CodebaseProfile(language="Rust", package_manager="cargo", test_framework="cargo test")
    record = tmp_path / "memory.json"
    text = prior_knowledge_for(path, profile, "this/calc", record=record)
    assert "build-essential" in text and record.is_file()


def test_split_test_command_keeps_the_last_runner() -> None:
    commands = ["apt-get install -y cmake", "cmake -S . -B build", "ctest --test-dir build", "x"]
    assert split_test_command(commands) == (
        ["apt-get install -y cmake", "cmake -S . -B build", "x"],
        "ctest --test-dir build",
    )


def test_the_swe_agent_chooses_the_aec_prompts_by_the_case(tmp_path: Path) -> None:
    from pytest_enconda.aec.prompt import AEC_SYSTEM_PROMPT
    from pytest_enconda.agents.base import AgentTask
    from pytest_enconda.agents.profile import CodebaseProfile
    from pytest_enconda.agents.prompts import SYSTEM_PROMPT
    from pytest_enconda.agents.swe_agent import _prompts
    from pytest_enconda.cases.loader import load_case

    case_dir = tmp_path / "c"
    (case_dir / "repo").mkdir(parents=True)
    (case_dir / "case.toml").write_text(
        'id = "c"\nsuite = "aec"\n[repository]\nkind = "folder"\npath = "repo"\n'
        '[aec]\nlanguage = "go"\n[aec.reference]\ntest_command = "go test -v ./..."\n'
    )
    case = load_case(case_dir / "case.toml")
    task = AgentTask(case=case, readme_text="", readme_name="README.md")
    prompt, system = _prompts(task, CodebaseProfile(language="Go"), None)
    assert system == AEC_SYSTEM_PROMPT and system != SYSTEM_PROMPT
    assert '"name": "Go"' in prompt and NO_MEMORY in prompt
    assert "go test -v" not in prompt  # nothing tells the agent the reference test command
