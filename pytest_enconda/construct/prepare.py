"""The README a construction starts from: the original, adapted to set up the checkout it ships in.

Real READMEs are written for a user who has not cloned the project yet: they install the released
distribution by its PyPI name (``pip install fundus``, ``pip install adaptix==3.0.0b7``), clone the
repository first (``git clone https://github.com/o/n`` then ``cd n``), or prefix commands with
``sudo``. Followed literally inside the task container, which already holds the checkout and runs
as root without sudo, such a README tests the released wheel instead of the checkout (verify's
checkout proof rejects it) or fails before any setup. A benchmark instance whose ground truth is
"install whatever PyPI serves" is not about this revision, so each such command is rewritten, one
line at a time and recorded, into what it means for the checkout: an editable install of it
(``pip install -e .``: the tests run from the checkout, and some read files beside the package,
as fundus's do); CRLF line endings become LF
(the injectors edit single lines). A checkout has no ``.git``: a project whose version comes from
git (setuptools-scm, hatch-vcs) cannot be built from it, so when the README installs the checkout
of such a project, ``export SETUPTOOLS_SCM_PRETEND_VERSION=<the revision's last tag>`` is added
on a line of its own before the first install (what a clone would have told the build). Nothing
else is changed: a README that still does not set the
project up is refused by the verification that follows, with its reason.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from ..agents.readme_commands import extract_commands
from ..repo.vcs_version import CONFIG_FILES, named_tools
from .injection_facts import RepoFacts, read_repo_file

__all__ = ["SCM_VARIABLE", "prepare_readme", "scm_versioned"]

_PIP = re.compile(r"^(?P<pip>(?:python(?:3(?:\.\d+)?)?\s+-m\s+)?pip3?\s+install)\b(?P<rest>.*)$")
# pipx installs an application from PyPI into its own venv; for the checkout, that is pip's job
# (pipx is not in the task image either).
_PIPX = re.compile(r"^pipx\s+(?P<verb>install|upgrade)\b(?P<rest>.*)$")
# From the start of a blank run only: from each blank of a long run the rest was rescanned.
_COMMENT = re.compile(r"(?<!\s)\s+#.*$")
# A requirement naming a distribution: name, optional extras, optional version specifier.
_REQ = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?P<extras>\[[^\]]*\])?"
    r"(?P<spec>(?:[<>=!~]=?|===)[^\s]*)?$"
)
_CLONE = re.compile(r"^git\s+clone\s+(?:--\S+\s+)*(?P<url>\S+?)(?:\.git)?/?(?:\s+(?P<dir>\S+))?$")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _project_names(repository: str, facts: RepoFacts) -> set[str]:
    names = {_normal(repository.split("/")[-1])}
    if facts.name:
        names.add(_normal(facts.name))
    return names


def _is_self_url(url: str, repository: str) -> bool:
    url = url.lower().removesuffix("/").removesuffix(".git")
    return url.endswith("/" + repository.lower()) or url.endswith(":" + repository.lower())


_SELF_ARCHIVE = re.compile(
    r"^(?:git\+)?https?://github\.com/(?P<repo>[\w.-]+/[\w.-]+?)(?:\.git)?"
    r"(?:/(?:tarball|zipball|archive)/\S*|@\S*)?(?:#egg=\S*)?/?$",
    re.IGNORECASE,
)


def _is_self_archive(word: str, repository: str) -> bool:
    match = _SELF_ARCHIVE.match(word)
    return bool(match) and match.group("repo").lower() == repository.lower()


def _checkout_install(command: str, names: set[str], repository: str) -> str | None:
    """``pip install <project>[extras][spec] ...`` (or ``pipx install``/``upgrade``) with the
    project's requirement, or a direct reference to this repository, made the checkout ``.``."""
    pip = _PIP.match(command)
    pipx = _PIPX.match(command)
    if pip:
        head, rest = pip.group("pip"), pip.group("rest")
    elif pipx:
        head = "pip install" + (" --upgrade" if pipx.group("verb") == "upgrade" else "")
        rest = pipx.group("rest")
    else:
        return None
    comment = _COMMENT.search(rest) if "#" in rest else None
    if comment is not None:
        rest = rest[: comment.start()]
    try:
        words = shlex.split(rest)
    except ValueError:
        return None
    changed = False
    out = []
    for word in words:
        if _is_self_archive(word, repository):
            out += ["-e", "."]  # this repository's code fetched from GitHub: the checkout
            changed = True
            continue
        # ``name[extras] @ git+https://github.com/<this repository>`` is this checkout too.
        name_part, _, url = word.partition(" @ ")
        req = _REQ.match(name_part.strip())
        is_self = not url or _is_self_url(url.strip().removeprefix("git+"), repository)
        if not word.startswith("-") and req and is_self and _normal(req.group("name")) in names:
            extras = req.group("extras") or ""
            out += ["-e", shlex.quote(f".{extras}") if extras else "."]
            changed = True
        else:
            out.append(shlex.quote(word))
    if not changed:
        return None
    return " ".join([head, *out]) + (comment.group(0) if comment is not None else "")


