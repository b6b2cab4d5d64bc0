"""The failure classifier: a command's output (and the README around it) → an error type and a
repair, by evidence. Each rule names what it saw in the finding it returns.

Rules look at the command as run, its exit status and output; ``Context`` gives them the
repository's facts, the README's steps and a way to ask the container (``--help``, ``apt-cache``).
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from packaging.utils import canonicalize_name

from ...repo.vcs_version import PRETEND_VERSION, VERSION_TOOLS, throwaway_git
from .facts import IMPORT_NAMES, RepoFacts, requirement_name
from .findings import Finding
from .prepass import allowed, lowest_allowed, prose_about
from .steps import ReadmeStep, is_pip_install, venv_target, words_of


@dataclass
class Context:
    facts: RepoFacts
    steps: list[ReadmeStep]
    # Indices of steps already run (in the order they ran).
    done: list[int]
    cwd: str
    probe: Callable[[str], tuple[int | None, str]]
    readme_text: str
    attempted: set[int] = field(default_factory=set)
    apt_updated: bool = False
    pythons: list[str] = field(default_factory=list)

    def later(self, index: int) -> list[ReadmeStep]:
        """Steps not run yet (a step that ran and failed is no remedy for another)."""
        return [
            s
            for s in self.steps
            if s.index not in self.attempted and s.index != index and s.kind != "skip"
        ]


_NOT_FOUND = re.compile(r"(?:^|\n)(?:bash: )?(?:line \d+: )?(?P<tool>[\w.+-]+): command not found")
# Starting only where a word starts: from inside a long word each start rescanned it to its end.
_ACTIVATE_MISSING = re.compile(r"(?<!\S)(?P<path>\S*bin/activate): No such file or directory")
_NO_MODULE = re.compile(r"No module named '?(?P<module>[\w.]+)'?")
_LIBRARY = re.compile(
    r"failed to find lib(?P<a>[\w+-]+)|lib(?P<b>[\w+-]+?)(?:[\d.-]*)\.so[\d.]*: cannot open shared "
    r"object file|Unable to find lib(?P<c>[\w+-]+)|cannot find -l(?P<d>[\w+-]+)"
)
_OPTION = re.compile(
    r"No such option:? '?(?P<a>-[\w-]+)'?|no such option:? '?(?P<b>-[\w-]+)'?|"
    r"unrecognized arguments?: (?P<c>\S+)|unknown option:? '?(?P<d>-[\w-]+)'?|"
    r"[Uu]nrecognized option:? '?(?P<e>-[\w-]+)'?|unexpected argument '(?P<f>-[\w-]+)'|"
    r"option (?P<g>-[\w-]+) not recognized|invalid option -- '?(?P<h>\w)'?"
)
_CHOICE = re.compile(r"invalid choice: '(?P<bad>[^']+)' \(choose from (?P<choices>[^)]*)\)")
_NO_COMMAND = re.compile(r"No such command '?(?P<bad>[\w-]+)'?")
# A program naming the subcommand it did not know and the one it takes it for: pip's
# 'unknown command "install:" - maybe you meant "install"' (astropy/extension-helpers' README),
# git's "'stauts' is not a git command ... The most similar command is\n\tstatus".
_MEANT = re.compile(
    r'unknown command "(?P<pip>[^"]+)" - maybe you meant "(?P<pip_good>[^"]+)"'
    # git's hint follows within a line or two: an unbounded lazy gap rescanned the rest of the
    # text from every "is not a git command".
    r"|'(?P<git>[^']+)' is not a git command\..{0,500}?most similar commands? (?:is|are)\s+"
    r"(?P<git_good>[\w-]+)",
    re.DOTALL,
)
_SUGGEST = re.compile(r"Did you mean '?(?P<s>-{0,2}[\w-]+)'?\?|Possible options: (?P<p>[^)\n]+)")
_MISSING_FILE = re.compile(
    r"(?:No such file or directory|does not exist|can't open file|cannot access|not found)"
    r"(?::|,)?\s*'?(?P<path>[^'\s:]*)'?",
    re.IGNORECASE,
)
_QUOTED_PATH = re.compile(r"['\"](?P<path>[^'\"\s]+)['\"]")
_INCOMPATIBLE = re.compile(
    # From a word's start, and the specifier within its line: each start inside a word, or each
    # "requires" before a comma far away, rescanned to the end.
    r"(?<!\S)(?P<owner>\S+) \S+ requires (?P<req>[A-Za-z0-9._-]+)(?P<spec>[^,\n]{0,200}), "
    r"but you have "
    r"(?P<name>[A-Za-z0-9._-]+) (?P<have>\S+) which is incompatible"
)
_NO_DIST = re.compile(
    r"Could not find a version that satisfies the requirement (?P<req>\S+)"
    r"(?: \(from versions: (?P<versions>[^)]*)\))?"
)
_PY_REQ = re.compile(r"requires a different Python: (?P<have>\S+) not in '(?P<spec>[^']+)'")


def _flags(help_text: str) -> list[str]:
    found = re.findall(r"(?:^|[\s,\[|])(--[A-Za-z][\w-]*|-[A-Za-z])\b", help_text)
    return sorted(set(found) - {"-h", "--help"}, key=found.index)


def closest(bad: str, candidates: list[str], cutoff: float = 0.4) -> str | None:
    if not candidates:
        return None
    prefixed = [c for c in candidates if bad.startswith(c) or c.startswith(bad)]
    longest = sorted(prefixed, key=len, reverse=True)
    if longest and len(longest[0]) > 2:
        return longest[0]
    matches = difflib.get_close_matches(bad, candidates, n=1, cutoff=cutoff)
    return matches[0] if matches else None


def program_words(command: str) -> list[str]:
    """``tabkit head`` of ``tabkit head data/x.csv --lines 3``: the program and its subcommands
    (``python cli.py sub`` and ``python -m pkg sub`` keep the script or module)."""
    words = words_of(command)
    out: list[str] = []
    if words and re.fullmatch(r"python\d?(?:\.\d+)?", words[0]):
        if len(words) > 2 and words[1] == "-m":
            out, words = words[:3], words[3:]
        elif len(words) > 1 and words[1].endswith(".py"):
            out, words = words[:2], words[2:]
        else:
            return words[:1]
    for word in words:
        if word.startswith("-") or "/" in word or "." in word[1:] or "=" in word or word.isdigit():
            break
        out.append(word)
        if len(out) >= 3:
            break
    return out


def replace_word(command: str, old: str, new: str) -> str:
    pattern = rf"(?<![\w/.-]){re.escape(old)}(?![\w-])"
    return re.sub(pattern, new.replace("\\", r"\\"), command, count=1)


def classify(step: ReadmeStep, command: str, code: int | None, output: str, ctx: Context):
    """The finding that explains this result, or ``None`` (success, or nothing recognised)."""
    if code == 0:
        return _after_success(step, command, output, ctx)
    for rule in (
        _vcs_version,
        _own_repository_by_url,
        _activate_missing,
        _interpreter_missing,
        _command_not_found,
        _invalid_requirement,
        _requirements_file,
        _not_a_project,
        _no_distribution,
        _python_requirement,
        _broken_distribution,
        _resolution,
        _apt_locate,
        _library,
        _usage,
        _module,
        _missing_path,
        _interactive,
    ):
        finding = rule(step, command, output, ctx)
        if finding is not None:
            return finding
    return None


# ---------------------------------------------------------------------- success with warnings


def _after_success(step: ReadmeStep, command: str, output: str, ctx: Context):
    match = _INCOMPATIBLE.search(output)
    if match and is_pip_install(command):
        name = canonicalize_name(match.group("name"))
        pinned = [
            w
            for w in words_of(command)[2:]
            if not w.startswith("-") and requirement_name(w) == name
        ]
        if pinned:
            rest = [w for w in words_of(command) if w not in pinned]
            only = all(w.startswith("-") for w in rest[2:])
            wanted = f"{match.group('req')}{match.group('spec').strip()}"
            restore = f'pip install "{wanted}"'
            installer = project_install(ctx)
            return Finding(
                "E7",
                f"`{command}` installs {match.group('name')} {match.group('have')}, but "
                f"{match.group('owner')} requires `{wanted}` (pip: '{match.group(0)}')."
                + prose_about(ctx.readme_text, match.group("name")),
                f"Remove the `{command}` step"
                if only
                else f"Run `{shlex.join(rest)}` instead"
                f": {match.group('owner')} requires `{wanted}`"
                + (f", which `{installer}` already installs." if installer else "."),
                action="drop" if only else "replace",
                commands=[restore] if only else [shlex.join(rest), restore],
                key=f"pin:{name}",
                rule="pip: installed version incompatible with a requirement",
            )
    match = re.search(r"does not provide the extra '(?P<extra>[^']+)'", output)
    if match:
        extra = match.group("extra")
        best = closest(extra, list(ctx.facts.extras), 0.5)
        return Finding(
            "E1",
            f"`{command}` asks for the extra `{extra}`, which the package does not provide "
            f"(pip: '{match.group(0)}').",
            f"Use the declared extra `{best}`." if best else f"Drop the `{extra}` extra.",
            key=f"extra:{extra}",
            rule="pip: unknown extra",
        )
    return None


# ---------------------------------------------------------------------- E6 / E4: environments


def _vcs_version(step, command, output, ctx: Context):
    # The build tools that read the version from git, by what their failure says without a
    # `.git` folder (repo.vcs_version has why each takes what it takes).
    tool = next((t for t in VERSION_TOOLS if t.failure and t.failure in output), None)
    if tool is None:
        return None
    # The checkout here has no .git folder (an exported snapshot): not the README's fault.
    if tool.variables:
        repair = f"export {tool.variables[0]}={PRETEND_VERSION}"
    else:
        # It takes no version from the environment (versioningit): a one-commit repository
        # tagged as its `vcs.match` wants stands in for a clone's history.
        repair = throwaway_git(shlex.quote(ctx.facts.vcs_tag))
    return Finding(
        None,
        f"{tool.name} cannot read a version without the repository's .git folder",
        repair,
        action="prepend",
        commands=[repair],
        key=f"vcs-version:{tool.name}",
        rule=f"{tool.name} without git metadata",
    )


# A pip target fetched from a forge: git+https://host/owner/repo(.git)(@ref)(#egg=name), or an
# archive URL of it (https://github.com/owner/repo/tarball/dev, .../archive/v1.zip).
_URL_TARGET = re.compile(
    r"^(?:git\+)?(?:https?|git|ssh)://(?:[^@/]+@)?[^/]+/[^/]+/(?P<repo>[^/@#?]+?)(?:\.git)?"
    r"(?:/(?:tarball|zipball|archive)/[^#]*)?(?:@[^#]*)?(?:#egg=(?P<egg>[\w.-]+))?/?$"
)


def _own_repository_by_url(step, command, output, ctx: Context):
    """A pip install of the project's own upstream repository by URL: the sandbox reaches
    package indexes only, and the checkout is that repository (hazm's README installs
    `git+https://github.com/roshan-research/hazm.git`)."""
    if not is_pip_install(command):
        return None
    # Split on blanks, not as the shell does: a `#egg=` fragment would read as a comment.
    for word in command.split():
        match = _URL_TARGET.match(word.strip("'\""))
        if not match:
            continue
        names = {canonicalize_name(n) for n in match.group("repo", "egg") if n}
        if not names & set(ctx.facts.names):
            continue
        fixed = replace_word(command, word, ".")
        return Finding(
            None,
            f"`{command}` fetches the project from its upstream repository, which the sandbox "
            "cannot reach; the checkout is that repository",
            f"`{fixed}`",
            action="replace",
            commands=[fixed],
            key=f"own-url:{word}",
            rule="pip: the project's own repository by URL",
        )
    return None


def _activate_missing(step, command, output, ctx: Context):
    match = _ACTIVATE_MISSING.search(output)
    if not match:
        return None
    path = match.group("path")
    folder = path.rsplit("/bin/activate", 1)[0].removeprefix("./")
    for later in ctx.later(step.index):
        target = venv_target(later.command) if later.kind == "env_create" else None
        if target and target.removeprefix("./").rstrip("/") == folder:
            return Finding(
                "E6",
                f"The virtual environment is activated before it is created: `{command}` "
                f"comes before `{later.command}`, so the shell fails with '{match.group(0)}'.",
                f"Run `{later.command}` before `{command}`.",
                action="move_before",
                move=later.index,
                key=f"order:{later.index}",
                rule="activation before creation",
            )
    for done in ctx.done:
        target = venv_target(ctx.steps[done].command) or ""
        if target and target.removeprefix("./").rstrip("/") != folder:
            fixed = command.replace(folder, target.removeprefix("./").rstrip("/"))
            return Finding(
                "E4",
                f"`{command}` activates `{folder}`, but the environment was created as "
                f"`{target}` (`{ctx.steps[done].command}`).",
                f"`{fixed}`",
                action="replace",
                commands=[fixed],
                key=f"path:{folder}",
                rule="activation of another folder",
            )
    create = f"python3 -m venv {folder}"
    return Finding(
        "E6",
        f"`{command}` activates `{folder}`, which no earlier step creates ('{match.group(0)}').",
        f"Run `{create}` before `{command}`.",
        action="prepend",
        commands=[create],
        key=f"create:{folder}",
        rule="activation of an environment never created",
    )


def _interpreter_missing(step, command, output, ctx: Context):
    match = _NOT_FOUND.search(output)
    if not match or not re.fullmatch(r"python\d(?:\.\d+)?", match.group("tool")):
        return None
    tool = match.group("tool")
    version = tool[len("python") :]
    spec = ctx.facts.python_spec()
    candidates = [p for p in ctx.pythons if spec is None or allowed(spec, p)]
    if not candidates:
        return None
    best = f"python{candidates[-1]}"
    fixed = command.replace(tool, best, 1)
    if spec is not None and "." in version and not allowed(spec, version):
        return Finding(
            "E7",
            f"`{command}` uses Python {version}, but {ctx.facts.requires_python_source} is "
            f"`{ctx.facts.requires_python}` ({tool}: command not found here).",
            f"`{fixed}` (Python {lowest_allowed(spec)} or newer).",
            action="replace",
            commands=[fixed],
            key="python-version",
            rule="interpreter outside requires-python",
        )
    # The README's interpreter is fine for the project, this machine just lacks it.
    return Finding(
        None,
        f"{tool} is not installed here; {best} satisfies the project's constraints",
        f"`{fixed}`",
        action="replace",
        commands=[fixed],
        key=f"interpreter:{tool}",
        rule="interpreter not installed",
    )


def project_install(ctx: Context) -> str | None:
    """The README's own command that installs the project, if it has one."""
    for step in ctx.steps:
        if _installs(step, ctx.facts, "") and step.final:
            return step.final
    return None


