"""The static pre-pass: the README compared with the repository before anything runs.

Each rule returns findings that name their evidence (the README's line, the manifest's field).
Rules here never execute anything; the runtime classifier (``classify``) handles what only a
command's output can show.
"""

from __future__ import annotations

import difflib
import re
from pathlib import PurePosixPath

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from .examples import python_syntax
from .findings import Finding, missing_path
from .repo_view import RepoFacts, requirement_name, requirement_spec
from .steps import (
    ReadmeStep,
    activation_path,
    is_pip_install,
    python_of,
    venv_target,
    words_of,
)
from .tool_usage import missing_link_targets, tool_usage

# Interpreter versions a README may name; the lowest one a specifier allows is the fix.
KNOWN_PYTHONS = [f"2.{m}" for m in (6, 7)] + [f"3.{m}" for m in range(3, 15)]
_CLAIM = re.compile(
    # Possessive blanks: each run lies between two words, and runs side by side that could
    # trade blanks made "python" and a long blank run cost its length squared.
    r"(?<![\w/.-])python\s*+(?:versions?\s*+)?(?:(?:are|is|:)\s++)?(?:>=|≥|v)?\s*+"
    r"(?P<ver>[23]\.\d{1,2})(?!\.?\d)"
    # A list of versions: "Tested Python versions are 2.7, 3.8 and 3.10".
    r"(?P<more>(?:\s*(?:,|and|or|&)\s*[23]\.\d{1,2}(?!\.?\d))*)"
    r"(?P<tail>\s*(?:\+|or\s+(?:newer|higher|later|above|greater)|and\s+(?:up|above|newer|later)"
    r"|or\s+later))?",
    re.IGNORECASE,
)
_HISTORY = re.compile(
    r"\b(drop(ped|s)?|no longer|remov(ed|es)|deprecat\w*|end[- ]of[- ]life|EOL|last (version|"
    r"release)|legacy|older|prior|until|before|was|were|used to|changelog)\b",
    re.IGNORECASE,
)
_URLISH = re.compile(r"https?://\S+|!\[[^\]]*\]\([^)]*\)|\bimage::\s*\S+|shields\.io\S*")


def lowest_allowed(spec: SpecifierSet) -> str | None:
    for version in KNOWN_PYTHONS:
        if spec.contains(Version(version), prereleases=True):
            return version
    return None


def allowed(spec: SpecifierSet, version: str) -> bool:
    try:
        return spec.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return True


def run_prepass(
    steps: list[ReadmeStep], facts: RepoFacts, readme_text: str, readme_name: str
) -> list[Finding]:
    findings: list[Finding] = []
    findings += _python_version(steps, facts, readme_text)
    findings += _pins_against_manifest(steps, facts, readme_text)
    findings += _undeclared_extras(steps, facts)
    findings += _install_before_environment(steps)
    findings += _before_clone(steps)
    findings += _requirements_without_r(steps, facts)
    findings += _windows_in_unix_section(steps)
    findings += _near_miss_of_project(steps, facts)
    findings += python_syntax(readme_text, readme_name)
    findings += _skipped_paths(steps, facts)
    findings += _referenced_paths(readme_text, steps, facts)
    findings += tool_usage(steps, facts)
    findings += missing_link_targets(readme_text, facts)
    return findings


# ---------------------------------------------------------------------- E7


