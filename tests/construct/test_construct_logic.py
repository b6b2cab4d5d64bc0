"""construct's logic without Docker: labels, injectors, filters, levels, the written layout."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from pytest_enconda.agents.readme_commands import extract_commands
from pytest_enconda.cases.audit import audit_cases
from pytest_enconda.cases.enconda_import import load_dataset
from pytest_enconda.construct.filters import offline_filter
from pytest_enconda.construct.injection_facts import RepoFacts, command_lines, read_facts
from pytest_enconda.construct.injectors import candidates, inject
from pytest_enconda.construct.levels import compose, plan_levels
from pytest_enconda.construct.models import (
    CONSTRUCT_TYPES,
    ErrorLabel,
    Injection,
    LineEdit,
    apply_edits,
)
from pytest_enconda.construct.validate import classify, marked_script
from pytest_enconda.construct.writer import (
    short_name,
    write_instance,
    write_original,
    write_repo_info,
)

REPOS = Path(__file__).resolve().parents[2] / "benchmark_cases" / "repos"
SHIPPED = ("confmerge", "filesniff", "tabkit", "verbump", "wordstat")


def _repo(name: str) -> tuple[str, list, object]:
    readme = (REPOS / name / "README.md").read_text()
    return readme, command_lines(readme), read_facts(REPOS / name)


def test_label_model_names_field_and_expectation() -> None:
    with pytest.raises(ValidationError, match="error_type"):
        ErrorLabel(
            error_type="E3", error_description="x", golden_answer="a", correction_candidates=["a"]
        )
    with pytest.raises(ValidationError, match="golden_answer"):
        ErrorLabel(
            error_type="E1", error_description="x", golden_answer="a", correction_candidates=["b"]
        )
    with pytest.raises(ValidationError, match="one line"):
        LineEdit(line=0, old="a", new="b\nc")


def test_apply_edits_checks_the_original_line() -> None:
    assert apply_edits("a\nb\nc", [LineEdit(line=1, old="b", new="B")]) == "a\nB\nc"
    with pytest.raises(ValueError, match="expected 'x'"):
        apply_edits("a\nb", [LineEdit(line=1, old="x", new="y")])


def test_facts_come_from_metadata_and_tree() -> None:
    facts = read_facts(REPOS / "tabkit")
    assert facts.name == "tabkit"
    assert [r.text for r in facts.dependencies] == ["python-dateutil>=2.8"]
    assert facts.scripts == ["tabkit"]
    assert facts.has_path("requirements/test.txt") and not facts.has_path("requirements/x.txt")
    assert [p.text for p in facts.pinned["requirements/base.txt"]] == [
        "python-dateutil==2.9.0.post0",
        "six==1.16.0",
    ]
    verbump = read_facts(REPOS / "verbump")
    assert verbump.requires_python == ">=3.11" and "test" in verbump.extras


@pytest.mark.parametrize("name", SHIPPED)
def test_every_rule_injection_passes_the_offline_filter(name: str) -> None:
    readme, cmds, facts = _repo(name)
    types_seen = set()
    for error_type in CONSTRUCT_TYPES:
        for injection in candidates(f"o/{name}", readme, cmds, facts, error_type):
            assert offline_filter(injection, readme, facts) is None, injection
            broken = apply_edits(readme, list(injection.edits))
            assert broken != readme
            # Minimal: one or two lines differ.
            diff = [
                a for a, b in zip(readme.split("\n"), broken.split("\n"), strict=True) if a != b
            ]
            assert 1 <= len(diff) <= 2
            # The literal reader sees the erroneous command.
            assert extract_commands(broken) != extract_commands(readme)
            types_seen.add(error_type)
    assert {"E1", "E2", "E4", "E7", "E8"} <= types_seen


def test_rules_use_the_repositorys_facts() -> None:
    readme, cmds, facts = _repo("verbump")
    e7 = {i.rule: i for i in candidates("o/verbump", readme, cmds, facts, "E7")}
    assert e7["pin-packaging"].edits[0].new == 'pip install -e ".[test]" "packaging<22"'
    assert e7["pin-packaging"].label.golden_answer == 'pip install -e ".[test]"'
    assert e7["python-version"].edits[0].new == "python3.9 -m venv .venv"
    e6 = candidates("o/verbump", readme, cmds, facts, "E6")
    swap = next(i for i in e6 if i.rule == "swap-0-1")
    assert swap.label.golden_answer == "python3.11 -m venv .venv\n. .venv/bin/activate"
    readme, cmds, facts = _repo("tabkit")
    e4 = {i.edits[0].new for i in candidates("o/tabkit", readme, cmds, facts, "E4")}
    assert "pip install -r requirements/tests.txt" in e4


def test_offline_filter_rejects_bad_labels() -> None:
    readme, cmds, facts = _repo("wordstat")
    good = candidates("o/wordstat", readme, cmds, facts, "E1")[0]
    same = good.model_copy(
        update={
            "label": good.label.model_copy(
                update={
                    "golden_answer": good.edits[0].new,
                    "correction_candidates": [good.edits[0].new],
                }
            )
        }
    )
    assert offline_filter(same, readme, facts) == "the golden answer is the erroneous text"
    wrong_type = good.model_copy(
        update={"label": good.label.model_copy(update={"error_type": "E4"})}
    )
    assert "type rule of E4" in offline_filter(wrong_type, readme, facts)
    prose = Injection(
        repository="o/wordstat",
        injector="rules",
        rule="prose",
        edits=[LineEdit(line=0, old=readme.split("\n")[0], new="# wordstats")],
        label=ErrorLabel(
            error_type="E8",
            error_description="title",
            golden_answer="# wordstat",
            correction_candidates=["# wordstat"],
        ),
    )
    assert offline_filter(prose, readme, facts).startswith("not visible")


def test_injection_is_deterministic_with_the_seed() -> None:
    readme, cmds, facts = _repo("filesniff")
    one = inject("o/filesniff", readme, cmds, facts, list(CONSTRUCT_TYPES), 1, seed=3)
    two = inject("o/filesniff", readme, cmds, facts, list(CONSTRUCT_TYPES), 1, seed=3)
    assert [i.key for i in one] == [i.key for i in two]
    seeds = {
        tuple(i.key for i in inject("o/filesniff", readme, cmds, facts, ["E4"], 1, seed=s))
        for s in range(10)
    }
    assert len(seeds) > 1


def test_levels_compose_errors_on_different_lines() -> None:
    readme, cmds, facts = _repo("filesniff")
    pool = [i for t in CONSTRUCT_TYPES for i in candidates("o/f", readme, cmds, facts, t)]
    planned, notes = plan_levels("o_f", pool[:8], per_readme=2, levels=[1, 2, 3, 5], seed=0)
    names = [p.instance for p in planned]
    assert len(names) == len(set(names))
    assert any(n.endswith("_only_" + p.errors[0].error_type) for p in planned for n in [p.instance])
    levels = {p.level for p in planned}
    assert {1, 2, 3} <= levels
    for plan in planned:
        text = compose(readme, list(plan.errors))
        changed = sum(a != b for a, b in zip(readme.split("\n"), text.split("\n"), strict=True))
        # errors on one line merge word by word (levels.merge_line): one changed line each
        assert changed == len({edit.line for e in plan.errors for edit in e.edits})
    keysets = [frozenset(e.key for e in p.errors) for p in planned]
    assert len(keysets) == len(set(keysets))
    # confmerge has three command lines: a level beyond what its errors compose into (several
    # per line, word by word) cannot be made, and the reason says so.
    readme, cmds, facts = _repo("confmerge")
    pool = [i for t in CONSTRUCT_TYPES for i in candidates("o/c", readme, cmds, facts, t)]
    planned, notes = plan_levels("o_c", pool, per_readme=2, levels=[40], seed=0)
    assert all(p.level <= 3 for p in planned)
    assert notes and notes[0].startswith("level 40")


def test_written_layout_loads_with_the_importer_and_passes_the_audit(tmp_path: Path) -> None:
    readme, cmds, facts = _repo("tabkit")
    pool = inject("o/tabkit", readme, cmds, facts, list(CONSTRUCT_TYPES), 1, seed=0)
    planned, _ = plan_levels("o_tabkit", pool, per_readme=2, levels=[1, 2, 3], seed=0)
    write_repo_info(tmp_path, {"o/tabkit": "a" * 40})
    write_original(tmp_path, "o/tabkit", readme)
    for plan in planned:
        write_instance(
            tmp_path,
            "o/tabkit",
            plan.instance,
            compose(readme, list(plan.errors)),
            [e.label for e in plan.errors],
        )
    load = load_dataset(tmp_path)
    assert load.problems == [], load.problems
    assert load.notes == [], load.notes
    assert len(load.cases) == len(planned)
    by_id = {case.id.split("/")[-1]: case for case in load.cases}
    for plan in planned:
        short = short_name("o/tabkit", plan.instance)
        case = by_id[short]
        assert case.level == plan.level
        assert [e.golden_answer for e in case.golden.errors] == [
            e.label.golden_answer for e in plan.errors
        ]
        assert case.original_readme_text == readme
    report = audit_cases(load.cases, extract_commands)
    assert report.counts.get("error_text_absent", 0) == 0
    assert report.counts.get("duplicate_readme", 0) == 0
    assert report.counts.get("readme_unchanged", 0) == 0
    data = json.loads(next(tmp_path.glob("instances/*/*/README.json")).read_text())
    assert set(data) == {"readme", "repo_name", "level", "errors"}


def test_classify_verdicts() -> None:
    original = ["pip install -e .", "tool x", "python -m pytest"]
    erroneous = ["pip install -e .", "tool y", "python -m pytest"]
    assert classify(original, original, None, None, []).verdict == "documentation-only"
    effective = classify(original, erroneous, 1, 1, [], "boom")
    assert effective.verdict == "effective" and effective.failed_command == "tool y"
    assert classify(original, erroneous, 1, 0, [], "flaky").verdict == "ineffective"
    assert classify(original, erroneous, 0, None, ["t::a"]).verdict == "effective"
    assert classify(original, erroneous, 0, None, []).verdict == "ineffective"


def test_marked_script_records_each_step() -> None:
    script = marked_script(["a b", "c"])
    assert script.splitlines()[1:] == [
        "printf '%s' 0 > /tmp/enconda/construct-step",
        "a b",
        "printf '%s' 1 > /tmp/enconda/construct-step",
        "c",
    ]


def test_repos_are_copied_not_touched(tmp_path: Path) -> None:
    shutil.copytree(REPOS / "wordstat", tmp_path / "w")
    assert read_facts(tmp_path / "w").scripts == ["wordstat"]


def test_the_audit_flags_no_rule_label(tmp_path: Path) -> None:
    """Every rule's label, alone in its README, passes the label audit (the facts it names
    from the metadata are not quoted as erroneous text)."""
    revisions = {}
    count = 0
    for name in SHIPPED:
        readme, cmds, facts = _repo(name)
        repository = f"o/{name}"
        revisions[repository] = "a" * 40
        write_original(tmp_path, repository, readme)
        for error_type in CONSTRUCT_TYPES:
            for injection in candidates(repository, readme, cmds, facts, error_type):
                count += 1
                write_instance(
                    tmp_path,
                    repository,
                    f"o_{name}_error_readme_{count}",
                    apply_edits(readme, list(injection.edits)),
                    [injection.label],
                )
    write_repo_info(tmp_path, revisions)
    load = load_dataset(tmp_path)
    assert load.problems == [] and len(load.cases) == count
    report = audit_cases(load.cases, extract_commands)
    flagged = {r.case_id: r.flags for r in report.records if r.flags}
    assert flagged == {}


def test_repository_facts_never_read_through_links_or_fifos(tmp_path: Path) -> None:
    """A repository is downloaded data: a pyproject.toml linked to a file outside it is not
    read, and a FIFO named like a requirements file does not hang the reading."""
    import os

    outside = tmp_path / "host-secret.toml"
    outside.write_text('[project]\nname = "host-secret"\ndependencies = ["leaked==1.0"]\n')
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").symlink_to(outside)
    (repo / "setup.cfg").write_text("[metadata]\nname = honest\n")
    os.mkfifo(repo / "requirements-dev.txt")
    (repo / "requirements.txt").write_text("click==8.1.7\n")
    facts = read_facts(repo)
    assert facts.name == "honest"
    assert [r.name for r in facts.dependencies] == []
    assert [r.spec for r in facts.pinned["requirements.txt"]] == ["==8.1.7"]
    assert facts.pinned.get("requirements-dev.txt", []) == []


def test_rst_literal_block_commands_pass_the_offline_filter_of_an_rst_readme() -> None:
    # cachetools' README: the install is an RST literal block after "::", a command the
    # literal agent runs in README.rst; the filter read it as Markdown and dropped every error.
    readme = (
        "cachetools\n==========\n\nInstallation\n------------\n\n"
        "cachetools is available from PyPI and can be installed by running::\n\n"
        "  pip install -e .\n\nMore text.\n"
    )
    cmds = command_lines(readme, "README.rst")
    assert [c.command for c in cmds] == ["pip install -e ."]
    facts = RepoFacts(name="cachetools")
    kept = []
    for error_type in ("E2", "E4", "E8"):
        for injection in candidates("o/cachetools", readme, cmds, facts, error_type):
            assert offline_filter(injection, readme, facts, "README.md").startswith("not visible")
            if offline_filter(injection, readme, facts, "README.rst") is None:
                kept.append(injection.error_type)
    assert set(kept) == {"E2", "E4", "E8"}
