"""The research cases shipped in ``benchmark_cases/research/``: format, repositories, golden setups.

No Docker here: whether the golden setups build a working environment, and whether the implicit
case's README alone fails C1, is checked in containers (the pyramid items with ``--agent=oracle``
and ``--agent=readme``). These tests keep the files consistent with what those runs rely on.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import sys
from pathlib import Path

import pytest

from pytest_enconda.agents.readme_commands import extract_commands
from pytest_enconda.cases.loader import CASE_FILE, load_case
from pytest_enconda.cases.models import Case

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmark_cases"
RESEARCH = BENCHMARK / "research"
REPOS = BENCHMARK / "repos"
CASE_FILES = sorted(RESEARCH.glob(f"*/{CASE_FILE}"))
SCHEMA = BENCHMARK.parents[1] / "shared" / "data" / "researchenvbench" / "report_schema.json"
# The required keys of ResearchEnvBench's report schema (checked against the file when present).
REPORT_KEYS = (
    "python_path",
    "python_version",
    "torch_version",
    "cuda_available",
    "gpu_count",
    "ddp_expected_ok",
    "env_tool",
    "env_name",
    "notes",
)
# Distribution names whose import name differs.
IMPORT_NAMES = {"pyyaml": "yaml"}
IMPLICIT = "patchvit-hidden-dep"
HIDDEN_PACKAGE = "einops"
# The case of issue 19's done-when: a static import no requirement lists, a README that installs
# into a venv. C0 names exactly this package for a literal README follower.
MISSING = "mixlm-missing-einops"
MISSING_PACKAGE = "einops"


def _case_id(path: Path) -> str:
    return path.parent.name


def _repo_dir(case: Case) -> Path:
    return (case.case_dir / str(case.spec.repository.path)).resolve()


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    loaded = [load_case(path, [BENCHMARK]) for path in CASE_FILES]
    return {case.id: case for case in loaded}


def _python_files(repo: Path) -> list[Path]:
    skip = {".venv", "__pycache__", ".pytest_cache", "build", "dist"}
    return [path for path in repo.rglob("*.py") if not skip & set(path.relative_to(repo).parts)]


def _top_level_imports(repo: Path) -> set[str]:
    """Non-relative imports of every file, as C0 counts them (an ``ast.walk`` per file)."""
    names: set[str] = set()
    for path in _python_files(repo):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names - {"__future__"}


def _first_party(repo: Path) -> set[str]:
    names = {path.stem for path in repo.glob("*.py")}
    for folder in (repo, repo / "src"):
        names.update(path.parent.name for path in folder.glob("*/__init__.py"))
    return names


def _requirement_names(lines: list[str]) -> set[str]:
    names = set()
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            name = re.split(r"[\s<>=!~;\[]", line, maxsplit=1)[0].lower().replace("_", "-")
            names.add(IMPORT_NAMES.get(name, name))
    return names


def _declared(repo: Path) -> set[str]:
    """Import names of the repository's declared runtime dependencies."""
    if (repo / "requirements.txt").is_file():
        lines = (repo / "requirements.txt").read_text(encoding="utf-8").splitlines()
        return _requirement_names(lines)
    import tomllib

    project = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return _requirement_names(list(project.get("dependencies", [])))


def _script_of(entry: str, repo: Path, *, python_prefix: bool) -> Path:
    """The file an entry point runs: ``python X.py ...`` / ``-m pkg.mod ...`` (from the root)."""
    words = shlex.split(entry)
    if python_prefix:
        assert words[0] == "python", f"{entry!r} should start with 'python'"
        words = words[1:]
    if words[0] == "-m":
        module = Path(*words[1].split("."))
        for root in (repo, repo / "src"):
            for candidate in (root / module.with_suffix(".py"), root / module / "__main__.py"):
                if candidate.is_file():
                    return candidate
        raise AssertionError(f"module {words[1]} of {entry!r} not found in {repo}")
    return repo / words[0]


def test_enough_research_cases(cases: dict[str, Case]) -> None:
    assert len(cases) >= 3, sorted(cases)
    repos = {_repo_dir(case) for case in cases.values()}
    assert len(repos) >= 3, sorted(str(repo) for repo in repos)
    assert IMPLICIT in cases


@pytest.mark.parametrize("case_file", CASE_FILES, ids=_case_id)
def test_case_loads_and_declares_its_pyramid(case_file: Path) -> None:
    case = load_case(case_file, [BENCHMARK])
    research = case.spec.research
    assert case.spec.suite == "research"
    assert case.id == case_file.parent.name
    assert research is not None
    assert research.framework == "torch"
    assert research.entry_point and research.ddp_entry_point
    assert research.supports_cpu and research.supports_single_gpu and research.supports_multi_gpu
    assert not research.skip_reasons, "every stage applies to the shipped cases"
    assert case.spec.repository.kind == "folder"
    assert _repo_dir(case).parent == REPOS.resolve()
    assert case.golden_setup_text and case.golden_setup_text.strip()
    assert case.readme_text.strip()


@pytest.mark.parametrize("case_file", CASE_FILES, ids=_case_id)
def test_repository_is_a_small_research_repo(case_file: Path) -> None:
    case = load_case(case_file, [BENCHMARK])
    repo = _repo_dir(case)
    assert (repo / "README.md").is_file()
    assert (repo / "requirements.txt").is_file() or (repo / "pyproject.toml").is_file()
    assert list((repo / "tests").glob("test_*.py")), "the repository has its own unit tests"
    assert len(_python_files(repo)) <= 12, "keep the repository tiny"
    assert "torch" in _declared(repo)