def _installs(step: ReadmeStep, facts: RepoFacts, name: str) -> bool:
    """Whether ``step`` installs the project itself (or the distribution ``name``)."""
    if step.kind not in ("install",):
        return False
    words = words_of(step.command)
    if re.search(r"setup\.py\s+(install|develop)|^(poetry|pipenv|pdm|uv)\s", step.command):
        return True
    for word in words[2:]:
        target = re.sub(r"\[.*$", "", word)
        if target in (".", "./") or canonicalize_name(target or "-") in [*facts.names, name]:
            return True
    return False


def _command_not_found(step, command, output, ctx: Context):
    match = _NOT_FOUND.search(output)
    if not match:
        return None
    tool = match.group("tool")
    facts = ctx.facts
    own = tool in facts.scripts or canonicalize_name(tool) in facts.names
    for later in ctx.later(step.index):
        if _installs(later, facts, canonicalize_name(tool)) and (own or tool in later.command):
            return Finding(
                "E6",
                f"`{command}` runs before `{later.command}` installs it: the shell reports "
                f"'{tool}: command not found'.",
                f"Run `{later.command}` before `{command}` (move the section that uses "
                f"`{tool}` after the installation).",
                action="defer" if step.kind in ("usage", "test") else "move_before",
                move=later.index,
                key=f"order:{later.index}",
                rule="used before installed",
            )
    if own:
        return Finding(
            "E1",
            f"`{command}` needs the `{tool}` command, which comes with the project, but no step "
            "of the README installs the project.",
            "Install the project from the repository first: `pip install -e .`.",
            action="append",
            commands=["pip install -e ."],
            key="install-project",
            rule="project never installed",
        )
    if tool in ("sudo",):
        return None
    prose = re.sub(r"```.*?```", " ", ctx.readme_text, flags=re.DOTALL)
    if re.search(rf"(?<![\w-]){re.escape(tool)}(?![\w-])", prose.replace(command, " ")):
        return None
    return Finding(
        "E8",
        f"`{command}` assumes the `{tool}` command, which the README never installs or "
        "mentions (command not found).",
        f"Explain how to install `{tool}` before this step.",
        key=f"tool:{tool}",
        rule="tool never installed",
    )


