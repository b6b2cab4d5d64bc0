"""The diagnosis cases shipped in ``benchmark_cases/``: format, golden answers and coverage.

No Docker here: whether the golden setups and the literal READMEs really pass or fail is checked
by the execution items. These tests keep the files consistent with each other.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from pytest_enconda.cases.loader import CASE_FILE, load_case
from pytest_enconda.cases.models import Case
from pytest_enconda.error_types import ERROR_TYPES

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmark_cases"
DIAGNOSIS = BENCHMARK / "diagnosis"
REPOS = BENCHMARK / "repos"
CASE_FILES = sorted(DIAGNOSIS.glob(f"*/{CASE_FILE}"))
# The issue asks for these as execution-breaking errors; E8 may be documentation-only.
BREAKING_TYPES = ("E1", "E2", "E4", "E6", "E7")
# Languages that a literal README follower runs as shell: an unlabelled fence counts as shell.
SHELL_FENCES = {"", "bash", "sh", "shell", "console", "zsh"}
_FENCE = re.compile(r"^```([^\n`]*)$", re.MULTILINE)


def _case_id(path: Path) -> str:
    return path.parent.name


def _name(path: Path) -> str:
    return path.name


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return [load_case(path, [BENCHMARK]) for path in CASE_FILES]


def _repo_dir(case: Case) -> Path:
    return (case.case_dir / str(case.spec.repository.path)).resolve()


def test_enough_cases_over_enough_repositories(cases: list[Case]) -> None:
    assert len(cases) >= 8, f"only {len(cases)} cases under {DIAGNOSIS}"
    repos = {_repo_dir(case) for case in cases}
    assert len(repos) >= 4, sorted(str(repo) for repo in repos)


def test_all_six_error_types_appear(cases: list[Case]) -> None:
    seen = Counter(error_type for case in cases for error_type in case.error_types)
    assert set(seen) == set(ERROR_TYPES), seen


def test_at_least_one_case_has_three_errors(cases: list[Case]) -> None:
    assert max(case.level for case in cases) >= 3


def test_breaking_types_appear_in_cases_tagged_execution_breaking(cases: list[Case]) -> None:
    breaking = [case for case in cases if "breaks-setup" in case.spec.tags]
    types = {error_type for case in breaking for error_type in case.error_types}
    assert set(BREAKING_TYPES) <= types, types


@pytest.mark.parametrize("case_file", CASE_FILES, ids=_case_id)
def test_case_loads_and_is_complete(case_file: Path) -> None:
    case = load_case(case_file, [BENCHMARK])
    assert case.spec.suite == "diagnosis"
    assert case.id == case_file.parent.name
    assert case.spec.repository.kind == "folder"
    assert _repo_dir(case).parent == REPOS.resolve()
    assert case.original_readme_text is not None, "original_readme is required"
    assert case.golden_setup_text is not None, "golden_setup is required"
    assert case.golden_setup_text.strip()
    assert case.spec.test_command.strip()
    assert case.readme_text != case.original_readme_text


@pytest.mark.parametrize("case_file", CASE_FILES, ids=_case_id)
def test_golden_answer(case_file: Path) -> None:
    case = load_case(case_file, [BENCHMARK])
    assert 1 <= len(case.golden.errors) <= 3
    assert case.golden.level == len(case.golden.errors) == case.level
    for error in case.golden.errors:
        assert error.golden_answer in error.correction_candidates, error.error_description
        assert len(error.correction_candidates) >= 3
        assert len(set(error.correction_candidates)) == len(error.correction_candidates)
        assert error.error_description.strip()


@pytest.mark.parametrize("case_file", CASE_FILES, ids=_case_id)
def test_case_id_names_repository_and_error_types(case_file: Path) -> None:
    case = load_case(case_file, [BENCHMARK])
    expected = "-".join([_repo_dir(case).name, *(t.lower() for t in case.error_types)])
    assert case.id == expected


@pytest.mark.parametrize("case_file", CASE_FILES, ids=_case_id)
def test_original_readme_is_the_repository_readme(case_file: Path) -> None:
    case = load_case(case_file, [BENCHMARK])
    repo_readme = (_repo_dir(case) / "README.md").read_text(encoding="utf-8")
    assert case.original_readme_text == repo_readme


@pytest.mark.parametrize("case_file", CASE_FILES, ids=_case_id)
def test_readmes_label_every_code_fence(case_file: Path) -> None:
    """A literal follower runs unlabelled fences as shell, so examples must say their language.

    Fences alternate open/close; only the opening ones carry a language.
    """
    case = load_case(case_file, [BENCHMARK])
    for name, text in (("README", case.readme_text), ("original", case.original_readme_text)):
        assert text is not None
        openings = _FENCE.findall(text)[::2]
        assert openings, f"{name}: no fenced code block"
        unlabelled = [i for i, lang in enumerate(openings) if lang.strip() == ""]
        assert not unlabelled, f"{name}: fenced blocks {unlabelled} have no language"
        assert any(lang.strip() in SHELL_FENCES for lang in openings)


@pytest.mark.parametrize("case_file", CASE_FILES, ids=_case_id)
def test_test_command_activates_the_readmes_virtualenv(case_file: Path) -> None:
    """The tests run in a separate shell: a README that installs into .venv needs activation."""
    case = load_case(case_file, [BENCHMARK])
    assert case.original_readme_text is not None
    uses_venv = "-m venv .venv" in case.original_readme_text
    activates = case.spec.test_command.startswith(". .venv/bin/activate && ")
    assert uses_venv == activates, case.spec.test_command


def test_repository_test_basenames_are_unique() -> None:
    names = [path.name for path in REPOS.glob("*/tests/test_*.py")]
    assert names, f"no repository tests under {REPOS}"
    duplicates = [name for name, count in Counter(names).items() if count > 1]
    assert not duplicates


# repos/aec holds the AEC cases' repositories, one per language (tests/aec checks them).
@pytest.mark.parametrize(
    "repo", sorted(p for p in REPOS.glob("*") if p.is_dir() and p.name != "aec"), ids=_name
)
def test_repository_is_a_python_project_with_tests(repo: Path) -> None:
    assert (repo / "README.md").is_file()
    assert (repo / "pyproject.toml").is_file()
    tests = sorted((repo / "tests").glob("test_*.py"))
    assert tests, f"{repo.name}: no tests"
    test_functions = sum(
        len(re.findall(r"^def test_", path.read_text(encoding="utf-8"), re.MULTILINE))
        for path in tests
    )
    assert 3 <= test_functions <= 12, f"{repo.name}: {test_functions} test functions"