def _python_version(steps: list[ReadmeStep], facts: RepoFacts, text: str) -> list[Finding]:
    spec = facts.python_spec()
    source = facts.requires_python_source
    declared = facts.requires_python
    floor = facts.stdlib_floor[-1] if facts.stdlib_floor else None
    if spec is None and floor is not None:
        # No declared constraint, but the code cannot run on older interpreters.
        declared = f">={floor[1]}"
        spec = SpecifierSet(declared)
        source = f"the code (`{floor[2]}` imports `{floor[0]}`, new in Python {floor[1]})"
    if spec is None:
        return []
    lowest = lowest_allowed(spec)
    if lowest is None:
        return []
    evidence: list[str] = []
    commands: list[ReadmeStep] = []
    for step in steps:
        python = python_of(step.command)
        version = python[len("python") :] if python else ""
        for match in re.finditer(r"python(?:_version)?\s*=\s*(\d\.\d+)", step.command):
            version = match.group(1)
        if re.fullmatch(r"\d\.\d+", version or "") and not allowed(spec, version):
            evidence.append(f"`{step.command}`")
            commands.append(step)
    prose = _URLISH.sub(" ", text)
    for match in _CLAIM.finditer(prose):
        listed = [match.group("ver"), *re.findall(r"[23]\.\d{1,2}", match.group("more") or "")]
        sentence = prose[max(0, match.start() - 120) : match.end() + 80]
        sentence = re.split(r"(?<=[.!?])\s|\n\s*\n", sentence)
        around = next((part for part in sentence if match.group(0) in part), "")
        if _HISTORY.search(around):
            continue  # "support for Python 2.7 was dropped": history, not a claim
        if not all(allowed(spec, version) for version in listed):
            claim = match.group(0).strip()
            if f"'{claim}'" not in evidence:
                evidence.append(f"'{claim}'")
    if not evidence:
        return []
    fixed = [
        step.command.replace(python_of(step.command) or "\0", f"python{lowest}")
        for step in commands
        if python_of(step.command)
    ]
    fix = f"Use Python {lowest} or newer, as {source} requires (`{declared}`)"
    if fixed:
        fix += ": " + "; ".join(f"`{c}`" for c in fixed)
    because = ""
    if floor is not None and source != f"the code (`{floor[2]}` imports `{floor[0]}`, new in " \
            f"Python {floor[1]})":  # fmt: skip
        because = f"; the code imports `{floor[0]}` (`{floor[2]}`), new in Python {floor[1]}"
    return [
        Finding(
            "E7",
            f"The README names a Python version the repository does not support: "
            f"{', '.join(evidence[:3])}, but {source} is `{declared}`{because}.",
            fix + ".",
            key="python-version",
            rule="static: Python version vs requires-python",
        )
    ]


def installs_project(step: ReadmeStep, facts: RepoFacts) -> bool:
    """Whether ``step`` installs this repository's project (from source or by its name)."""
    if step.kind != "install" or not is_pip_install(step.command):
        return False
    for word in words_of(step.command)[2:]:
        target = re.sub(r"\[.*$", "", word)
        if target in (".", "./") or (target and canonicalize_name(target) in facts.names):
            return True
    return False


def prose_about(readme: str, name: str) -> str:
    """The README's own sentence about ``name`` outside its code, quoted as evidence."""
    prose = re.sub(r"```.*?```", " ", readme, flags=re.DOTALL)
    for line in prose.splitlines():
        text = line.strip(" -*>#\t")
        pattern = rf"(?<![\w-]){re.escape(name)}(?![\w-])"
        if re.search(pattern, text, re.IGNORECASE) and len(text.split()) >= 4:
            return f" The README says: '{text[:160]}'."
    return ""


def _pins_against_manifest(
    steps: list[ReadmeStep], facts: RepoFacts, readme_text: str
) -> list[Finding]:
    out = []
    for step in steps:
        if step.kind != "install" or not is_pip_install(step.command):
            continue
        for word in words_of(step.command)[2:]:
            if word.startswith("-"):
                continue
            name = requirement_name(word)
            spec = requirement_spec(word)
            if not name or spec is None or name in facts.names:
                continue
            declared = facts.declared_spec(name)
            if declared is None:
                continue
            pinned = [s.version for s in spec if s.operator in ("==", "===", "<=", "~=")]
            if pinned and not any(allowed(declared[0], v.rstrip(".*")) for v in pinned):
                rest = [w for w in words_of(step.command) if w != word]
                only_pins = all(w.startswith("-") for w in rest[2:])
                installer = next(
                    (
                        s.command
                        for s in steps
                        if s.index != step.index and installs_project(s, facts)
                    ),
                    None,
                )
                out.append(
                    Finding(
                        "E7",
                        f"`{step.command}` pins `{word}`, which conflicts with the repository's "
                        f"own constraint {declared[1]}." + prose_about(readme_text, name),
                        (
                            f"Remove the `{step.command}` step"
                            if only_pins
                            else f"Run `{_join(rest)}` instead"
                        )
                        + f": the repository requires `{name}{declared[0]}`"
                        + (f", which `{installer}` already installs." if installer else "."),
                        action="drop" if only_pins else "replace",
                        commands=[] if only_pins else [_join(rest)],
                        key=f"pin:{step.index}",
                        rule="static: README pin vs declared constraint",
                    )
                )
                out[-1].move = step.index
    return out