def _clones_self(command: str, repository: str) -> str | None:
    """The folder a ``git clone`` of this very repository creates, or None."""
    match = _CLONE.match(command)
    if not match:
        return None
    if not _is_self_url(match.group("url"), repository):
        return None
    return match.group("dir") or repository.split("/")[-1]


_CHECKOUT_TARGET = re.compile(r"""(?:^|\s)["']?\.(?:\[[^\]]*\])?["']?(?:\s|$)""")
SCM_VARIABLE = "SETUPTOOLS_SCM_PRETEND_VERSION"


def _installs_checkout(command: str) -> bool:
    match = _PIP.match(command)
    return bool(match) and bool(_CHECKOUT_TARGET.search(_COMMENT.sub("", match.group("rest"))))


def prepare_readme(
    text: str,
    name: str,
    repository: str,
    facts: RepoFacts,
    scm_version: str | None = None,
) -> tuple[str, list[str]]:
    """(the README to construct from, one line per rewrite made); unchanged text when none.
    ``scm_version``: the project's version comes from git, and this is the one to pretend."""
    notes: list[str] = []
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        notes.append("line endings normalised to LF")
    lines = text.split("\n")
    names = _project_names(repository, facts)
    drop: set[int] = set()
    cloned: str | None = None
    start = 0
    for command in extract_commands(text, name):
        # The line that holds it (a command in inline code shares its line with prose).
        index = next((i for i in range(start, len(lines)) if command in lines[i]), None)
        if index is None:
            continue
        start = index + 1
        new = command
        if new.startswith("sudo "):
            new = new[len("sudo ") :].lstrip()
        if cloned is not None and new in (f"cd {cloned}", f"cd ./{cloned}"):
            drop.add(index)
            notes.append(f"line {index + 1}: `{command}` dropped (the checkout is the cwd)")
            cloned = None
            continue
        cloned = None
        folder = _clones_self(new, repository)
        if folder is not None and lines[index].strip().endswith(command):
            drop.add(index)
            cloned = folder
            notes.append(f"line {index + 1}: `{command}` dropped (the checkout is given)")
            continue
        installed = _checkout_install(new, names, repository)
        if installed is not None:
            new = installed
        if new != command:
            lines[index] = lines[index].replace(command, new, 1)
            notes.append(f"line {index + 1}: `{command}` -> `{new}`")
    if scm_version and f"{SCM_VARIABLE}=" not in text:
        for command in extract_commands("\n".join(lines), name):
            if not _installs_checkout(command):
                continue
            index = next(i for i, line in enumerate(lines) if command in line and i not in drop)
            prefix = lines[index][: lines[index].index(command)]
            export = f"export {SCM_VARIABLE}={shlex.quote(scm_version)}"
            lines.insert(index, prefix + export)
            drop = {i + 1 if i >= index else i for i in drop}
            notes.append(f"line {index + 1}: `{export}` added (the checkout has no .git)")
            break
    kept = [line for index, line in enumerate(lines) if index not in drop]
    return "\n".join(kept), notes


def scm_versioned(repo: Path) -> bool:
    """Whether the project's version is computed from git metadata by a tool that
    ``SCM_VARIABLE`` gives one to (setuptools-scm, hatch-vcs: rows of ``VERSION_TOOLS``)."""
    # Bounded, never through a link; "" when absent.
    config = "\n".join(read_repo_file(repo / name) for name in CONFIG_FILES)
    return any(SCM_VARIABLE in tool.variables for tool in named_tools(config))
