"""The AEC cases shipped in ``benchmark_cases/aec/``: format, languages, golden setups, and the
misleading READMEs. Whether the golden setups really pass and the misleading READMEs really fail
is measured in containers (``pytest benchmark_cases -k aec --agent=oracle`` / ``--agent=readme``;
the slow test below runs one of each)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_enconda.agents.readme import split_test_command
from pytest_enconda.agents.readme_commands import extract_commands
from pytest_enconda.cases.loader import CASE_FILE, load_case
from pytest_enconda.cases.models import README_FROM_REPOSITORY

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmark_cases"
CASES = [
    load_case(path, [BENCHMARK]) for path in sorted((BENCHMARK / "aec").glob(f"*/{CASE_FILE}"))
]
MISLEADING = {"aec-misleading-jsoncount", "aec-misleading-pyunits-py312"}


def readme_of(case) -> str:  # type: ignore[no-untyped-def]
    return (case.case_dir / str(case.spec.repository.path) / "README.md").read_text()


def test_nine_languages_and_two_misleading_readmes() -> None:
    languages = {case.spec.aec.language for case in CASES}
    assert {
        "python",
        "rust",
        "c",
        "c++",
        "go",
        "javascript",
        "typescript",
        "java",
        "php",
    } <= languages
    assert len(CASES) == 10
    assert {case.id for case in CASES} >= MISLEADING
    for case in CASES:
        assert case.golden_setup_text, case.id
        reference = case.spec.aec.reference
        assert reference is not None and reference.pass_set, case.id
        assert README_FROM_REPOSITORY in case.spec.tags  # the agent reads the repository's


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_the_readme_states_a_test_command_and_never_the_answer_file(case) -> None:  # type: ignore[no-untyped-def]
    _setup, test_command = split_test_command(extract_commands(readme_of(case), "README.md"))
    assert test_command, f"{case.id}: the README names no test command"


def test_the_misleading_readmes_differ_from_the_golden_setup_where_they_mislead() -> None:
    by_id = {case.id: case for case in CASES}
    jsoncount = by_id["aec-misleading-jsoncount"]
    assert "libjansson-dev" not in readme_of(jsoncount)
    assert "libjansson-dev" in jsoncount.golden_setup_text
    py312 = by_id["aec-misleading-pyunits-py312"]
    assert "python3.12" in readme_of(py312) and "python3.12" not in py312.golden_setup_text


def test_the_typescript_and_php_cases_need_debian_in_place_of_their_registries() -> None:
    """npm and Packagist are out of reach: the golden setups use Debian's tsc and the
    @types/node its nodejs ships (linked where tsc looks), Debian's PHPUnit with BCMath and
    Composer's offline autoloader; the manifests still name the registries' packages."""
    by_id = {case.id: case for case in CASES}
    ts, php = by_id["aec-ts-tsduration"], by_id["aec-php-phpmoney"]
    repo_ts = ts.case_dir / str(ts.spec.repository.path)
    assert json.loads((repo_ts / "package.json").read_text())["devDependencies"].keys() == {
        "typescript",
        "@types/node",
    }
    ts_setup, php_setup = ts.golden_setup_text or "", php.golden_setup_text or ""
    assert "node-typescript" in ts_setup
    assert "node_modules/@types/node" in ts_setup
    repo_php = php.case_dir / str(php.spec.repository.path)
    assert "ext-bcmath" in (repo_php / "composer.json").read_text()
    assert "php-bcmath" in php_setup and "dump-autoload" in php_setup
    assert 'bootstrap="vendor/autoload.php"' in (repo_php / "phpunit.xml").read_text()


def test_the_php_pass_set_is_what_the_parser_names_in_a_real_log() -> None:
    from pytest_enconda.aec.testnames import test_outcomes as names_in

    php = {case.id: case for case in CASES}["aec-php-phpmoney"]
    log = Path(__file__).parent / "logs" / "phpunit" / "pass.log"
    found = names_in(log.read_text(encoding="utf-8"))
    reference = php.spec.aec.reference if php.spec.aec is not None else None
    assert reference is not None
    assert sorted(reference.pass_set) == sorted(found)
    assert set(found.values()) == {"passed"}


@pytest.mark.slow
def test_oracle_passes_and_readme_fails_a_misleading_case_in_docker(tmp_path: Path) -> None:
    """Real Docker: the oracle on the misleading C case passes all three items; the readme agent
    fails aec_tests_run and aec_success on it (CMake cannot find jansson)."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    results = {}
    for agent in ("oracle", "readme"):
        run_dir = tmp_path / agent
        subprocess.run(
            [sys.executable, "-m", "pytest", "benchmark_cases", "-k", "jsoncount", "-q",
             "-p", "no:cacheprovider", f"--agent={agent}", f"--run-dir={run_dir}"],
            cwd=root, env=env, capture_output=True, text=True, timeout=1800,
        )  # fmt: skip
        rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
        results[agent] = {row["item"]: row["outcome"] for row in rows}
    assert results["oracle"] == dict.fromkeys(
        ("aec_tests_run", "aec_pass_set", "aec_success"), "passed"
    )
    assert results["readme"]["aec_tests_run"] == "failed"
    assert results["readme"]["aec_success"] == "failed"
