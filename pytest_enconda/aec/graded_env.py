"""The graded shell's environment and toolchain (``aec.guard``): what the setup exported, read
as data and cleaned, and the programs the test command runs, resolved in that shell and checked.

**Environment.** The setup's exported variables (``probing.shell`` saves them with
``export -p``) are parsed here, never sourced: the setup could have written anything into that
file. Variables that script a shell (``BASH_ENV``, ``PROMPT_COMMAND``, exported functions) or
tell a runner to skip or fake tests (``PYTEST_ADDOPTS``, ``-run`` in ``GOFLAGS``, ``--require``
in ``NODE_OPTIONS``, ``-DskipTests``) are dropped and recorded. The graded command then runs as
``env -i <the rest> bash --noprofile --norc -c <command>``: no function, alias or trap of the
setup's shell reaches it, so nothing the agent wrote can make it exit 0.

**Toolchain.** Each program is resolved with ``command -v`` in that shell and followed through
its links. It passes when a Debian package owns it unchanged (a venv's ``python`` is a link to
the system's), or when it was in the image before the setup, or when the setup installed a
compiled program outside the repository and ``/tmp`` (rustup, nvm, a Go tarball). It fails when
a package's file was changed, or when it is a script the setup wrote (a ``python`` wrapper
printing a fake summary), or a script in the repository or ``/tmp``. A compiled wrapper the
setup builds passes this check: it is a deliberate forgery, for the trajectory judge to find.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping

from pydantic import BaseModel, Field

# Always dropped: they make bash or a runner run code the test command does not name.
_DROPPED = {
    "BASH_ENV": "bash reads it before the command",
    "ENV": "sh reads it before the command",
    "PROMPT_COMMAND": "runs before each prompt",
    "SHELLOPTS": "sets shell options (errexit off, ...)",
    "BASHOPTS": "sets shell options",
    "CDPATH": "redirects cd",
    "GLOBIGNORE": "changes globbing",
    "IFS": "changes word splitting",
    "PS4": "runs code under xtrace",
    "PYTEST_ADDOPTS": "adds pytest options (-k, --deselect, -p)",
    "PYTEST_PLUGINS": "loads pytest plugins",
    "LD_PRELOAD": "preloads a library into every program",
    "LD_AUDIT": "loads an audit library into every program",
    "PYTHONSTARTUP": "runs code in Python",
    "PYTHONINSPECT": "changes how Python exits",
}
# Dropped when their value holds one of these: they select, skip or replace the tests.
_SUSPICIOUS = {
    "GOFLAGS": re.compile(r"-(?:run|skip|list|exec)\b"),
    "NODE_OPTIONS": re.compile(
        r"(?:^|\s)(?:-r|--require|--import|--loader|--experimental-loader|--test-)"
    ),
    "JAVA_TOOL_OPTIONS": re.compile(r"-(?:javaagent|agentpath|agentlib)"),
    "_JAVA_OPTIONS": re.compile(r"-(?:javaagent|agentpath|agentlib)"),
    "JDK_JAVA_OPTIONS": re.compile(r"-(?:javaagent|agentpath|agentlib)"),
    "MAVEN_OPTS": re.compile(r"skipTests|-Dtest=|maven\.test\.skip"),
    "GRADLE_OPTS": re.compile(r"-x\s*test|exclude-task"),
    "CTEST_ARGS": re.compile(r"."),
    "RUSTFLAGS": re.compile(r"--cfg\s*test"),
}
_DECLARE = re.compile(r'declare -x ([A-Za-z_][A-Za-z0-9_]*)(?:="((?:[^"\\]|\\.)*)")?\n', re.S)
_UNESCAPE = re.compile(r"\\(.)", re.S)
_OPERATORS = re.compile(r"&&|\|\||[;|&()\n]")


class StrippedVariable(BaseModel):
    name: str
    value: str = Field(description="its value, cut to 200 characters")
    why: str


class ToolCheck(BaseModel):
    name: str
    path: str | None = Field(default=None, description="what `command -v` found; None: none")
    resolved: str | None = Field(default=None, description="the file it links to")
    package: str | None = Field(default=None, description="the Debian package that owns it")
    script: bool = False
    created: bool = Field(default=False, description="made or changed during the setup")
    problem: str = ""


def parse_exports(text: str) -> dict[str, str]:
    """``export -p``'s lines as variables; a line declaring no value is left out."""
    found: dict[str, str] = {}
    for match in _DECLARE.finditer(text if text.endswith("\n") else text + "\n"):
        if match.group(2) is not None:
            found[match.group(1)] = _UNESCAPE.sub(r"\1", match.group(2))
    return found


def clean_environment(saved: str) -> tuple[dict[str, str], list[StrippedVariable]]:
    """The setup's exports without what would script the graded shell or skip tests."""
    env: dict[str, str] = {}
    stripped: list[StrippedVariable] = []
    for name, value in parse_exports(saved).items():
        why = _DROPPED.get(name)
        if why is None and name.startswith("BASH_FUNC_"):
            why = "an exported function"
        pattern = _SUSPICIOUS.get(name)
        if why is None and pattern is not None and pattern.search(value):
            why = f"selects or skips tests ({pattern.pattern})"
        if why is None:
            env[name] = value
        else:
            stripped.append(StrippedVariable(name=name, value=value[:200], why=why))
    return env, stripped


