"""Rule-based injectors: one per error type, each a minimal edit with a label right by construction.

Every rule reads the README's own command lines (as the literal ``readme`` agent runs them) and
the repository's facts (``injection_facts.py``), and proposes candidate errors; ``inject`` picks
among them with a seeded random generator, so the same seed gives the same errors. The label's
golden answer is the original command (or, for an order error, the two commands in their original
order): undoing the edit is the repair, and it restores the README that ``verify`` proved to work.
"""

from __future__ import annotations

import itertools
import random
import re
import shlex
from collections.abc import Callable

from ..repo.install_lines import PIP_VALUE_OPTIONS
from .injection_facts import CommandLine, RepoFacts, Requirement
from .models import CONSTRUCT_TYPES, ErrorLabel, Injection, LineEdit
from .prepare import SCM_VARIABLE

__all__ = ["RULES", "candidates", "inject"]

Rule = Callable[[str, list[CommandLine], RepoFacts], list[tuple[str, list[LineEdit], ErrorLabel]]]

_PIP = re.compile(r"^(?:python(?:3(?:\.\d+)?)?\s+-m\s+)?pip3?\s+install\b")
_LOCAL_TARGET = re.compile(r"""^["']?(?:\.|\./)(?:\[(?P<extras>[^\]]*)\])?["']?$""")


def _edit(cmd: CommandLine, new_command: str) -> LineEdit:
    return LineEdit(line=cmd.line, old=cmd.text, new=cmd.text.replace(cmd.command, new_command, 1))


def _label(kind: str, description: str, golden: str, *distractors: str) -> ErrorLabel:
    candidates = list(dict.fromkeys([golden, *[d for d in distractors if d and d != golden]]))
    return ErrorLabel(
        error_type=kind,
        error_description=description,
        correction_candidates=candidates,
        golden_answer=golden,
    )


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _local_install(cmd: CommandLine) -> tuple[str, list[str]] | None:
    """(the target as written, extras named) of ``pip install [-e] .[extras]``."""
    if not _PIP.match(cmd.command):
        return None
    for raw in cmd.command.split()[2:]:
        match = _LOCAL_TARGET.match(raw)
        if match:
            extras = [e.strip() for e in (match.group("extras") or "").split(",") if e.strip()]
            return raw, extras
    return None


def _installed_requirements(cmd: CommandLine, facts: RepoFacts) -> list[Requirement]:
    local = _local_install(cmd)
    if local is not None:
        reqs = list(facts.dependencies)
        for extra in local[1]:
            reqs.extend(facts.extras.get(extra, []))
        return reqs
    words = _words(cmd.command)
    reqs: list[Requirement] = []
    for flag, value in itertools.pairwise(words):
        if flag in ("-r", "--requirement"):
            reqs.extend(_pins_of(value.removeprefix("./"), facts, set()))
    return reqs


def _pins_of(path: str, facts: RepoFacts, seen: set[str]) -> list[Requirement]:
    if path in seen:
        return []
    seen.add(path)
    pins = list(facts.pinned.get(path, []))
    return pins


def _misspell(name: str, rng_index: int) -> str:
    """A deterministic misspelling: two neighbouring letters swapped (never the first)."""
    positions = [i for i in range(1, len(name) - 1) if name[i].isalpha() and name[i + 1].isalpha()]
    positions = [i for i in positions if name[i] != name[i + 1]]
    if not positions:
        return name + "x"
    i = positions[rng_index % len(positions)]
    return name[:i] + name[i + 1] + name[i] + name[i + 2 :]


_WORD = re.compile(r"\S+")


def _requirement_words(args: str) -> list[tuple[str, int, int]]:
    """The requirement words of pip install's arguments ``args`` (everything after ``install``),
    each with its span in ``args``: options, their values, paths, files and URLs left out; the
    words stop at a shell operator (``&&``, ``;``, ``|``)."""
    found: list[tuple[str, int, int]] = []
    skip = False
    for match in _WORD.finditer(args):
        word = match.group()
        if word in ("&&", "||", ";", "|") or word.startswith(("#", ">", "<")):
            break
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in PIP_VALUE_OPTIONS
            continue
        if "/" in word or word.endswith(".txt") or word.startswith((".", "$", "'", '"')):
            continue
        found.append((word, match.start(), match.end()))
    return found


# ----------------------------------------------------------------------------- E1


