"""A README's commands as steps: where each appears (its section) and what kind of step it is.

Commands come from the shared extractor (``readme_commands.extract_commands``). The kind decides
what the agent does with a command: setup steps go into the setup script; usage examples and
test runs are executed as checks but are not part of installing the project; steps for other
systems are skipped, each with the reason recorded in the trajectory.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePath

from ...ecosystems import ECOSYSTEMS, any_of
from ..readme import is_test_command
from ..readme_commands import _markdown_blocks, _rst_blocks, extract_commands
from .repo_view import RepoFacts

# What the agent does with each kind.
SETUP_KINDS = frozenset({"install", "env_create", "env_activate", "state", "files", "apt_update"})
CHECK_KINDS = frozenset({"usage", "test"})

_HEADING_MD = re.compile(r"^\s{0,3}#{1,6}\s+(?P<title>.+?)\s*#*\s*$")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+_.:])\1{2,}\s*$")
# pip itself: pip, pip3, pip3.11, python3 -m pip, and the Windows launcher's py -3.11 -m pip
# (classify() skips a `py` step as a Windows command; tool_usage still checks its pip options).
PIP_COMMAND = (
    r"(?:pip(?:3(?:\.\d+)?)?|(?:python(?:3(?:\.\d+)?)?|py(?:\s+-3(?:\.\d+)?)?)\s+-m\s+pip)"
)
# ... and uv's pip interface, which installs alike but takes options of its own.
_PIP = rf"(?:{PIP_COMMAND}|uv\s+pip)"
_PIP_INSTALL = re.compile(rf"^{_PIP}\s+install\b")
_VENV_CREATE = re.compile(
    r"^(?:(?:python(?:3(?:\.\d+)?)?|py)\s+-m\s+(?:venv|virtualenv)|virtualenv|uv\s+venv)\b"
)
_ACTIVATE = re.compile(r"^(?:source|\.)\s+(?P<path>\S*activate)\s*$")
_SERVER = re.compile(
    r"\b(runserver|serve|server|notebook|jupyter\s+lab|streamlit\s+run|flask\s+run|uvicorn|"
    r"gunicorn|celery\s+worker|docker|docker-compose|tensorboard|watch|daemon|--daemon|repl|"
    r"shell|ipython|tmux|screen|ssh|login|init)\b"
)
_PLACEHOLDER = re.compile(
    r"/path/to/|<[A-Za-z][\w .-]*>|(?<!\$)\{[A-Za-z_][\w-]*\}|"
    r"\byour[_-]\w+|\bYOUR_[A-Z_]+|\.\.\.|\bX\.Y\b"
)
FOREIGN_TOOLS = frozenset(
    {"brew", "port", "choco", "winget", "yum", "dnf", "pacman", "zypper", "apk", "snap", "scoop"}
)
# Tools this base environment does not have and that a Linux pip-based setup does not need.
UNAVAILABLE_TOOLS = frozenset(
    {"conda", "mamba", "micromamba", "conda-env", "pyenv", "docker", "docker-compose", "podman",
     "kubectl", "helm", "vagrant", "nvm", "npm", "npx", "yarn", "pnpm", "node", "systemctl",
     "service", "sdk", "rbenv", "asdf"}
)  # fmt: skip


@dataclass
class ReadmeStep:
    index: int
    command: str
    section: str
    kind: str
    reason: str = ""
    # Filled in as the agent works: the command as repaired, or None when dropped.
    final: str | None = None
    notes: list[str] = field(default_factory=list)
    # For steps the agent added: the finding whose repair they are.
    repair_key: str = ""

    def __post_init__(self) -> None:
        if self.final is None and self.kind in SETUP_KINDS:
            self.final = self.command


def words_of(command: str) -> list[str]:
    try:
        return shlex.split(command, comments=True)
    except ValueError:
        return command.split()


def strip_sudo(command: str) -> str:
    return re.sub(r"^\s*sudo\s+(?:-\S+\s+)*", "", command)


def is_pip_install(command: str) -> bool:
    return bool(_PIP_INSTALL.match(strip_sudo(command).strip()))


def activation_path(command: str) -> str | None:
    match = _ACTIVATE.match(command.strip())
    return match.group("path") if match else None


def venv_target(command: str) -> str | None:
    """The folder ``python -m venv X`` / ``virtualenv X`` / ``uv venv X`` creates."""
    if not _VENV_CREATE.match(command.strip()):
        return None
    words = words_of(command)
    args = [w for w in words[1:] if not w.startswith("-") and w not in ("venv", "virtualenv")]
    if words[0] == "uv":
        args = args[1:] if args and args[0] == "venv" else args
        return args[0] if args else ".venv"
    return args[-1] if args else None


def python_of(command: str) -> str | None:
    """``python3.10`` in ``python3.10 -m venv .venv``."""
    match = re.match(r"^\s*(python\d+(?:\.\d+)?)\b", strip_sudo(command))
    return match.group(1) if match else None


def _build() -> re.Pattern[str]:
    """An ecosystem's build step (``Ecosystem.build_commands``): on an AEC task (any language) it
    sets the project up. re's cache compiles it once while the registry stays as it is."""
    return re.compile("^" + any_of(p for eco in ECOSYSTEMS.values() for p in eco.build_commands))


def _aec_installable() -> frozenset[str]:
    """The unavailable tools an AEC container installs from Debian when the README asks
    (``apt-get install nodejs``): an ecosystem's own programs. On a diagnosis task (a Python
    image) they stay unavailable."""
    return UNAVAILABLE_TOOLS & {program for eco in ECOSYSTEMS.values() for program in eco.programs}


