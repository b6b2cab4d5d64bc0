"""What a project declares for its own installation: its name, whether pip can build the
checkout, its extras and dependency groups, its Poetry dependencies and its root requirements
file (``-r`` includes followed). The reference recipe (``verify.recipes``) installs from these.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from packaging.utils import canonicalize_name

from .files import read_ini, read_pyproject, read_text
from .poetry import poetry_requirement
from .setup_py import setup_keywords
from .test_commands import _workflows
from .test_tools import _TEST_EXTRAS, _requirement_files

__all__ = [
    "INDEX_SPEC",
    "declared_name",
    "extra_names",
    "flat_requirements",
    "group_requirements",
    "installable",
    "poetry_application_requirements",
    "poetry_dependencies",
    "poetry_dependency_table",
    "poetry_git_dependencies",
    "project_name",
    "release_for_url",
    "root_requirements",
]

# A requirement pip takes from an index, with nothing a shell line could misread.
INDEX_SPEC = r"[A-Za-z0-9][A-Za-z0-9._\[\],<>=!~ -]*"


def extra_names(repo: Path) -> list[str]:
    """Names of the repository's extras (optional dependency groups), as declared."""
    names: list[str] = []
    pyproject = read_pyproject(repo)
    optional = pyproject.get("project", {}).get("optional-dependencies", {})
    if isinstance(optional, dict):
        names += [str(name) for name in optional]
    poetry_extras = pyproject.get("tool", {}).get("poetry", {}).get("extras", {})
    if isinstance(poetry_extras, dict):
        names += [str(name) for name in poetry_extras]
    setup_cfg = read_ini(read_text(repo / "setup.cfg"))
    if setup_cfg is not None and setup_cfg.has_section("options.extras_require"):
        names += [name for name, _ in setup_cfg.items("options.extras_require")]
    setup_py = read_text(repo / "setup.py")
    block = re.search(r"extras_require\s*=\s*\{(.*?)\}", setup_py, re.S)
    if block:
        names += re.findall(r"['\"]([A-Za-z0-9_.-]+)['\"]\s*:", block.group(1))
    return list(dict.fromkeys(names))


def group_requirements(repo: Path) -> list[str]:
    """Test requirements that pip cannot reach through an extra: dependency and Poetry groups."""
    specs: list[str] = []
    pyproject = read_pyproject(repo)
    groups = pyproject.get("dependency-groups", {})
    poetry = pyproject.get("tool", {}).get("poetry", {})
    tables = [groups, poetry.get("group", {}), {"dev": poetry.get("dev-dependencies")}]
    for table in tables:
        if not isinstance(table, dict):
            continue
        for name, value in table.items():
            if not _TEST_EXTRAS.match(str(name)) or str(name).lower() in ("all", "ci"):
                continue
            if isinstance(value, dict) and "dependencies" in value:
                value = value["dependencies"]
            if isinstance(value, list):
                specs += [item for item in value if isinstance(item, str)]
            elif isinstance(value, dict):
                for key, spec in value.items():
                    if key.lower() == "python":
                        continue
                    if isinstance(spec, str) or (isinstance(spec, dict) and "version" in spec):
                        specs.append(poetry_requirement(key, spec))
                    elif isinstance(spec, dict) and isinstance(spec.get("path"), str):
                        # A local test package (Poetry path dependency), inside the repository.
                        path = spec["path"]
                        if not path.startswith("/") and ".." not in Path(path).parts:
                            specs.append("./" + path.removeprefix("./"))
    pattern = rf"^(\./[A-Za-z0-9._/-]*|{INDEX_SPEC})$"
    return [spec for spec in specs if re.match(pattern, spec)]


# Where a project's CI installs its requirements file: naomi's Travis job runs
# `pip install -r python_requirements.txt` and has no requirements.txt.
_CI_FILES = (".travis.yml", ".gitlab-ci.yml", ".circleci/config.yml", "azure-pipelines.yml")


_PIP_INSTALL_R = re.compile(r"\bpip3?\s+install\b[^\n]*?\s-r\s*([A-Za-z0-9_./-]+\.txt)\b")


def root_requirements(repo: Path) -> str | None:
    """The project's own requirements file: ``requirements.txt``, else the one its CI installs
    with ``pip install -r`` (a test requirements file is installed as one elsewhere)."""
    if (repo / "requirements.txt").is_file():
        return "requirements.txt"
    tests = _requirement_files(repo)
    for ci in [*_workflows(repo), *(repo / name for name in _CI_FILES)]:
        for match in _PIP_INSTALL_R.finditer(read_text(ci)):
            rel = match.group(1).removeprefix("./")
            if rel.startswith("/") or ".." in PurePosixPath(rel).parts:
                continue
            path = repo / rel
            if path.is_file() and not path.is_symlink() and path not in tests:
                return rel
    return None


def flat_requirements(repo: Path, name: str, depth: int = 0) -> list[str]:
    """The requirements of ``name`` one per line, its ``-r`` includes (inside the repository)
    followed and ``-e`` dropped from editable lines (lnldb's requirements.txt is
    ``-r requirements_base.txt`` and a few pins); options and comments left out."""
    specs: list[str] = []
    folder = PurePosixPath(name).parent
    for raw in read_text(repo / name).splitlines():
        line = re.sub(r"(^|\s)#(?!egg=).*", "", raw).strip()
        words = line.split()
        if not words:
            continue
        if words[0] in ("-r", "--requirement") and len(words) == 2:
            included = (folder / words[1]).as_posix()
            inside = not words[1].startswith("/") and ".." not in PurePosixPath(included).parts
            if inside and depth < 5 and (repo / included).is_file():
                specs += flat_requirements(repo, included, depth + 1)
        elif words[0] in ("-e", "--editable") and len(words) == 2:
            specs.append(words[1])
        elif not line.startswith("-"):
            specs.append(line)
    # A line that is the listing's heredoc terminator would end it and run what follows.
    return [spec for spec in dict.fromkeys(specs) if spec != "ENCONDA_REQUIREMENTS"][:2000]