def rules_e1(readme: str, cmds: list[CommandLine], facts: RepoFacts) -> list:
    out = []
    for cmd in cmds:
        words = cmd.command.split()
        local = _local_install(cmd)
        reqs = _installed_requirements(cmd, facts)
        if local is not None and reqs and "--no-deps" not in words:
            new = cmd.command.replace(" install ", " install --no-deps ", 1)
            # Facts from the metadata are named, not quoted: the audit reads a quoted token as
            # erroneous text that must occur in the README.
            names = ", ".join(r.text for r in reqs[:3])
            out.append(
                (
                    "no-deps",
                    [_edit(cmd, new)],
                    _label(
                        "E1",
                        f"`{new}` installs the project without its dependencies ({names}, "
                        f"declared in {reqs[0].source.split(' ')[0]}), so they are missing.",
                        cmd.command,
                        f"{new} && pip install {reqs[0].name}",
                        new.replace("--no-deps", "--upgrade"),
                    ),
                )
            )
        if local is not None and local[1]:
            target, extras = local
            for extra in extras:
                if not facts.extras.get(extra):
                    continue
                rest = [e for e in extras if e != extra]
                quote = target[0] if target[0] in "\"'" else ""
                prefix = target.strip("\"'").split("[", 1)[0]
                new_target = f"{quote}{prefix}[{','.join(rest)}]{quote}" if rest else prefix
                new = cmd.command.replace(target, new_target, 1)
                dropped = ", ".join(r.text for r in facts.extras[extra])
                out.append(
                    (
                        f"drop-extra-{extra}",
                        [_edit(cmd, new)],
                        _label(
                            "E1",
                            f"`{new}` leaves out the `{extra}` extra, so its dependencies "
                            f"({dropped}) are not installed.",
                            cmd.command,
                            f"{new} && pip install {facts.extras[extra][0].name}",
                        ),
                    )
                )
        if words[:2] in (["apt-get", "install"], ["apt", "install"]) or words[:3] == [
            "sudo",
            "apt-get",
            "install",
        ]:
            for index, word in enumerate(words):
                if index < 2 or word.startswith("-") or word == "install":
                    continue
                wrong = _misspell(word, len(word))
                new = " ".join([*words[:index], wrong, *words[index + 1 :]])
                out.append(
                    (
                        f"misspell-system-{word}",
                        [_edit(cmd, new)],
                        _label(
                            "E1",
                            f"`{new}` names the system package `{wrong}`, which does not exist; "
                            f"the library is packaged as `{word}`.",
                            cmd.command,
                            new.replace(wrong, word + "-dev"),
                        ),
                    )
                )
        pip = _PIP.match(cmd.command)
        if pip and local is None:
            head, tail = cmd.command[: pip.end()], cmd.command[pip.end() :]
            for req, start, end in _requirement_words(tail):
                if re.fullmatch(r"[A-Za-z][A-Za-z0-9_.-]+", req):
                    wrong = _misspell(req, len(req))
                    # The word itself is replaced, never an earlier occurrence of its letters:
                    # in `python -m pip install --upgrade pip` the first "pip" is the module.
                    new = head + tail[:start] + wrong + tail[end:]
                    out.append(
                        (
                            f"misspell-{req}",
                            [_edit(cmd, new)],
                            _label(
                                "E1",
                                f"`{new}` installs `{wrong}`, a misspelling of `{req}`.",
                                cmd.command,
                            ),
                        )
                    )
    return out


# ----------------------------------------------------------------------------- E2


def rules_e2(readme: str, cmds: list[CommandLine], facts: RepoFacts) -> list:
    out = []
    for cmd in cmds:
        words = cmd.command.split()
        if _PIP.match(cmd.command):
            if "-r" in words:
                new = cmd.command.replace(" -r ", " ", 1)
                out.append(
                    (
                        "pip-missing-r",
                        [_edit(cmd, new)],
                        _label(
                            "E2",
                            f"`{new}` lacks the `-r` flag: pip reads the requirement file's "
                            "path as a package name.",
                            cmd.command,
                            new.replace(" install ", " install -e ", 1),
                        ),
                    )
                )
            local = _local_install(cmd)
            if local is not None and "-e" in words:
                new = cmd.command.replace(" -e ", " -E ", 1)
                out.append(
                    (
                        "pip-wrong-flag",
                        [_edit(cmd, new)],
                        _label(
                            "E2",
                            f"`{new}` passes `-E`, an option pip does not have; the editable "
                            "flag is lower-case `-e`.",
                            cmd.command,
                            new.replace(" -E ", " --editable=", 1),
                        ),
                    )
                )
            new = cmd.command.replace(" install", " instal", 1)
            out.append(
                (
                    "pip-subcommand",
                    [_edit(cmd, new)],
                    _label(
                        "E2",
                        f"`{new}` misspells pip's `install` subcommand.",
                        cmd.command,
                    ),
                )
            )
        elif words and words[0] in facts.scripts:
            for word in words[1:]:
                if not word.startswith("--") or "=" in word:
                    continue
                wrong = word.replace("-", "_")[:2].replace("_", "-") + word[2:].replace("-", "_")
                if wrong == word:
                    wrong = word + "s" if not word.endswith("s") else None
                if not wrong:
                    continue
                new = cmd.command.replace(word, wrong, 1)
                out.append(
                    (
                        f"cli-option-{word}",
                        [_edit(cmd, new)],
                        _label(
                            "E2",
                            f"`{new}` passes `{wrong}`, which `{words[0]}` does not accept; the "
                            f"option is spelled `{word}`.",
                            cmd.command,
                        ),
                    )
                )
    return out