# ---------------------------------------------------------------------- pip


def _invalid_requirement(step, command, output, ctx: Context):
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


def _requirements_file(step, command, output, ctx: Context):
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


def _not_a_project(step, command, output, ctx: Context):
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


def _no_distribution(step, command, output, ctx: Context):
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


def _broken_distribution(step, command, output, ctx: Context):
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


def _python_requirement(step, command, output, ctx: Context):
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


def _resolution(step, command, output, ctx: Context):
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


def _apt_locate(step, command, output, ctx: Context):
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


def _library(step, command, output, ctx: Context):
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


# ---------------------------------------------------------------------- E2: usage


def _usage(step, command, output, ctx: Context):
    meant = _MEANT.search(output)
    if meant:
        bad = meant.group("pip") or meant.group("git")
        good = meant.group("pip_good") or meant.group("git_good")
        if bad in words_of(command) or bad in command.split():
            fixed = replace_word(command, bad, good)
            return Finding(
                "E2",
                f"`{command}`: `{bad}` is not a subcommand of `{program_words(command)[0]}`, "
                f"which takes it for `{good}` ('{' '.join(meant.group(0).split())[:160]}').",
                f"`{fixed}`",
                action="replace",
                commands=[fixed],
                key=f"usage:{step.index}",
                rule="unknown subcommand, the program's suggestion",
            )
    option = _OPTION.search(output)
    choice = _CHOICE.search(output)
    no_command = _NO_COMMAND.search(output)
    if not (option or choice or no_command):
        return None
    program = program_words(command)
    wrong = choice or no_command
    if wrong:
        bad = wrong.group("bad")
        if choice:
            options = re.findall(r"'([^']+)'", choice.group("choices"))
        else:
            _, help_text = ctx.probe(shlex.join(program[: program.index(bad)] if bad in program
                                                else program[:1]) + " --help")  # fmt: skip
            options = re.findall(r"^\s{2,}([\w-]+)\s", help_text, re.MULTILINE)
        best = closest(bad, options, 0.4)
        fixed = replace_word(command, bad, best) if best else command
        return Finding(
            "E2",
            f"`{command}`: `{bad}` is not a valid subcommand or choice ('{wrong.group(0)}').",
            f"`{fixed}`" if best else f"Use one of: {', '.join(options[:8])}.",
            action="replace" if best else "none",
            commands=[fixed] if best else [],
            key=f"usage:{step.index}",
            rule="invalid choice or subcommand",
        )
    assert option is not None
    bad = next(g for g in option.groups() if g).split("=")[0]
    if not bad.startswith("-"):
        bad = next((w for w in words_of(command) if w.startswith("-")), bad)
    suggestion = _SUGGEST.search(output)
    candidates: list[str] = []
    if suggestion:
        text = suggestion.group("s") or suggestion.group("p") or ""
        candidates = re.findall(r"-{1,2}[\w-]+", text)
    help_text = ""
    if not candidates:
        _, help_text = ctx.probe(shlex.join(program) + " --help")
        candidates = _flags(help_text)
    best = closest(bad, candidates, 0.4)
    fixed = replace_word(command, bad, best) if best else command
    shown = f"`{best}`"
    line = next((ln for ln in help_text.splitlines() if best and best in _flags(ln)), "")
    aliases = _flags(line)
    if len(aliases) > 1:
        # The help line names every spelling of the option: ``-n ROWS, --rows ROWS``.
        shown = "/".join(f"`{a}`" for a in aliases) + f" ('{line.strip()[:100]}')"
    return Finding(
        "E2",
        f"`{command}`: `{bad}` is not an option of `{' '.join(program)}` "
        f"('{option.group(0)}')." + (f" Its --help lists {shown}." if best else ""),
        f"`{fixed}`" if best else f"Remove `{bad}`; see `{' '.join(program)} --help`.",
        action="replace" if best else "none",
        commands=[fixed] if best else [],
        key=f"usage:{step.index}",
        rule="invalid option",
    )


