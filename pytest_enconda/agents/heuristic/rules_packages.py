"""Rules for installing packages: pip's refusals (invalid requirements, files, distributions,
Python ranges, conflicts), Debian's packages and libraries, and the modules (E1) a command could
not import."""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Callable

from packaging.utils import canonicalize_name

from .classify_context import Context, closest, installs, replace_word
from .findings import Finding
from .repo_view import IMPORT_NAMES, RepoFacts, requirement_name
from .steps import is_pip_install, words_of

_NO_MODULE = re.compile(r"No module named '?(?P<module>[\w.]+)'?")
_LIBRARY = re.compile(
    r"failed to find lib(?P<a>[\w+-]+)|lib(?P<b>[\w+-]+?)(?:[\d.-]*)\.so[\d.]*: cannot open shared "
    r"object file|Unable to find lib(?P<c>[\w+-]+)|cannot find -l(?P<d>[\w+-]+)"
)

_NO_DIST = re.compile(
    r"Could not find a version that satisfies the requirement (?P<req>\S+)"
    r"(?: \(from versions: (?P<versions>[^)]*)\))?"
)
_PY_REQ = re.compile(r"requires a different Python: (?P<have>\S+) not in '(?P<spec>[^']+)'")


# ---------------------------------------------------------------------- pip


def invalid_requirement(step, command, output, ctx: Context):
    match = re.search(r"Invalid requirement: '(?P<req>[^']*)'", output)
    if not match or not is_pip_install(command):
        return None
    words = words_of(command)
    joined: list[str] = []
    for word in words:
        if joined and joined[-1].count("[") > joined[-1].count("]"):
            joined[-1] += word
        else:
            joined.append(word)
    if joined != words:
        fixed = " ".join(f'"{w}"' if "[" in w else w for w in joined)
        return Finding(
            "E2",
            f"`{command}` has a space inside an unquoted extras list: the shell splits it and "
            f"pip rejects '{match.group('req')}' (Invalid requirement).",
            f"`{fixed}`",
            action="replace",
            commands=[fixed],
            key=f"syntax:{step.index}",
            rule="pip: extras split by the shell",
        )
    target = match.group("req")
    if target.endswith((".txt", ".in")) and ctx.facts.exists(target, ctx.cwd):
        fixed = replace_word(command, target, f"-r {target}")
        return Finding(
            "E2",
            f"`{command}` passes the requirements file `{target}` without `-r`.",
            f"`{fixed}`",
            action="replace",
            commands=[fixed],
            key=f"dash-r:{step.index}",
            rule="pip: requirements file without -r",
        )
    return Finding(
        "E2",
        f"`{command}`: pip rejects '{target}' as an invalid requirement.",
        f"Write '{target}' as a valid requirement.",
        key=f"syntax:{step.index}",
        rule="pip: invalid requirement",
    )


def _family_choice(facts: RepoFacts, pool: list[str]) -> list[str]:
    """Requirement files ranked: those that include the others first (the superset), then the
    most requirements, then the shallowest."""

    def rank(path: str) -> tuple[int, int, int, str]:
        includes = len(facts.requirement_includes.get(path, []))
        return (-includes, -len(facts.requirement_files.get(path, [])), path.count("/"), path)

    return sorted(pool, key=rank)


def requirements_file(step, command, output, ctx: Context):
    match = re.search(r"Could not open requirements file: .*?'(?P<path>[^']+)'", output)
    if not match:
        return None
    missing = match.group("path")
    facts = ctx.facts
    pool = list(facts.requirement_files)
    near = [
        p
        for p in pool
        if difflib.SequenceMatcher(None, missing, p).ratio() >= 0.5
        or p.rsplit("/", 1)[-1] == missing.rsplit("/", 1)[-1]
    ]
    best = _family_choice(facts, near)[0] if near else None
    if best is None:
        return Finding(
            "E4",
            f"`{command}` reads `{missing}`, which is not in the repository.",
            f"Remove `-r {missing}` or add the file.",
            action="drop",
            key=f"path:{missing}",
            rule="pip: requirements file missing",
        )
    fixed = replace_word(command, missing, best)
    return Finding(
        "E4",
        f"`{command}` reads `{missing}`, which does not exist: pip fails with 'Could not open "
        f"requirements file'. The repository keeps its requirements in {', '.join(sorted(near))}.",
        f"`{fixed}`",
        action="replace",
        commands=[fixed],
        key=f"path:{missing}",
        rule="pip: requirements file missing",
    )