@pytest.mark.parametrize("case_file", CASE_FILES, ids=_case_id)
def test_entry_points_exist_and_read_the_ddp_backend_variable(case_file: Path) -> None:
    case = load_case(case_file, [BENCHMARK])
    research = case.spec.research
    assert research is not None and research.entry_point and research.ddp_entry_point
    repo = _repo_dir(case)
    single = _script_of(research.entry_point, repo, python_prefix=True)
    ddp = _script_of(research.ddp_entry_point, repo, python_prefix=False)
    assert single.is_file() and ddp.is_file()
    source = ddp.read_text(encoding="utf-8")
    assert "ENCONDA_DDP_BACKEND" in source
    assert "init_process_group" in source
    assert "--steps 1" in research.entry_point and "--steps 1" in research.ddp_entry_point


@pytest.mark.parametrize("case_file", CASE_FILES, ids=_case_id)
def test_readme_shows_the_entry_points(case_file: Path) -> None:
    case = load_case(case_file, [BENCHMARK])
    research = case.spec.research
    assert research is not None and research.entry_point and research.ddp_entry_point
    commands = "\n".join(extract_commands(case.readme_text))
    assert research.entry_point in commands
    assert f"torchrun --standalone --nproc_per_node=2 {research.ddp_entry_point}" in commands


@pytest.mark.parametrize("case_file", CASE_FILES, ids=_case_id)
def test_golden_setup_writes_the_self_report(case_file: Path) -> None:
    case = load_case(case_file, [BENCHMARK])
    script = case.golden_setup_text or ""
    assert "mkdir -p /enconda/output" in script
    assert "/enconda/output/report.json" in script
    for key in REPORT_KEYS:
        assert f'"{key}"' in script, f"report key {key} not written"
    # Values are observed, not typed in: the report is written by the environment's own python.
    assert "sys.executable" in script and "torch.__version__" in script
    assert "torch.cuda.is_available()" in script
    assert "torch==" in script, "torch is pinned so the package cache is hit"


@pytest.mark.shared_data
def test_report_keys_are_the_schemas_required_keys() -> None:
    if not SCHEMA.is_file():
        pytest.skip(f"{SCHEMA} not present")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert tuple(schema["required"]) == REPORT_KEYS


@pytest.mark.parametrize("case_file", CASE_FILES, ids=_case_id)
def test_every_static_import_is_declared_stdlib_or_first_party(case_file: Path) -> None:
    """So C0 (pyright's missing imports) passes once the declared dependencies are installed."""
    case = load_case(case_file, [BENCHMARK])
    repo = _repo_dir(case)
    test_only = {"pytest"}
    known = set(sys.stdlib_module_names) | _first_party(repo) | _declared(repo) | test_only
    undeclared = {MISSING_PACKAGE} if case.id == MISSING else set()
    assert _top_level_imports(repo) - known == undeclared


def test_missing_case_imports_a_package_no_requirement_lists(cases: dict[str, Case]) -> None:
    """C0 names it, C1 and C4 fail on it for a literal README follower; the oracle installs it."""
    case = cases[MISSING]
    repo = _repo_dir(case)
    assert "missing-requirement" in case.spec.tags
    assert MISSING_PACKAGE in _top_level_imports(repo)
    assert MISSING_PACKAGE not in _declared(repo)
    literal = extract_commands(case.readme_text)
    # A venv, activated, then the requirements: the graded interpreter is .venv's.
    assert literal[:3] == [
        "uv venv .venv",
        ". .venv/bin/activate",
        "uv pip install -r requirements.txt",
    ], literal
    assert MISSING_PACKAGE not in case.readme_text
    assert re.search(rf"uv pip install .*\b{MISSING_PACKAGE}\b", case.golden_setup_text or "")


def test_implicit_case_needs_a_package_no_file_imports_and_no_requirement_lists(
    cases: dict[str, Case],
) -> None:
    """C0 passes (no static import of it), C1 fails for a literal README follower."""
    case = cases[IMPLICIT]
    repo = _repo_dir(case)
    assert "implicit-step" in case.spec.tags
    assert HIDDEN_PACKAGE not in _top_level_imports(repo)
    assert HIDDEN_PACKAGE not in _declared(repo)
    literal = "\n".join(extract_commands(case.readme_text))
    assert "pip install -r requirements.txt" in literal
    assert HIDDEN_PACKAGE not in literal
    assert HIDDEN_PACKAGE not in case.readme_text
    # The training path names it: the config the entry point reads builds the layer by name.
    config = repo / "configs" / "tiny.yaml"
    assert f"_target_: {HIDDEN_PACKAGE}." in config.read_text(encoding="utf-8")
    assert "configs/tiny.yaml" in (case.spec.research.entry_point or "")
    assert "importlib.import_module" in (repo / "patchvit" / "registry.py").read_text()
    # The golden setup installs it.
    assert re.search(rf"uv pip install .*\b{HIDDEN_PACKAGE}\b", case.golden_setup_text or "")


def test_other_cases_need_nothing_beyond_their_declared_requirements(
    cases: dict[str, Case],
) -> None:
    for case_id, case in cases.items():
        if case_id == IMPLICIT:
            continue
        configs = list((_repo_dir(case) / "configs").glob("*.yaml"))
        assert not any("_target_" in path.read_text(encoding="utf-8") for path in configs)