# ----------------------------------------------------------------------------- E4


def _wrong_path(path: str, facts: RepoFacts) -> str | None:
    head, _, last = path.rstrip("/").rpartition("/")
    stem, dot, suffix = last.partition(".")
    options = []
    if stem:
        options.append((stem[:-1] if stem.endswith("s") else stem + "s") + dot + suffix)
    for new_last in options:
        new = f"{head}/{new_last}" if head else new_last
        if new_last and not facts.has_path(new) and new != path:
            return new
    return None


def rules_e4(readme: str, cmds: list[CommandLine], facts: RepoFacts) -> list:
    out = []
    for cmd in cmds:
        words = cmd.command.split()
        for word in words[1:]:
            bare = word.strip("\"'")
            if bare.startswith("-") or bare in (".", "./") or not facts.has_path(bare):
                continue
            wrong = _wrong_path(bare, facts)
            if wrong is None:
                continue
            new = cmd.command.replace(bare, wrong, 1)
            out.append(
                (
                    f"path-{bare}",
                    [_edit(cmd, new)],
                    _label(
                        "E4",
                        f"`{new}` refers to `{wrong}`, which does not exist in the repository; "
                        f"the file is `{bare}`.",
                        cmd.command,
                        cmd.command.replace(bare, f"./{wrong}", 1),
                    ),
                )
            )
        local = _local_install(cmd)
        if local is not None and facts.name and not facts.has_path(facts.name + "-src"):
            target = local[0]
            wrong_dir = f"./{facts.name}-src"
            new_target = target.replace(".", wrong_dir, 1) if target.strip("\"'")[0] == "." else ""
            if new_target:
                new = cmd.command.replace(target, new_target, 1)
                out.append(
                    (
                        "path-project",
                        [_edit(cmd, new)],
                        _label(
                            "E4",
                            f"`{new}` installs from `{wrong_dir}`, a folder the repository does "
                            "not have; the project is the repository root.",
                            cmd.command,
                        ),
                    )
                )
    return out


# ----------------------------------------------------------------------------- E6

_EXPORT = re.compile(r"^export\s+([A-Za-z_][A-Za-z0-9_]*)=\S")


def _provides(first: CommandLine, facts: RepoFacts) -> Callable[[CommandLine], bool] | None:
    words = first.command.split()
    if "venv" in words or (words and words[0] in ("virtualenv",)):
        env = words[-1]
        return lambda later: "activate" in later.command and env in later.command
    if words[:2] in (["apt-get", "update"], ["apt", "update"]):
        return lambda later: (
            later.command.split()[:2] in (["apt-get", "install"], ["apt", "install"])
        )
    exported = _EXPORT.match(first.command)
    if exported:
        # A variable set for what follows: the first later command that reads it, and, for the
        # version a git-versioned build is told (prepare.py adds it: the checkout has no .git),
        # the checkout install, which fails without it.
        name = exported.group(1)
        reads = re.compile(rf"\$(?:{name}\b|\{{{name}\}})")
        return lambda later: (
            bool(reads.search(later.command))
            or (name == SCM_VARIABLE and _local_install(later) is not None)
        )
    if _local_install(first) is not None:
        scripts = set(facts.scripts)
        module = facts.name.replace("-", "_")
        return lambda later: (
            bool(later.command.split())
            and (later.command.split()[0] in scripts or f"-m {module}" in later.command)
        )
    return None


def rules_e6(readme: str, cmds: list[CommandLine], facts: RepoFacts) -> list:
    out = []
    for i, first in enumerate(cmds):
        needs = _provides(first, facts)
        if needs is None:
            continue
        for later in cmds[i + 1 :]:
            if not needs(later):
                continue
            edits = [
                LineEdit(line=first.line, old=first.text, new=later.text),
                LineEdit(line=later.line, old=later.text, new=first.text),
            ]
            out.append(
                (
                    f"swap-{first.step}-{later.step}",
                    edits,
                    _label(
                        "E6",
                        f"`{later.command}` comes before `{first.command}`, which it needs: "
                        "the two steps are in the wrong order.",
                        f"{first.command}\n{later.command}",
                    ),
                )
            )
            break
    return out


# ----------------------------------------------------------------------------- E7