def not_a_project(step, command, output, ctx: Context):
    match = re.search(r"'?(?P<path>[^'\s]*)'? does not appear to be a Python project", output)
    if not match:
        return None
    folder = match.group("path")
    facts = ctx.facts
    projects = sorted(
        {f.rsplit("/", 1)[0] if "/" in f else "." for f in facts.files if f.endswith(
            ("setup.py", "pyproject.toml"))},
        key=lambda p: (p.count("/"), p),
    )  # fmt: skip
    best = closest(folder.rstrip("/").split("/")[-1], projects, 0.3) or (
        projects[0] if projects else None
    )
    if best is None:
        return None
    arg = next((w for w in words_of(command) if folder.rstrip("/").endswith(w.rstrip("/"))), "")
    fixed = replace_word(command, arg, best) if arg else command
    return Finding(
        "E4",
        f"`{command}` installs from `{folder}`, which has no setup.py or pyproject.toml.",
        f"`{fixed}`",
        action="replace",
        commands=[fixed],
        key=f"path:{folder}",
        rule="pip: not a Python project",
    )


def no_distribution(step, command, output, ctx: Context):
    match = _NO_DIST.search(output)
    if not match or not is_pip_install(command):
        return None
    req = match.group("req")
    name = requirement_name(req) or req
    versions = (match.group("versions") or "none").strip()
    facts = ctx.facts
    word = next((w for w in words_of(command) if requirement_name(w) == name), req)
    if versions != "none":
        fixed = replace_word(command, word, re.split(r"[<>=!~;\[]", word)[0])
        return Finding(
            "E7",
            f"`{command}` asks for `{req}`, a version the index does not have (available: "
            f"{versions[-120:]}).",
            f"`{fixed}`",
            action="replace",
            commands=[fixed],
            key=f"version:{name}",
            rule="pip: no such version",
        )
    declared = sorted(set(facts.declared()) | set(facts.names))
    best = closest(name, declared, 0.6)
    if best in facts.names or (best is None and closest(name, facts.names, 0.5)):
        fixed = replace_word(command, word, ".")
        return Finding(
            "E1",
            f"`{command}`: the package index has no distribution `{name}` (pip: 'No matching "
            f"distribution found'); the project in this repository is `{facts.names[0]}`.",
            f"Install the project from source: `{fixed}`.",
            action="replace",
            commands=[fixed],
            key=f"dist:{name}",
            rule="pip: no such distribution (own project)",
        )
    if best is not None:
        fixed = replace_word(command, word, word.replace(req.split("[")[0], best, 1))
        return Finding(
            "E1",
            f"`{command}`: the package index has no distribution `{name}` (pip: 'No matching "
            f"distribution found'); the repository declares `{best}`.",
            f"`{fixed}`",
            action="replace",
            commands=[fixed],
            key=f"dist:{name}",
            rule="pip: no such distribution",
        )
    rest = [w for w in words_of(command) if w != word]
    only = all(w.startswith("-") for w in rest[2:])
    return Finding(
        "E1",
        f"`{command}`: the package index has no distribution `{name}`, and the repository "
        "declares nothing like it.",
        f"Remove `{name}` from the install command.",
        action="drop" if only else "replace",
        commands=[] if only else [shlex.join(rest)],
        key=f"dist:{name}",
        rule="pip: no such distribution (undeclared)",
    )


def broken_distribution(step, command, output, ctx: Context):
    """``pip install py.test``: the name exists on the index but does not build (a placeholder
    or a squatted name), and the repository declares a distribution of nearly that name."""
    if not is_pip_install(command) or not re.search(
        r"metadata-generation-failed|Failed to build|subprocess-exited-with-error", output
    ):
        return None
    facts = ctx.facts
    declared = sorted(set(facts.declared()))
    for word in words_of(command)[2:]:
        name = requirement_name(word)
        if not name or word.startswith("-") or name in declared or name in facts.names:
            continue
        best = closest(name, declared, 0.75)
        if best is None or best == name:
            continue
        fixed = replace_word(command, word, best)
        return Finding(
            "E1",
            f"`{command}` installs `{word}`, which fails to build (pip: 'metadata-generation-"
            f"failed'); the repository declares `{best}`, the package that was meant.",
            f"`{fixed}`",
            action="replace",
            commands=[fixed],
            key=f"dist:{name}",
            rule="pip: a near-miss name that does not build",
        )
    return None


