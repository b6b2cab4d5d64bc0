"""Static rules from what common tools accept: options pip, venv, pytest and Django's
``manage.py`` do not have, subcommands and install options conda does not have (E2), an
activation that names a folder (E2), and README links to files the repository does not have
(E4).

The option tables are the tools' own (``pip install --help`` of pip 24/25, ``python -m venv -h``,
Django's built-in commands, ``conda --help`` and ``conda install/create --help`` of conda
23/24); they are general knowledge, not read from any benchmark's labels. A command these rules
flag fails the same way when it runs, so the runtime classifier agrees (``syntax:`` and
``path:`` keys are shared with it: one error, one diagnosis). Conda is not in the sandbox, so
its rules are the only evidence the agent has about a conda line.
"""

from __future__ import annotations

import difflib
import re
from pathlib import PurePosixPath

from .findings import Finding, missing_path
from .repo_view import RepoFacts
from .steps import PIP_COMMAND, ReadmeStep, strip_sudo, words_of


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_PIP_SHORT_WITH_VALUE = set("rcetCif")
_PIP_SHORT_FLAGS = set("UIhvVq")
_PIP_LONG = _names(
    """requirement constraint no-deps pre editable dry-run ignore-installed target platform
    python-version implementation abi user root prefix src upgrade upgrade-strategy
    force-reinstall ignore-requires-python no-build-isolation use-pep517 no-use-pep517
    check-build-dependencies break-system-packages config-settings global-option build-option
    install-option compile no-compile no-warn-script-location no-warn-conflicts no-binary
    only-binary prefer-binary require-hashes progress-bar root-user-action report quiet no-clean
    index-url extra-index-url no-index find-links help debug isolated require-virtualenv python
    verbose version log no-input keyring-provider proxy retries timeout exists-action
    trusted-host cert client-cert cache-dir no-cache-dir disable-pip-version-check no-color
    no-python-version-warning use-feature use-deprecated group"""
)
_VENV_LONG = _names(
    """system-site-packages symlinks copies clear upgrade without-pip prompt upgrade-deps
    without-scm-ignore-files help"""
)
_DJANGO_COMMANDS = _names(
    """check compilemessages createcachetable dbshell diffsettings dumpdata flush inspectdb
    loaddata makemessages makemigrations migrate optimizemigration runserver sendtestemail shell
    showmigrations sqlflush sqlmigrate sqlsequencereset squashmigrations startapp startproject
    test testserver changepassword createsuperuser collectstatic findstatic clearsessions
    remove_stale_contenttypes ping_google ogrinspect"""
)
_RUNSERVER_OPTIONS = _names(
    """--ipv6 -6 --nothreading --noreload --nostatic --insecure --skip-checks --settings
    --pythonpath --traceback --no-color --force-color -v --verbosity -h --help"""
)
_CONDA_COMMANDS = _names(
    """activate clean compare config create deactivate doctor env export info init install
    list notices package remove rename run search uninstall update upgrade build develop index
    render convert skeleton inspect metapackage debug verify server repo token lock mambabuild
    content-trust pack smithy repoquery help"""
)
# `conda install`, `create`, `update` and `remove`: the options every one of them takes, and
# `create`'s own.
_CONDA_LONG = _names(
    """revision file dev name prefix channel use-local override-channels repodata-fn
    experimental no-lock repodata-use-zst strict-channel-priority no-channel-priority no-deps
    only-deps no-pin solver copy no-shortcuts shortcuts-only clobber update-deps
    satisfied-skip-solve update-all all update-specs freeze-installed no-update-deps
    force-reinstall override-frozen insecure offline dry-run json quiet verbose yes
    use-index-cache download-only show-channel-urls mkdir help debug console trace subdir
    platform clone no-default-packages force prune"""
)
_CONDA_RUN = re.compile(r"^(?:conda|mamba)\s")
# Not `uv pip install`: its options are uv's, not pip's.
_PIP_RUN = re.compile(rf"^{PIP_COMMAND}\s+install\b")
_VENV_RUN = re.compile(r"^(?:python(?:3(?:\.\d+)?)?|py(?:\s+-3(?:\.\d+)?)?)\s+-m\s+venv\b")
_PYTEST_RUN = re.compile(r"^(?:py\.test|pytest|python(?:3(?:\.\d+)?)?\s+-m\s+pytest)\b")
_DJANGO_RUN = re.compile(r"^(?:(?:python(?:3(?:\.\d+)?)?\s+)?(?:\./)?manage\.py|django-admin)\s")


def _long_ok(option: str, known: frozenset[str]) -> bool:
    """Exact, or an abbreviation of exactly one option (optparse and argparse both allow it)."""
    name = option[2:].split("=", 1)[0]
    if name in known:
        return True
    return sum(1 for k in known if k.startswith(name)) == 1


