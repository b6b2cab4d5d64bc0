"""The requirement specifiers an install line names, read without running it: ``pip install``
(``-r`` files followed inside the repository, local ``.[extra]`` expanded, a forge URL read as
its release), ``conda``/``mamba install`` (the names PyPI shares), and the extras a Poetry, uv or
PDM install line asks for. ``test_deps`` reads these lines from CI, nox and tox.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from .files import read_text
from .project import release_for_url

_MAX_INCLUDES = 8


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements_file(repo: Path, path: Path, seen: set[Path]) -> list[str]:
    """Specifiers of a requirements file, ``-r`` includes followed inside the repository."""
    root = repo.resolve()
    try:
        resolved = path.resolve()
    except OSError:
        return []
    if path.is_symlink() or root not in resolved.parents or resolved in seen:
        return []
    if len(seen) >= _MAX_INCLUDES:
        return []
    seen.add(resolved)
    specs: list[str] = []
    for line in read_text(path).splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        match = re.match(r"^(?:-r|--requirement)\s*=?\s*(\S+)$", line)
        if match:
            specs += _requirements_file(repo, path.parent / match.group(1), seen)
        elif not line.startswith("-"):
            specs.append(line)
    return specs


# pip options whose value is the next word (``--upgrade-strategy eager``: not a distribution).
PIP_VALUE_OPTIONS = frozenset(
    {
        "-r",
        "--requirement",
        "-c",
        "--constraint",
        "-i",
        "--index-url",
        "--extra-index-url",
        "-f",
        "--find-links",
        "--upgrade-strategy",
        "--only-binary",
        "--no-binary",
        "-t",
        "--target",
        "--prefix",
        "--root",
        "--src",
        "--platform",
        "--python-version",
        "--implementation",
        "--abi",
        "--trusted-host",
        "--progress-bar",
        "--config-settings",
        "-C",
    }
)


def _pip_words(words: list[str], repo: Path, extras: dict[str, list[str]]) -> list[str]:
    """Specifiers among ``pip install`` words: ``-r`` files read, ``.[test]`` extras expanded."""
    specs: list[str] = []
    skip_next = False
    for index, word in enumerate(words):
        if skip_next:
            skip_next = False
            continue
        glued = re.match(r"^(?:-r|--requirement=)(.+)$", word)
        if (word in ("-r", "--requirement") and index + 1 < len(words)) or glued:
            target = glued.group(1) if glued else words[index + 1]
            target = target.removeprefix("{toxinidir}/")
            if not target.startswith("/") and ".." not in Path(target).parts and "{" not in target:
                specs += _requirements_file(repo, repo / target, set())
            skip_next = not glued
            continue
        if word in ("-e", "--editable") or word in PIP_VALUE_OPTIONS:
            # `--upgrade-strategy eager`: "eager" is the option's value, not a distribution.
            skip_next = word not in ("-e", "--editable")
            continue
        if word.startswith("-"):
            continue
        local = re.match(r"^\.(?:/)?\[([^\]]+)\]$", word)
        if local:
            for extra in local.group(1).split(","):
                specs += extras.get(_norm(extra.strip()), [])
            continue
        # `git+https://github.com/getnikola/nikola.git#egg=Nikola`: the sandbox reaches package
        # indexes only, so the named distribution's release stands in for the branch (the
        # Nikola plugins' conftest imports nikola: without it pytest stops before any test).
        release = release_for_url(word)
        if release:
            specs.append(release)
            continue
        if word in (".", "./") or word.startswith(("./", "/", "git+", "http:", "https:", "$")):
            continue
        specs.append(word)
    return specs


# A workflow step's title, not a command: guardrails' `- name: pip install from main` gave the
# requirements "from" and "main", and the test step's every install failed on them.
_PROSE_KEY = re.compile(r"^\s*(?:-\s+)?(?:name|description|title|label|summary)\s*:", re.I)

# A GitHub Actions expression (``${{ matrix.x }}``): not resolvable where a line is read alone.
_CI_EXPRESSION = r"\$\{\{.*?\}\}"


def _pip_line(line: str, repo: Path, extras: dict[str, list[str]]) -> list[str]:
    """Specifiers of a shell line's ``pip install``, up to the next command on the line."""
    match = re.search(r"pip3?\s+install\s+(.*)$", line)
    if not match or _PROSE_KEY.match(line):
        return []
    # CI expressions (${{ matrix.x }}) and tox substitutions cannot be resolved here.
    words = _first_command_words(match.group(1), _CI_EXPRESSION + r"|\{[^}]*\}")
    return _pip_words(words, repo, extras) if words is not None else []