# ---------------------------------------------------------------------- E1: modules


def _module(step, command, output, ctx: Context):
    match = _NO_MODULE.search(output)
    if not match:
        return None
    module = match.group("module")
    top = module.split(".")[0]
    facts = ctx.facts
    if top in facts.packages:
        for later in ctx.later(step.index):
            if _installs(later, facts, ""):
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


# ---------------------------------------------------------------------- E4: paths


def _path_tokens(command: str) -> list[str]:
    out = []
    for word in words_of(command)[1:]:
        if word.startswith("-") or "=" in word or "://" in word:
            continue
        if "/" in word or re.search(r"\.\w{1,5}$", word):
            out.append(word)
    return out


def _missing_path(step, command, output, ctx: Context):
    if not re.search(
        r"No such file or directory|does not exist|can't open file|cannot access|"
        r"FileNotFoundError|no such file|not found",
        output,
        re.IGNORECASE,
    ):
        return None
    facts = ctx.facts
    cwd = ctx.cwd
    words = words_of(command)
    candidates = _path_tokens(command)
    if words and words[0] == "cd" and len(words) > 1:
        candidates = [words[1]]
    missing = [w for w in candidates if not facts.exists(w, cwd) and "*" not in w]
    if not missing:
        return None
    bad = missing[0]
    if (
        step.kind == "usage"
        and bad.endswith(".py")
        and facts.closest_path(bad, cwd, kind="file") is None
    ):
        # ``python my_script.py`` shown as an example of the reader's own code.
        return None
    kind = "dir" if (words and words[0] == "cd") or bad.endswith("/") else "any"
    if bad.endswith(".py"):
        kind = "file"
    best = facts.closest_path(bad.rstrip("/"), cwd, kind=kind)
    shown = re.search(rf"[^\n]*{re.escape(bad)}[^\n]*", output)
    evidence = (shown.group(0).strip() if shown else "No such file or directory")[:160]
    if best is None:
        return Finding(
            "E4",
            f"`{command}` refers to `{bad}`, which is not in the repository ('{evidence}').",
            f"Point `{bad}` at an existing file or explain where it comes from.",
            action="drop",
            key=f"path:{bad}",
            rule="missing path",
        )
    fixed = replace_word(command, bad, best + ("/" if bad.endswith("/") else ""))
    fixed_all = fixed
    prefix = bad.rstrip("/").split("/")[0]
    best_prefix = best.split("/")[0]
    same_depth = best.count("/") == bad.rstrip("/").count("/")
    if "/" in bad and prefix != best_prefix and same_depth and best.endswith(bad.split("/", 1)[1]):
        # The same wrong folder in the other arguments: ``example/a example/b``.
        fixed_all = re.sub(rf"(?<![\w/.-]){re.escape(prefix)}/", f"{best_prefix}/", command)
    folder = best.rsplit("/", 1)[0] if "/" in best else ""
    return Finding(
        "E4",
        f"`{command}` refers to `{bad}`, which does not exist ('{evidence}'); the repository "
        f"has `{best}`" + (f" (in the folder `{folder}/`)." if folder else "."),
        f"`{fixed_all}`",
        action="replace",
        commands=[fixed_all],
        key=f"path:{bad}",
        rule="missing path",
    )


def _interactive(step, command, output, ctx: Context):
    match = re.search(r"EOFError: EOF when reading a line|not a tty|Inappropriate ioctl", output)
    if not match:
        return None
    return Finding(
        "E8",
        f"`{command}` waits for interactive input (its input is closed here: "
        f"'{match.group(0)}'), which the README does not say.",
        "Say which answers the command expects, or give its non-interactive form.",
        key=f"interactive:{step.index}",
        rule="interactive command",
    )