def _join(words: list[str]) -> str:
    import shlex

    return " ".join(shlex.quote(w) if re.search(r"[\s\[\]<>*]", w) else w for w in words)


# ---------------------------------------------------------------------- E1


def _extras_of(word: str) -> tuple[str, list[str]] | None:
    match = re.match(r"^(?P<target>[\w.\-/]*)\[(?P<extras>[^\]]*)\]$", word)
    if not match:
        return None
    extras = [e.strip() for e in match.group("extras").split(",") if e.strip()]
    return match.group("target"), extras


def _undeclared_extras(steps: list[ReadmeStep], facts: RepoFacts) -> list[Finding]:
    if not facts.extras and not {"pyproject.toml", "setup.cfg"} & set(facts.manifests):
        return []
    out = []
    for step in steps:
        if step.kind != "install" or not is_pip_install(step.command):
            continue
        for word in words_of(step.command):
            parsed = _extras_of(word)
            if parsed is None:
                continue
            target, extras = parsed
            own = target in (".", "./", "") or canonicalize_name(target or "-") in facts.names
            if not own:
                continue
            unknown = [e for e in extras if e not in facts.extras]
            if not unknown or not facts.manifests:
                continue
            declared = ", ".join(f"`{e}`" for e in facts.extras) or "none"
            out.append(
                Finding(
                    "E1",
                    f"`{step.command}` asks for the extra(s) {', '.join(unknown)}, which the "
                    f"repository does not declare (declared extras: {declared}).",
                    f"Install only declared extras (declared: {declared}).",
                    key=f"extra:{unknown[0]}",
                    rule="static: extras vs manifest",
                )
            )
    return out


# ---------------------------------------------------------------------- E6


def _install_before_environment(steps: list[ReadmeStep]) -> list[Finding]:
    out = []
    for create in steps:
        target = venv_target(create.command) if create.kind == "env_create" else None
        if not target:
            continue
        activation = next(
            (
                s
                for s in steps
                if s.index > create.index
                and (activation_path(s.command) or "").startswith(target.rstrip("/") + "/")
            ),
            None,
        )
        if activation is None:
            continue
        early = [
            s
            for s in steps
            if s.kind == "install" and is_pip_install(s.command) and s.index < create.index
        ]
        for step in early:
            out.append(
                Finding(
                    "E6",
                    f"`{step.command}` runs before the virtual environment is created "
                    f"(`{create.command}`) and activated (`{activation.command}`): it installs "
                    f"into the system interpreter and `{target}` stays empty.",
                    f"Move `{step.command}` after `{create.command}` and `{activation.command}`.",
                    action="move_before",
                    move=step.index,
                    commands=[str(activation.index)],
                    key=f"order:{step.index}",
                    rule="static: install before the environment",
                )
            )
    return out


def _before_clone(steps: list[ReadmeStep]) -> list[Finding]:
    out = []
    for clone in steps:
        words = words_of(clone.command)
        if len(words) < 3 or words[:2] != ["git", "clone"]:
            continue
        args = [w for w in words[2:] if not w.startswith("-")]
        if not args:
            continue
        folder = args[1] if len(args) > 1 else PurePosixPath(args[0]).name.removesuffix(".git")
        for step in steps:
            if step.index >= clone.index:
                break
            if step.section != clone.section:
                # A clone under another heading ("Development") is another reader's path, not
                # this one's first step (python-control installs "from source" by unpacking).
                continue
            uses_repo = step.command.strip() in (f"cd {folder}", f"cd {folder}/") or (
                is_pip_install(step.command)
                and re.search(r"(\s-r\s|\s-e\s|\s\.(\s|$|\[)|setup\.py)", step.command + " ")
            )
            if uses_repo:
                out.append(
                    Finding(
                        "E6",
                        f"`{step.command}` comes before `{clone.command}`: it needs the "
                        "repository, which is not cloned yet.",
                        f"Run `{clone.command}` (and `cd {folder}`) before `{step.command}`.",
                        key=f"clone:{step.index}",
                        rule="static: step before clone",
                    )
                )
    return out


# ---------------------------------------------------------------------- E2