def classify_command(command: str, facts: RepoFacts, aec: bool = False) -> tuple[str, str]:
    """(kind, reason) of one README command; ``aec``: a task that configures a repository in
    any language, whose build commands are setup and whose test runners name the test command."""
    text = strip_sudo(command).strip()
    words = words_of(text)
    if not words:
        return "skip", "empty command"
    first = words[0]
    first_line = text.split("\n", 1)[0]
    installable = _aec_installable() if aec else frozenset()
    if aec and "\n" not in text and first not in UNAVAILABLE_TOOLS - installable:
        if is_test_command(text):
            return "test", ""
        if _build().match(text):
            return "install", "builds the project (its ecosystem's build step)"
    if _PLACEHOLDER.search(text):
        return "skip", "contains a placeholder for the reader to fill in"
    if first in facts.scripts and not _SERVER.search(first_line):
        return "usage", (
            "a usage example of the project's own command: run as a check after setup, "
            "not part of installing"
        )
    if first in FOREIGN_TOOLS:
        return "skip", f"`{first}` is another operating system's package manager"
    if (
        "\\" in first
        or first in ("py", "set", "cmd", "powershell")
        or re.search(r"\\Scripts\\|\.(bat|ps1|exe)\b", first_line)
    ):
        return "skip", "a Windows command"
    if first in UNAVAILABLE_TOOLS and not (aec and first in installable):
        return "skip", f"`{first}` is not part of this environment (no {first} here)"
    if first == "git":
        if len(words) > 1 and words[1] == "clone":
            return "skip", "the repository is already checked out at the working directory"
        return "skip", "git operations on the checkout are not setup steps"
    if first == "cd":
        return "state", ""
    if first in ("export", "unset") or (re.match(r"^[A-Za-z_]\w*=\S*$", first) and len(words) == 1):
        return "state", ""
    if activation_path(text):
        return "env_activate", ""
    if _VENV_CREATE.match(text):
        return "env_create", ""
    if first in ("apt-get", "apt", "aptitude"):
        if len(words) > 1 and words[1] == "update":
            return "apt_update", ""
        if len(words) > 1 and words[1] == "install":
            return "install", ""
        return "skip", "not an installation step"
    if _PIP_INSTALL.match(text) or re.match(
        r"^(?:poetry|pipenv|pdm|hatch|uv)\s+(?:install|sync|lock)\b|^pipx\s+install\b|"
        r"^python\S*\s+setup\.py\s+(?:install|develop|build\w*)\b|^pip-sync\b|^flit\s+install\b",
        text,
    ):
        return "install", ""
    if first in ("mkdir", "cp", "mv", "ln", "touch", "chmod"):
        return "files", ""
    if first == "make":
        target = words[1] if len(words) > 1 else ""
        if re.search(r"install|setup|dev|deps|env|requirements|build", target):
            return "install", ""
        if "test" in target:
            return "test", ""
        return "skip", f"`make {target}` is not an installation step"
    if (
        first in ("pytest", "tox", "nox")
        or re.match(r"^python\S*\s+-m\s+(?:pytest|unittest|tox|nox)\b", text)
        or re.match(r"^python\S*\s+(?:setup\.py\s+test|runtests\.py)\b", text)
    ):
        return "test", ""
    if first in ("pip-compile", "pre-commit", "twine", "curl", "wget", "echo", "cat", "printf"):
        return "skip", f"`{first}` does not set up the environment"
    if _SERVER.search(first_line):
        return "skip", "starts a server or an interactive session (runs until stopped)"
    if len(text) > 400 or "\n" in text:
        return "skip", "a multi-line script, shown as an example"
    return "usage", "a usage example: run as a check after setup, not part of installing"


def sections_of(text: str) -> list[tuple[int, str]]:
    """(offset, title) of every heading, in order (Markdown ``#`` and reStructuredText)."""
    out: list[tuple[int, str]] = []
    offset = 0
    lines = text.split("\n")
    for i, line in enumerate(lines):
        match = _HEADING_MD.match(line)
        if match:
            out.append((offset, match.group("title").strip()))
        elif (
            i + 1 < len(lines)
            and line.strip()
            and _RST_UNDERLINE.match(lines[i + 1])
            and len(lines[i + 1].strip()) >= len(line.strip()) - 1
        ):
            out.append((offset, line.strip()))
        offset += len(line) + 1
    return out


def readme_steps(text: str, name: str, facts: RepoFacts, aec: bool = False) -> list[ReadmeStep]:
    commands = extract_commands(text, name, known=facts.scripts)
    headings = sections_of(text)
    steps: list[ReadmeStep] = []
    cursor = 0
    for index, command in enumerate(commands):
        probe = command.split("\n", 1)[0].strip()[:60]
        found = text.find(probe, cursor) if probe else -1
        if found < 0:
            found = text.find(probe.split()[0], cursor) if probe else -1
        if found >= 0:
            cursor = found + 1
        where = found if found >= 0 else cursor
        section = ""
        for offset, title in headings:
            if offset <= where:
                section = title
        kind, reason = classify_command(command, facts, aec)
        steps.append(ReadmeStep(index, command, section, kind, reason))
    return steps


def python_blocks(text: str, name: str) -> list[str]:
    """The README's Python examples (fenced or directive blocks named ``python``)."""
    suffix = PurePath(name).suffix.lower()
    blocks = (
        list(_rst_blocks(text)) if suffix in (".rst", ".rest") else list(_markdown_blocks(text))
    )
    out = []
    for block in blocks:
        if block.language in ("python", "py", "python3") and not block.inline:
            body = "\n".join(block.lines).strip("\n")
            if body.strip() and ">>>" not in body:
                out.append(body)
    return out