def _closest(option: str, known: frozenset[str]) -> str | None:
    name = option[2:].split("=", 1)[0]
    match = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f"--{match[0]}" if match else None


def _bad_pip_options(words: list[str]) -> list[str]:
    bad = []
    for word in words:
        if word.startswith("--") and len(word) > 2:
            if not _long_ok(word, _PIP_LONG):
                bad.append(word)
        elif word.startswith("-") and len(word) > 1 and not word[1].isdigit():
            for i, letter in enumerate(word[1:]):
                if letter in _PIP_SHORT_WITH_VALUE:
                    break  # the rest is the option's value (-rrequirements.txt)
                if letter not in _PIP_SHORT_FLAGS:
                    bad.append(word if i == 0 else f"-{letter} (in {word})")
                    break
    return bad


def _option_finding(step: ReadmeStep, tool: str, option: str, fix: str) -> Finding:
    return Finding(
        "E2",
        f"`{step.command}` passes `{option}`, an option {tool} does not have: the command "
        "stops with a usage error.",
        fix,
        key=f"syntax:{step.index}",
        rule="static: option the tool does not have",
    )


def _pip(step: ReadmeStep, command: str) -> Finding | None:
    words = words_of(command)
    start = next((i for i, w in enumerate(words) if w == "install"), len(words)) + 1
    bad = _bad_pip_options(words[start:])
    if not bad:
        return None
    option = bad[0]
    if option.startswith("--"):
        closest = _closest(option, _PIP_LONG)
        fix = f"Use `{closest}` instead of `{option}`" if closest else f"Remove `{option}`"
    elif option.lower() == "-u":
        fix = "Use `-U` (`--upgrade`): pip's short options are case-sensitive"
    else:
        fix = f"Remove `{option}`"
    return _option_finding(step, "`pip install`", option, fix + ".")


def _venv(step: ReadmeStep, command: str) -> Finding | None:
    for word in words_of(command)[3:]:
        if word.startswith("--") and len(word) > 2 and not _long_ok(word, _VENV_LONG):
            closest = _closest(word, _VENV_LONG)
            fix = f"Use `{closest}` instead of `{word}`" if closest else f"Remove `{word}`"
            return _option_finding(step, "`python -m venv`", word, fix + ".")
    return None


def _pytest(step: ReadmeStep, command: str) -> Finding | None:
    for word in words_of(command)[1:]:
        # pytest parses its options without abbreviations: `--v` is no `-v`.
        if re.fullmatch(r"--[A-Za-z]", word):
            return _option_finding(step, "pytest", word, f"Use `{word[1:]}` instead of `{word}`.")
    return None


def _conda(step: ReadmeStep, command: str) -> Finding | None:
    words = words_of(command)
    tool = words[0]
    positional = [(i, w) for i, w in enumerate(words[1:], 1) if not w.startswith("-")]
    if not positional or words[1] in ("-h", "--help", "-V", "--version"):
        return None
    at, sub = positional[0]
    if sub not in _CONDA_COMMANDS:
        later = next((w for _, w in positional[1:] if w in _CONDA_COMMANDS), None)
        if later is None:
            return None  # a plugin's command (`conda lock`-like tools) may be installed
        fixed = [w for w in words if w != later]
        fixed.insert(at, later)
        return Finding(
            "E2",
            f"`{step.command}` gives `{sub}` where {tool} expects its subcommand; the "
            f"subcommand `{later}` must come first.",
            f"`{' '.join(fixed)}`",
            key=f"syntax:{step.index}",
            rule="static: option the tool does not have",
        )
    if sub not in ("install", "create", "update", "upgrade", "remove", "uninstall"):
        return None
    for word in words[at + 1 :]:
        if word.startswith("--") and len(word) > 2 and not _long_ok(word, _CONDA_LONG):
            closest = _closest(word, _CONDA_LONG)
            fix = f"Use `{closest}` instead of `{word}`" if closest else f"Remove `{word}`"
            return _option_finding(step, f"`{tool} {sub}`", word, fix + ".")
    return None


def _management_commands(facts: RepoFacts) -> set[str]:
    return {
        PurePosixPath(f).stem
        for f in facts.files
        if "/management/commands/" in f"/{f}" and f.endswith(".py")
    }