def python_requirement(step, command, output, ctx: Context):
    match = _PY_REQ.search(output)
    if not match:
        return None
    return Finding(
        "E7",
        f"`{command}` runs with Python {match.group('have')}, but the package requires "
        f"`{match.group('spec')}` (pip: '{match.group(0)}').",
        f"Use a Python interpreter that satisfies `{match.group('spec')}`.",
        key="python-version",
        rule="pip: requires a different Python",
    )


def resolution(step, command, output, ctx: Context):
    if not re.search(r"ResolutionImpossible|conflicting dependencies|version conflict", output):
        return None
    pinned = [
        w for w in words_of(command)[2:] if not w.startswith("-") and re.search(r"[=<>~]=?\d", w)
    ]
    rest = [w for w in words_of(command) if w not in pinned]
    fixed = shlex.join(rest)
    return Finding(
        "E7",
        f"`{command}`: pip cannot resolve the requested versions (ResolutionImpossible)"
        + (f"; the README pins {', '.join(pinned)}." if pinned else "."),
        f"`{fixed}`" if pinned else "Relax the conflicting version pins.",
        action="replace" if pinned else "none",
        commands=[fixed] if pinned else [],
        key="conflict",
        rule="pip: conflicting versions",
    )


# ---------------------------------------------------------------------- system packages


def apt_locate(step, command, output, ctx: Context):
    match = re.search(r"Unable to locate package (?P<pkg>\S+)", output)
    if not match:
        return None
    package = match.group("pkg")
    if not ctx.apt_updated:
        for later in ctx.later(step.index):
            if later.kind == "apt_update":
                return Finding(
                    "E6",
                    f"`{command}` runs before `{later.command}`: on a fresh system the package "
                    f"lists are empty and apt fails with 'Unable to locate package {package}'.",
                    f"Run `{later.command}` before `{command}`.",
                    action="move_before",
                    move=later.index,
                    key=f"order:{later.index}",
                    rule="apt install before update",
                )
        return Finding(
            None,
            "the package lists of a fresh system are empty",
            "apt-get update",
            action="prepend",
            commands=["apt-get update"],
            key="apt-update",
            rule="apt lists empty",
        )
    code, names = ctx.probe("apt-cache pkgnames")
    best = closest(package, names.split(), 0.6) if code == 0 else None
    fixed = replace_word(command, package, best) if best else command
    return Finding(
        "E1",
        f"`{command}`: Debian has no package `{package}` ('Unable to locate package')"
        + (f"; the closest is `{best}`." if best else "."),
        f"`{fixed}`" if best else f"Remove `{package}`.",
        action="replace" if best else "none",
        commands=[fixed] if best else [],
        key=f"apt:{package}",
        rule="apt: no such package",
    )


def system_package_for(library: str, probe: Callable[[str], tuple[int | None, str]]) -> str | None:
    code, text = probe(f"apt-cache pkgnames lib{library} 2>/dev/null | sort || true")
    names = text.split() if code == 0 else []
    runtime = [n for n in names if re.fullmatch(rf"lib{re.escape(library)}[\d.]+", n)]
    if runtime:
        return runtime[0]
    dev = f"lib{library}-dev"
    return dev if dev in names else None


def missing_library(step, command, output, ctx: Context):
    match = _LIBRARY.search(output)
    if not match:
        return None
    library = next(g for g in match.groups() if g)
    if not ctx.apt_updated:
        ctx.probe("apt-get update -qq")
        ctx.apt_updated = True
    package = system_package_for(library, ctx.probe)
    if package is None:
        return Finding(
            "E1",
            f"`{command}` needs the system library lib{library} ('{match.group(0)}'), which the "
            "README never installs.",
            f"Install the system package that provides lib{library}.",
            key=f"lib:{library}",
            rule="missing system library",
        )
    install = f"apt-get update && apt-get install -y {package}"
    return Finding(
        "E1",
        f"`{command}` fails with '{match.group(0)}': the Python package only wraps the system "
        f"library lib{library}, which the README never installs.",
        f"`{install}`",
        action="append",
        commands=[install],
        key=f"lib:{library}",
        rule="missing system library",
    )


# ---------------------------------------------------------------------- E1: modules