def _requirements_without_r(steps: list[ReadmeStep], facts: RepoFacts) -> list[Finding]:
    out = []
    for step in steps:
        if step.kind != "install" or not is_pip_install(step.command):
            continue
        words = words_of(step.command)
        for i, word in enumerate(words):
            if not re.search(r"requirements[^/\s]*\.(txt|in)$", word) or i == 0:
                continue
            if words[i - 1] in ("-r", "--requirement", "-c") or word.startswith("-"):
                continue
            fixed = step.command.replace(word, f"-r {word}", 1)
            out.append(
                Finding(
                    "E2",
                    f"`{step.command}` passes the requirements file `{word}` without `-r`: pip "
                    "takes it for a package name.",
                    f"`{fixed}`",
                    action="replace",
                    commands=[fixed],
                    move=step.index,
                    key=f"dash-r:{step.index}",
                    rule="static: requirements file without -r",
                )
            )
    return out


# ---------------------------------------------------------------------- E8


def _windows_in_unix_section(steps: list[ReadmeStep]) -> list[Finding]:
    out = []
    for step in steps:
        if step.reason != "a Windows command":
            continue
        if re.search(r"linux|unix|mac|posix|ubuntu|debian", step.section, re.IGNORECASE) and not (
            re.search(r"windows", step.section, re.IGNORECASE)
        ):
            out.append(
                Finding(
                    "E8",
                    f"`{step.command}` is a Windows command in the section '{step.section}'.",
                    "Use the POSIX form, e.g. `source venv/bin/activate` instead of "
                    "`venv\\Scripts\\activate`.",
                    key=f"windows:{step.index}",
                    rule="static: Windows command in a Unix section",
                )
            )
    return out


def _near_miss_of_project(steps: list[ReadmeStep], facts: RepoFacts) -> list[Finding]:
    """``pip install inflection`` in the README of ``inflect``: another distribution."""
    out = []
    declared = set(facts.declared())
    for step in steps:
        if step.kind != "install" or not is_pip_install(step.command):
            continue
        for word in words_of(step.command)[2:]:
            name = requirement_name(word)
            if not name or word.startswith("-") or name in facts.names or name in declared:
                continue
            for own in facts.names:
                if name.startswith(own + "-") or own.startswith(name + "-"):
                    continue  # a companion distribution (``X-gui``, ``X-plugins``)
                if difflib.SequenceMatcher(None, name, own).ratio() >= 0.8:
                    fixed = step.command.replace(word, own, 1)
                    out.append(
                        Finding(
                            "E1",
                            f"`{step.command}` installs `{name}`, a different distribution: this "
                            f"repository's project is `{own}` (its manifest's name), and nothing "
                            f"in the repository declares `{name}`.",
                            f"`{fixed}`",
                            action="replace",
                            commands=[step.command.replace(word, ".", 1)],
                            move=step.index,
                            key=f"dist:{name}",
                            rule="static: near-miss of the project's name",
                        )
                    )
    return out


def _skipped_paths(steps: list[ReadmeStep], facts: RepoFacts) -> list[Finding]:
    """Files named by steps that are not executed here (conda, docker): E4 when missing."""
    out = []
    for step in steps:
        if step.kind != "skip" or "not part of this environment" not in step.reason:
            continue
        words = words_of(step.command)
        for i, word in enumerate(words[:-1]):
            if word in ("-f", "--file", "-r", "--requirement"):
                path = words[i + 1]
                if not facts.exists(path) and not path.startswith(("http:", "https:", "$")):
                    closest = facts.closest_path(path, kind="file")
                    fix = step.command.replace(path, closest) if closest else ""
                    out.append(
                        missing_path(
                            f"`{step.command}` reads `{path}`",
                            path,
                            closest,
                            f"`{fix}`" if fix else f"Provide `{path}` or remove the step.",
                            "static: missing file named by a step not run here",
                        )
                    )
    return out


_PATHLIKE = re.compile(
    r"^(?:\./)?[A-Za-z0-9_][\w.-]*(?:/[\w.-]+)+/?$|^[\w-]+\.(?:txt|cfg|toml|ini|ya?ml|json|py|sh|in|lock|env)$"
)
_CODE_SPAN = re.compile(r"`([^`\s]+)`")


