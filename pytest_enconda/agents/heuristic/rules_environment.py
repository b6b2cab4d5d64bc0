"""Rules for a command that succeeded with a warning, and for environments (E6, E4): the
version a build tool cannot read without git, the project fetched from its own URL, a
virtual environment activated before it exists, an interpreter or command that is missing."""

from __future__ import annotations

import re
import shlex

from packaging.utils import canonicalize_name

from ...repo.vcs_version import PRETEND_VERSION, VERSION_TOOLS, throwaway_git
from .classify_context import Context, closest, installs, project_install, replace_word
from .findings import Finding
from .prepass import allowed, lowest_allowed, prose_about
from .repo_view import requirement_name
from .steps import ReadmeStep, is_pip_install, venv_target, words_of

_NOT_FOUND = re.compile(r"(?:^|\n)(?:bash: )?(?:line \d+: )?(?P<tool>[\w.+-]+): command not found")
# Starting only where a word starts: from inside a long word each start rescanned it to its end.
_ACTIVATE_MISSING = re.compile(r"(?<!\S)(?P<path>\S*bin/activate): No such file or directory")

_INCOMPATIBLE = re.compile(
    # From a word's start, and the specifier within its line: each start inside a word, or each
    # "requires" before a comma far away, rescanned to the end.
    r"(?<!\S)(?P<owner>\S+) \S+ requires (?P<req>[A-Za-z0-9._-]+)(?P<spec>[^,\n]{0,200}), "
    r"but you have "
    r"(?P<name>[A-Za-z0-9._-]+) (?P<have>\S+) which is incompatible"
)


# ---------------------------------------------------------------------- success with warnings


def after_success(step: ReadmeStep, command: str, output: str, ctx: Context):
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


def vcs_version(step, command, output, ctx: Context):
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


def own_repository_by_url(step, command, output, ctx: Context):
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


def activate_missing(step, command, output, ctx: Context):
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


def interpreter_missing(step, command, output, ctx: Context):
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


def command_not_found(step, command, output, ctx: Context):
    match = _NOT_FOUND.search(output)
    if not match:
        return None
    tool = match.group("tool")
    facts = ctx.facts
    own = tool in facts.scripts or canonicalize_name(tool) in facts.names
    for later in ctx.later(step.index):
        if installs(later, facts, canonicalize_name(tool)) and (own or tool in later.command):
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