# `conda install` / `mamba install` in a CI job: the Python packages among them have the same
# name on PyPI (protoletariat's conda job: `mamba install grpc-cpp grpcio-tools`, whose
# grpc_tools 14 of its tests run). A conda-only name (grpc-cpp) fails its own pip install alone.
_CONDA_INSTALL = re.compile(r"\b(?:conda|mamba|micromamba)\s+install\s+(.*)$")

_CONDA_VALUE_OPTIONS = {"-c", "--channel", "-n", "--name", "-p", "--prefix", "--file", "-f"}

_CONDA_NOT_PYPI = {"python", "pip", "compilers", "c-compiler", "cxx-compiler", "fortran-compiler"}

_CONDA_TO_PYPI = {"pytorch": "torch"}


def _conda_line(line: str) -> list[str]:
    """PEP 508 specifiers for the packages a shell line's conda (or mamba) install names."""
    match = _CONDA_INSTALL.search(line)
    if not match or _PROSE_KEY.match(line):
        return []
    words = _first_command_words(match.group(1), _CI_EXPRESSION)
    specs: list[str] = []
    skip = False
    for word in words or []:
        if skip or word.startswith("-"):
            skip = word in _CONDA_VALUE_OPTIONS
            continue
        spec = word.rsplit("::", 1)[-1]  # a channel-qualified name (conda-forge::numpy)
        found = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)(.*)", spec)
        if not found:
            continue
        name, version = _CONDA_TO_PYPI.get(found.group(1).lower(), found.group(1)), found.group(2)
        if name.lower() in _CONDA_NOT_PYPI or name.lower().startswith(("r-", "lib")):
            continue
        # conda's `=1.2` is a prefix match, pip's `==1.2.*`; a build string after it is conda's.
        single = re.fullmatch(r"=([0-9][0-9a-zA-Z.]*?)(?:\.\*)?(?:=.*)?", version)
        if single:
            version = f"=={single.group(1)}.*"
        specs.append(name + version)
    return specs


def _first_command_words(text: str, unresolvable: str) -> list[str] | None:
    """The words of ``text`` up to the next command on its line (``&&``, ``;``, a pipe), with
    what cannot be resolved here blanked and a comment dropped; None where quoting is broken."""
    text = re.sub(unresolvable, " ", text.split(" #", 1)[0])
    text = re.split(r"&&|\|\||;|\|", text, maxsplit=1)[0]
    try:
        return shlex.split(text)
    except ValueError:
        return None


# `poetry install -E all`, `poetry install --extras "a b"`, `uv sync --all-extras`: the extras
# CI installs with the project, which its conftest may import (fastapi-pagination's imports
# asyncpg, motor and cassandra from its `all` extra: without them pytest stops before any test).
_TOOL_INSTALL = re.compile(r"\b(?:poetry\s+install|uv\s+sync|pdm\s+(?:install|sync))\b(.*)$")


def _installer_extras(line: str, extras: dict[str, list[str]]) -> list[str]:
    """Specifiers of the extras a Poetry, uv or PDM install line names."""
    match = _TOOL_INSTALL.search(line)
    if not match:
        return []
    words = _first_command_words(match.group(1), _CI_EXPRESSION)
    if words is None:
        return []
    if "--all-extras" in words:
        return [spec for specs in extras.values() for spec in specs]
    names: list[str] = []
    for index, word in enumerate(words):
        value = None
        if word in ("-E", "--extras") and index + 1 < len(words):
            value = words[index + 1]
        elif word.startswith("--extras="):
            value = word.split("=", 1)[1]
        elif word.startswith("-E") and len(word) > 2:
            value = word[2:]
        if value:
            names += re.split(r"[\s,]+", value)
    return [spec for name in names if name for spec in extras.get(_norm(name), [])]


def _install_line_specs(line: str, repo: Path, extras: dict[str, list[str]]) -> list[str]:
    """Specifiers a CI or Makefile line installs: pip's, an installer's extras, conda's."""
    return _pip_line(line, repo, extras) + _installer_extras(line, extras) + _conda_line(line)