_LOWER = re.compile(r">=\s*([0-9][0-9A-Za-z.]*)")
_PIN = re.compile(r"==\s*([0-9][0-9A-Za-z.]*)")
_PYVER = re.compile(r"\bpython(3\.(\d+))\b")


def rules_e7(readme: str, cmds: list[CommandLine], facts: RepoFacts) -> list:
    out = []
    for cmd in cmds:
        for req in _installed_requirements(cmd, facts):
            bound = _LOWER.search(req.spec) or _PIN.search(req.spec)
            if not bound:
                continue
            conflict = f"{req.name}<{bound.group(1)}"
            new = f'{cmd.command} "{conflict}"'
            out.append(
                (
                    f"pin-{req.name}",
                    [_edit(cmd, new)],
                    _label(
                        "E7",
                        f'`{new}` pins "{conflict}", which conflicts with {req.text} '
                        f"declared in {req.source.split(' ')[0]}: no version satisfies both.",
                        cmd.command,
                        f'{cmd.command} "{req.name}=={bound.group(1)}"',
                    ),
                )
            )
        match = _PYVER.search(cmd.command)
        low = _LOWER.search(facts.requires_python)
        if match and low and cmd.command.split()[0] == match.group(0):
            minor = int(match.group(2))
            wanted = low.group(1).split(".")
            if len(wanted) >= 2 and wanted[0] == "3" and wanted[1].isdigit():
                older = min(minor, int(wanted[1])) - 2
                if older >= 6:
                    wrong = f"python3.{older}"
                    new = cmd.command.replace(match.group(0), wrong, 1)
                    out.append(
                        (
                            "python-version",
                            [_edit(cmd, new)],
                            _label(
                                "E7",
                                f"`{new}` uses Python 3.{older}, but the project requires "
                                f"Python {facts.requires_python}.",
                                cmd.command,
                            ),
                        )
                    )
    return out


# ----------------------------------------------------------------------------- E8


def rules_e8(readme: str, cmds: list[CommandLine], facts: RepoFacts) -> list:
    out = []
    in_venv = False
    for cmd in cmds:
        words = cmd.command.split()
        if "activate" in cmd.command:
            in_venv = True
        if not _PIP.match(cmd.command):
            continue
        new = f"PIP_NO_INDEX=1 {cmd.command}"
        out.append(
            (
                "env-no-index",
                [_edit(cmd, new)],
                _label(
                    "E8",
                    f"`{new}` sets the environment variable `PIP_NO_INDEX=1`, which stops pip "
                    "from reaching the package index, so nothing can be downloaded.",
                    cmd.command,
                    f"PIP_NO_INDEX=0 {cmd.command}",
                ),
            )
        )
        if in_venv and "--user" not in words:
            new = cmd.command.replace(" install ", " install --user ", 1)
            out.append(
                (
                    "user-in-venv",
                    [_edit(cmd, new)],
                    _label(
                        "E8",
                        f"`{new}` asks for a `--user` install inside the activated virtual "
                        "environment, which pip refuses.",
                        cmd.command,
                    ),
                )
            )
    return out


RULES: dict[str, Rule] = {
    "E1": rules_e1,
    "E2": rules_e2,
    "E4": rules_e4,
    "E6": rules_e6,
    "E7": rules_e7,
    "E8": rules_e8,
}


def candidates(
    repository: str, readme: str, cmds: list[CommandLine], facts: RepoFacts, error_type: str
) -> list[Injection]:
    """Every injection the rules of ``error_type`` can make, deduplicated by edit."""
    if error_type not in CONSTRUCT_TYPES:
        raise ValueError(f"error type: expected one of {', '.join(CONSTRUCT_TYPES)}")
    found: dict[str, Injection] = {}
    for rule, edits, label in RULES[error_type](readme, cmds, facts):
        if all(edit.old == edit.new for edit in edits):
            continue
        injection = Injection(
            repository=repository, injector="rules", rule=rule, edits=edits, label=label
        )
        found.setdefault(injection.key, injection)
    return list(found.values())


def inject(
    repository: str,
    readme: str,
    cmds: list[CommandLine],
    facts: RepoFacts,
    types: list[str],
    per_type: int,
    seed: int,
) -> list[Injection]:
    """Up to ``per_type`` injections of each type, picked with ``seed`` (same seed, same picks).

    Lines not yet edited by an earlier pick are preferred, so that errors compose into levels.
    """
    picked: list[Injection] = []
    used: set[int] = set()
    for error_type in types:
        pool = candidates(repository, readme, cmds, facts, error_type)
        rng = random.Random(f"{seed}:{repository}:{error_type}")
        rng.shuffle(pool)
        for _ in range(min(per_type, len(pool))):
            pool.sort(key=lambda injection: len(injection.lines & used))
            choice = pool.pop(0)
            picked.append(choice)
            used |= choice.lines
    return picked