def declared_name(repo: Path) -> str:
    """The project's distribution name as declared (``[project]``, ``[tool.poetry]``,
    ``setup.cfg [metadata]``, setup.py's ``name=``); "" when none is."""
    pyproject = read_pyproject(repo)
    project = pyproject.get("project")
    tool = pyproject.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    name = (project.get("name") if isinstance(project, dict) else None) or (
        poetry.get("name") if isinstance(poetry, dict) else None
    )
    if not name:
        setup_cfg = read_ini(read_text(repo / "setup.cfg"))
        if setup_cfg is not None:
            name = setup_cfg.get("metadata", "name", fallback="")
    if not name:
        name = setup_keywords(read_text(repo / "setup.py")).get("name")
    return name.strip() if isinstance(name, str) else ""


def project_name(repo: Path) -> str:
    """The project's own distribution name (``declared_name``), normalised as PEP 503 does; ""
    when none is declared."""
    name = declared_name(repo)
    return canonicalize_name(name) if name else ""


def installable(repo: Path) -> bool:
    """Whether pip can install the checkout: a ``pyproject.toml`` holding only tools' settings
    (black, isort, pytest) names no package, and pip's flat-layout discovery then refuses an
    application's several top-level folders (bitcart: api, conf, modules, ...), failing setup."""
    if (repo / "setup.py").is_file():
        return True
    if (repo / "setup.cfg").is_file() and "[metadata]" in read_text(repo / "setup.cfg"):
        return True
    pyproject = read_pyproject(repo)
    tool = pyproject.get("tool", {})
    # A Poetry table alone is no package pip can build: without `[build-system]` pip falls back to
    # setuptools, which refuses an application's top-level folders (peering-manager's 14).
    return bool(
        pyproject.get("project")
        or pyproject.get("build-system")
        or (isinstance(tool, dict) and tool.get("flit"))
    )


def poetry_application_requirements(repo: Path) -> list[str] | None:
    """The ``[tool.poetry.dependencies]`` of a Poetry project pip cannot build (no
    ``[build-system]``): what ``poetry install --no-root`` would install, as pip requirements;
    ``None`` when the repository is no such project."""
    pyproject = read_pyproject(repo)
    tool = pyproject.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if not poetry or not isinstance(poetry, dict):
        return None
    if pyproject.get("build-system") or pyproject.get("project"):
        return None
    return poetry_dependencies(repo)


def poetry_dependency_table(repo: Path) -> dict[str, object]:
    """``[tool.poetry.dependencies]`` as written; empty when there is no such table."""
    tool = read_pyproject(repo).get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    dependencies = poetry.get("dependencies") if isinstance(poetry, dict) else None
    return dependencies if isinstance(dependencies, dict) else {}


def poetry_dependencies(repo: Path) -> list[str]:
    """``[tool.poetry.dependencies]`` as pip requirements from an index (path, git and URL
    sources left out); empty when there is no such table."""
    dependencies = poetry_dependency_table(repo)
    specs = [
        poetry_requirement(name, spec)
        for name, spec in dependencies.items()
        if str(name).lower() != "python"
        and isinstance(spec, (str, dict))
        and not (isinstance(spec, dict) and ("path" in spec or "git" in spec or "url" in spec))
    ]
    return [spec for spec in specs if re.fullmatch(INDEX_SPEC, spec)]


def poetry_git_dependencies(repo: Path) -> list[str]:
    """``[tool.poetry.dependencies]``'s git sources as pip direct references (``name @
    git+URL@REF``): they install where git reaches the URL (a mirror's copy, ``git_deps``)."""
    dependencies = poetry_dependency_table(repo)
    specs: list[str] = []
    for name, spec in dependencies.items():
        if not isinstance(spec, dict):
            continue
        url = spec.get("git")
        if not (isinstance(url, str) and re.fullmatch(r"https://[\w.-]+/[\w./-]+", url)):
            continue
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", str(name)):
            continue
        ref = next((spec[key] for key in ("rev", "tag", "branch") if key in spec), None)
        suffix = f"@{ref}" if isinstance(ref, str) and re.fullmatch(r"[\w./-]+", ref) else ""
        specs.append(f"{name} @ git+{url}{suffix}")
    return specs


# A fragment's parameters stop at the next "#": from every "#" of a long word the scan for "&"
# ran to its end.
_EGG = re.compile(r"#(?:[^#\n]*&)?egg=([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[A-Za-z0-9_,.-]+\])?)")


_URL_SCHEMES = ("git+", "hg+", "svn+", "bzr+", "http:", "https:")


def release_for_url(word: str) -> str | None:
    """The distribution a VCS or URL requirement names (``git+...#egg=NAME``, ``NAME @ URL``),
    whose release stands in for it: the sandbox reaches package indexes only. None when it is
    no URL requirement; "" when it names none."""
    direct = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[A-Za-z0-9_,.-]+\])?)\s*@\s*\S", word)
    if direct and "://" in word:
        return direct.group(1)
    if not word.strip().startswith(_URL_SCHEMES):
        return None
    egg = _EGG.search(word)
    return egg.group(1) if egg else ""