_DOCUMENT = re.compile(r"\.(?:md|rst|txt|adoc)$", re.IGNORECASE)


def _is_missing_document(path: str, facts: RepoFacts) -> bool:
    """A document under a folder the repository has, whose name is nowhere in the tree: a
    reader is sent to read a file that does not exist (ceph-ansible's `docs/QUICKSTART.md`).
    Only documents: a missing script or config may be one the reader or the build makes."""
    if "/" not in path or not _DOCUMENT.search(path):
        return False
    folder, name = path.rsplit("/", 1)
    if folder not in facts.dirs:
        return False
    lowered = name.lower()
    return not any(PurePosixPath(f).name.lower() == lowered for f in facts.files)


def _referenced_paths(text: str, steps: list[ReadmeStep], facts: RepoFacts) -> list[Finding]:
    """Repository paths the README names (in its commands or inline code) that do not exist,
    where the tree has a close match in the same place: a file moved or renamed (E4).

    Paths the commands create (``mkdir``, ``cp``, ``-o``, ``venv``) and paths under folders the
    repository does not have are left alone: those are the reader's or the build's.
    """
    if not facts.files:
        return []
    created: set[str] = set()
    for step in steps:
        words = words_of(step.command)
        if words[:1] in (["mkdir"], ["cp"], ["mv"], ["touch"], ["ln"]) and len(words) > 1:
            created.add(words[-1].rstrip("/"))
        target = venv_target(step.command)
        if target:
            created.add(target.rstrip("/"))
    tokens: list[str] = []
    for step in steps:
        # Commands the agent runs get their evidence from running (the runtime E4 rule).
        if step.kind != "skip" or "placeholder" in step.reason:
            continue
        tokens += [w for w in words_of(step.command)[1:] if not w.startswith("-")]
    prose = re.sub(r"```.*?```", " ", text, flags=re.DOTALL)
    tokens += _CODE_SPAN.findall(prose)
    out: list[Finding] = []
    seen: set[str] = set()
    for token in tokens:
        token = token.strip("'\",;:()")
        if token in seen or not _PATHLIKE.match(token) or "://" in token or token in created:
            continue
        seen.add(token)
        if any(token.startswith(c + "/") or token == c for c in created):
            continue
        path = token.removeprefix("./").rstrip("/")
        if facts.exists(path):
            continue
        first = path.split("/", 1)[0]
        top = [d for d in facts.dirs if "/" not in d]
        # Under a folder the repository has (or nearly has: ``example/`` for ``examples/``).
        anchored = (
            "/" not in path
            or first in facts.dirs
            or bool(difflib.get_close_matches(first, top, n=1, cutoff=0.8))
        )
        if not anchored:
            continue
        kind = "file" if re.search(r"\.\w{1,5}$", path) else "dir"
        best = facts.closest_path(path, kind=kind)
        if best is None and _is_missing_document(path, facts):
            out.append(
                Finding(
                    "E4",
                    f"The README refers to `{token}`, which is not in the repository: no file "
                    f"of that name is anywhere in it, though `{path.rsplit('/', 1)[0]}/` is.",
                    f"Remove the reference to `{token}`.",
                    key=f"path:{path}",
                    rule="static: referenced document missing",
                )
            )
            continue
        if best is None or best == path:
            continue
        if kind == "file" and PurePosixPath(best).suffix != PurePosixPath(path).suffix:
            continue  # another kind of file is not the one meant
        if "/" not in path:
            # A bare name is a near-miss only of a path as short as itself (`base.txt` right
            # after `requirements/base.txt` is a short mention of it, tabkit's README), and of
            # a file of a similar name (`civet.py` is not `ci/event.py`); one found in several
            # folders is named generically (each plugin's `requirements.txt`).
            name = PurePosixPath(best).name
            if difflib.SequenceMatcher(None, path, best).ratio() < 0.8:
                continue
            if difflib.SequenceMatcher(None, path, name).ratio() < 0.8:
                continue
            if sum(PurePosixPath(f).name == name for f in facts.files) > 1:
                continue
        out.append(
            Finding(
                "E4",
                f"The README refers to `{token}`, which is not in the repository; the closest "
                f"path there is `{best}`.",
                f"Use `{best}` instead of `{token}`.",
                key=f"path:{path}",
                rule="static: referenced path missing",
            )
        )
    return out