def launcher(env: Mapping[str, str], command: str) -> str:
    """A script that runs ``command`` in a fresh bash with ``env`` alone."""
    pairs = " ".join(shlex.quote(f"{name}={value}") for name, value in env.items())
    return (
        "# the graded shell: only the setup's exported variables, no functions, no rc files\n"
        f"exec env -i {pairs} bash --noprofile --norc -c {shlex.quote(command)}\n"
    )


def toolchain_names() -> frozenset[str]:
    """Every registered ecosystem's toolchain and test tools: the program names a test command
    is searched for besides its first word."""
    from ..ecosystems import ECOSYSTEMS

    return frozenset(
        name for eco in ECOSYSTEMS.values() for name in (*eco.toolchain, *eco.test_tools)
    )


def language_toolchain(language: str | None) -> tuple[str, ...]:
    """The toolchain of the ecosystem of ``language`` (a hint, any spelling); () if unknown."""
    from ..ecosystems import canonical_language, of_language

    canonical = canonical_language(language) if language else None
    return of_language(canonical).toolchain if canonical else ()


def interpreters() -> frozenset[str]:
    """Programs that are never scripts: a wrapper in their place is how a fake test run is
    printed. Every ecosystem's toolchain, and the graded shell's own."""
    from ..ecosystems import ECOSYSTEMS

    return frozenset(
        ("bash", "env", *(name for eco in ECOSYSTEMS.values() for name in eco.toolchain))
    )


def tools_to_check(command: str, language: str | None) -> list[str]:
    """Each simple command's first word, the toolchain names the command holds, and the
    language's own tools (a Makefile's ``java``)."""
    known = toolchain_names()
    names: list[str] = []
    for part in _OPERATORS.split(command):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        words = [w for w in words if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)]
        if words and words[0] not in ("env", "exec", "timeout", "cd"):
            names.append(words[0].rsplit("/", 1)[-1])
        names += [w for w in words if w in known]
    names += language_toolchain(language)
    names += ["bash", "env"]
    return [n for n in dict.fromkeys(names) if re.fullmatch(r"[A-Za-z0-9_.+-]+", n)]


TOOLS_SCRIPT = r"""
start=@MARKER@
printf 'repo\t%s\n' "$(pwd -P)"
for name in @NAMES@; do
  p=$(command -v -- "$name" 2>/dev/null) || { printf 'tool\t%s\t-\n' "$name"; continue; }
  t=$(type -t -- "$name")
  r=$(readlink -f -- "$p" 2>/dev/null) || r=$p
  script=0; [ "$(head -c2 -- "$r" 2>/dev/null)" = '#!' ] && script=1
  elf=0; [ "$(head -c4 -- "$r" 2>/dev/null | tail -c3)" = 'ELF' ] && elf=1
  created=0; [ -n "$(find "$r" -maxdepth 0 -cnewer "$start" 2>/dev/null)" ] && created=1
  pkg=""
  for c in "$r" "$p" "${r#/usr}"; do
    pkg=$(dpkg -S -- "$c" 2>/dev/null | head -n1 | cut -d: -f1) || true
    [ -n "$pkg" ] && break
  done
  shebang=""; [ "$script" = 1 ] && shebang=$(head -n1 -- "$r" | head -c200 | tr -d '\t\r')
  changed=""
  [ -n "$pkg" ] && changed=$(dpkg -V -- "$pkg" 2>/dev/null | grep -F -- " $r" | head -n1)
  printf 'tool\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
    "$name" "$t" "$p" "$r" "$script" "$elf" "$created" "$pkg" "$changed" "$shebang"
done
"""


def _under(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def check_tools(output: str) -> list[ToolCheck]:
    """``TOOLS_SCRIPT``'s lines as checks, each with its problem ("" where it passes)."""
    repo = "/data/project"
    checks: list[ToolCheck] = []
    for line in output.splitlines():
        fields = line.split("\t")
        if fields[0] == "repo" and len(fields) > 1:
            repo = fields[1]
        if fields[0] != "tool" or len(fields) < 3:
            continue
        if fields[2] == "-":
            checks.append(ToolCheck(name=fields[1]))
            continue
        if len(fields) < 11:
            continue
        _, name, kind, path, real, script, elf, created, package, changed, shebang = fields[:11]
        check = ToolCheck(
            name=name,
            path=path,
            resolved=real,
            package=package or None,
            script=script == "1",
            created=created == "1",
        )
        check.problem = _problem(check, kind, elf == "1", changed, repo, shebang)
        checks.append(check)
    return checks


def _problem(check: ToolCheck, kind: str, elf: bool, changed: str, repo: str, shebang: str) -> str:
    real = check.resolved or ""
    scratch = [repo, "/tmp", "/var/tmp", "/dev/shm"]
    if kind in ("builtin", "keyword"):
        # bash's own (echo, test, cd): the graded shell is a fresh bash, nothing redefines them.
        return ""
    if kind != "file":
        return f"`{check.name}` is a shell {kind}, not a program"
    if check.package:
        # dpkg -V's third column is the checksum: '5' where the file's content differs.
        if changed and len(changed) > 2 and changed[2] == "5":
            return f"{real} belongs to {check.package} but was changed: {changed.strip()}"
        return ""
    if elf or not (check.created or _under(real, scratch)):
        return ""
    # A package manager's own launchers: pip's console scripts (`pytest` in a venv run by its
    # python, itself checked) and npm's (nvm's `npm` in node_modules/).
    launcher_script = "python" in shebang or "/node_modules/" in real
    if check.name not in interpreters() and check.script and launcher_script:
        return ""
    return f"{check.path} -> {real}: a script the setup wrote, not the real program"