def _django(step: ReadmeStep, command: str, facts: RepoFacts) -> Finding | None:
    words = words_of(command)
    at = next(
        (i for i, w in enumerate(words) if w.endswith("manage.py") or w == "django-admin"), None
    )
    if at is None:
        return None
    rest = words[at + 1 :]
    if not rest or rest[0].startswith("-"):
        return None
    sub = rest[0]
    known = _DJANGO_COMMANDS | _management_commands(facts)
    if sub not in known:
        # Apps add commands of their own; only a near-miss of a known one is flagged.
        near = [k for k in sorted(known) if k.startswith(sub) and len(sub) >= 3]
        near = near or difflib.get_close_matches(sub, sorted(known), n=1, cutoff=0.75)
        if not near:
            return None
        return Finding(
            "E2",
            f"`{step.command}` runs the management command `{sub}`, which neither Django nor "
            f"the repository defines; `{near[0]}` is the command meant.",
            f"`{command.replace(sub, near[0], 1)}`",
            key=f"syntax:{step.index}",
            rule="static: option the tool does not have",
        )
    if sub == "runserver":
        for word in rest[1:]:
            option = word.split("=", 1)[0]
            if option.startswith("-") and option not in _RUNSERVER_OPTIONS:
                return _option_finding(
                    step,
                    "`manage.py runserver`",
                    word,
                    f"Remove `{word}`; `runserver` takes the address as `[addr:]port`.",
                )
    return None


def _activation_of_folder(step: ReadmeStep, command: str) -> Finding | None:
    match = re.fullmatch(r"(?:source|\.)\s+(?P<path>\S*(?:bin|Scripts))/?", command.strip())
    if match is None:
        return None
    path = match.group("path")
    return Finding(
        "E2",
        f"`{step.command}` sources the folder `{path}`, not the activation script in it.",
        f"`source {path}/activate`",
        key=f"syntax:{step.index}",
        rule="static: activation of a folder",
    )


def tool_usage(steps: list[ReadmeStep], facts: RepoFacts) -> list[Finding]:
    out = []
    for step in steps:
        command = strip_sudo(step.command).strip().lstrip("$ ").strip()
        command = re.sub(r"^!", "", command)  # a notebook cell's shell escape
        finding = None
        if _PIP_RUN.match(command):
            finding = _pip(step, command)
        elif _VENV_RUN.match(command):
            finding = _venv(step, command)
        elif _PYTEST_RUN.match(command):
            finding = _pytest(step, command)
        elif _DJANGO_RUN.match(command):
            finding = _django(step, command, facts)
        elif _CONDA_RUN.match(command):
            finding = _conda(step, command)
        else:
            finding = _activation_of_folder(step, command)
        if finding is not None:
            out.append(finding)
    return out


# ---------------------------------------------------------------------- E4: links

# Link text and labels stop at the next bracket and line: from every "[" of a long line (or
# text) the scan ran to its end. A badge in a link still gives the badge's target.
_MD_LINK = re.compile(r"!?\[[^\[\]\n]*\]\(\s*<?(?P<target>[^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_MD_REF = re.compile(r"^\s{0,3}\[[^\]\n]+\]:\s*<?(?P<target>\S+?)>?(?:\s+.*)?$", re.MULTILINE)
_RST_LINK = re.compile(r"`[^`<]*<(?P<target>[^>`\s]+)>`_{1,2}")
_RST_DIRECTIVE = re.compile(
    r"^[^\S\n]*\.\.\s+(?:image|figure|include|literalinclude)::\s*(?P<target>\S+)", re.MULTILINE
)
_NOT_A_PATH = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|#|//|\{|\$|%|<)", re.IGNORECASE)


def missing_link_targets(text: str, facts: RepoFacts) -> list[Finding]:
    """Relative links and images of the README whose file is not in the repository (E4)."""
    if not facts.files:
        return []
    body = re.sub(r"```.*?```", " ", text, flags=re.DOTALL)
    targets: list[str] = []
    for pattern in (_MD_LINK, _MD_REF, _RST_LINK, _RST_DIRECTIVE):
        targets += [m.group("target") for m in pattern.finditer(body)]
    out: list[Finding] = []
    seen: set[str] = set()
    for target in targets:
        if _NOT_A_PATH.match(target) or target in seen:
            continue
        seen.add(target)
        path = re.split(r"[#?]", target, maxsplit=1)[0].strip().lstrip("/").removeprefix("./")
        path = path.rstrip("/")
        if not path or ".." in PurePosixPath(path).parts or "@" in path:
            continue
        if not re.search(r"\.[A-Za-z0-9]{1,5}$", path) and "/" not in path:
            continue  # a bare word is a page of a docs site or a wiki, not a file here
        if facts.exists(path) or any(facts.exists(f"{d}/{path}") for d in ("docs", "doc")):
            continue  # a README included in the docs links relative to them
        kind = "file" if re.search(r"\.\w{1,5}$", path) else "dir"
        best = facts.closest_path(path, kind=kind)
        out.append(
            missing_path(
                f"The README links to `{target}`",
                path,
                best,
                f"Link to `{best}` instead." if best else f"Remove the link to `{target}`.",
                "static: link to a file the repository does not have",
            )
        )
    return out