def missing_module(step, command, output, ctx: Context):
    match = _NO_MODULE.search(output)
    if not match:
        return None
    module = match.group("module")
    top = module.split(".")[0]
    facts = ctx.facts
    if top in facts.packages:
        for later in ctx.later(step.index):
            if installs(later, facts, ""):
                return Finding(
                    "E6",
                    f"`{command}` runs before `{later.command}` installs the project "
                    f"('No module named {module}').",
                    f"Run `{later.command}` before `{command}`.",
                    action="defer" if step.kind in ("usage", "test") else "move_before",
                    move=later.index,
                    key=f"order:{later.index}",
                    rule="used before installed",
                )
        return Finding(
            "E1",
            f"`{command}` fails with 'No module named {module}': no README step installs the "
            "project itself.",
            "Install the project from the repository: `pip install -e .`.",
            action="append",
            commands=["pip install -e ."],
            key="install-project",
            rule="project never installed",
        )
    return missing_distribution(command, module, f"No module named '{module}'", ctx)


def missing_distribution(command: str, module: str, evidence: str, ctx: Context):
    """A module or distribution the run needs: from the group that declares it, if any."""
    facts = ctx.facts
    groups = facts.groups_providing(module)
    installed_groups = _installed_groups(ctx)
    groups = [g for g in groups if g not in installed_groups]
    if groups:
        kind, group = groups[0]
        install, replaced = _install_group(kind, group, ctx)
        where = f"the extra `{group}`" if kind == "extra" else f"`{group}`"
        return Finding(
            "E1",
            f"`{command}` fails with '{evidence}': it is declared in {where}, which the README's "
            "installation does not install.",
            f"`{install}`",
            action="replace" if replaced is not None else "append",
            commands=[install],
            move=replaced,
            key=f"dep:{kind}:{group}",
            rule="dependency declared but not installed",
        )
    top = module.split(".")[0]
    dist = IMPORT_NAMES.get(top.lower(), top)
    if top == "pytest":
        return Finding(
            None,
            "the repository's tests need pytest, which it declares nowhere",
            "pip install pytest",
            action="append",
            commands=["pip install pytest"],
            key="dep:pytest",
            rule="test runner missing",
        )
    return Finding(
        "E1",
        f"`{command}` fails with '{evidence}': the README never installs `{dist}`.",
        f"`pip install {dist}`",
        action="append",
        commands=[f"pip install {dist}"],
        key=f"dep:{dist}",
        rule="dependency missing",
    )


def _installed_groups(ctx: Context) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for index in ctx.done:
        command = ctx.steps[index].final or ""
        for word in words_of(command):
            match = re.match(r"^[\w.\-/]*\[(?P<extras>[^\]]*)\]$", word)
            if match:
                out |= {("extra", e.strip()) for e in match.group("extras").split(",")}
        for match in re.finditer(r"(?:-r|--requirement)\s*=?\s*(\S+)", command):
            out.add(("file", match.group(1)))
    return out


def _install_group(kind: str, group: str, ctx: Context) -> tuple[str, int | None]:
    """The install command that adds ``group``: the README's own install, widened, if any."""
    facts = ctx.facts
    for index in reversed(ctx.done):
        step = ctx.steps[index]
        command = step.final or ""
        if not is_pip_install(command):
            continue
        if kind == "extra":
            for word in words_of(command):
                match = re.match(r"^(?P<t>\.|\./|[\w.-]+)\[(?P<extras>[^\]]*)\]$", word)
                if match and (match.group("t") in (".", "./") or
                              canonicalize_name(match.group("t")) in facts.names):  # fmt: skip
                    have = [e.strip() for e in match.group("extras").split(",") if e.strip()]
                    order = list(facts.extras)
                    wanted = sorted(
                        set(have) | {group}, key=lambda e: order.index(e) if e in order else 99
                    )
                    new = f'"{match.group("t")}[{",".join(wanted)}]"'
                    return _swap(command, word, new), index
        else:
            for match in re.finditer(r"(?:-r|--requirement)\s*=?\s*(\S+)", command):
                old = match.group(1)
                old_reqs = set(facts.requirement_files.get(old, []))
                new_reqs = set(facts.requirement_files.get(group, []))
                if old_reqs <= new_reqs:
                    return command.replace(old, group, 1), index
    if kind == "extra":
        return f'pip install -e ".[{group}]"', None
    return f"pip install -r {group}", None


def _swap(command: str, word: str, new: str) -> str:
    """Replace the shell word ``word`` (however it was quoted in ``command``) with ``new``."""
    for quoted in (f'"{word}"', f"'{word}'", word):
        if quoted in command:
            return command.replace(quoted, new, 1)
    return command
