"""The README a construction starts from: the original, adapted to set up the checkout it ships in.

Real READMEs are written for a user who has not cloned the project yet: they install the released
distribution by its PyPI name (``pip install fundus``, ``pip install adaptix==3.0.0b7``), clone the
repository first (``git clone https://github.com/o/n`` then ``cd n``), or prefix commands with
``sudo``. Followed literally inside the task container, which already holds the checkout and runs
as root without sudo, such a README tests the released wheel instead of the checkout (verify's
checkout proof rejects it) or fails before any setup. A benchmark instance whose ground truth is
"install whatever PyPI serves" is not about this revision, so each such command is rewritten, one
line at a time and recorded, into what it means for the checkout; CRLF line endings become LF
(the injectors edit single lines). Nothing else is changed: a README that still does not set the
project up is refused by the verification that follows, with its reason.
"""

from __future__ import annotations

import re
import shlex

from .facts import RepoFacts, command_lines

__all__ = ["prepare_readme"]

_PIP = re.compile(r"^(?P<pip>(?:python(?:3(?:\.\d+)?)?\s+-m\s+)?pip3?\s+install)\b(?P<rest>.*)$")
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


def _checkout_install(command: str, names: set[str]) -> str | None:
    """``pip install <project>[extras][spec] ...`` with the project's requirement made ``.``."""
    match = _PIP.match(command)
    if not match:
        return None
    try:
        words = shlex.split(match.group("rest"))
    except ValueError:
        return None
    changed = False
    out = []
    for word in words:
        req = _REQ.match(word)
        if not word.startswith("-") and req and _normal(req.group("name")) in names:
            extras = req.group("extras") or ""
            out.append(shlex.quote(f".{extras}") if extras else ".")
            changed = True
        else:
            out.append(shlex.quote(word))
    if not changed:
        return None
    return " ".join([match.group("pip"), *out])


def _clones_self(command: str, repository: str) -> str | None:
    """The folder a ``git clone`` of this very repository creates, or None."""
    match = _CLONE.match(command)
    if not match:
        return None
    url = match.group("url").lower()
    if not url.endswith("/" + repository.lower()) and not url.endswith(":" + repository.lower()):
        return None
    return match.group("dir") or repository.split("/")[-1]


def prepare_readme(
    text: str, name: str, repository: str, facts: RepoFacts
) -> tuple[str, list[str]]:
    """(the README to construct from, one line per rewrite made); unchanged text when none."""
    notes: list[str] = []
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        notes.append("line endings normalised to LF")
    lines = text.split("\n")
    names = _project_names(repository, facts)
    drop: set[int] = set()
    cloned: str | None = None
    for cmd in command_lines(text, name):
        command = cmd.command
        new = command
        if new.startswith("sudo "):
            new = new[len("sudo ") :].lstrip()
        if cloned is not None and new in (f"cd {cloned}", f"cd ./{cloned}"):
            drop.add(cmd.line)
            notes.append(f"line {cmd.line + 1}: `{command}` dropped (the checkout is the cwd)")
            cloned = None
            continue
        cloned = None
        folder = _clones_self(new, repository)
        if folder is not None:
            drop.add(cmd.line)
            cloned = folder
            notes.append(f"line {cmd.line + 1}: `{command}` dropped (the checkout is given)")
            continue
        installed = _checkout_install(new, names)
        if installed is not None:
            new = installed
        if new != command:
            lines[cmd.line] = cmd.text.replace(command, new, 1)
            notes.append(f"line {cmd.line + 1}: `{command}` -> `{new}`")
    kept = [line for index, line in enumerate(lines) if index not in drop]
    return "\n".join(kept), notes
