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
its links, and judged by content, never by time (a backdated file is still not the image's). It
passes when a Debian package owns it unchanged (a venv's ``python`` is a link to the system's),
when the image had that very file before the setup (``IMAGE_TOOLS_SCRIPT``), when an installer's
``RECORD`` lists it with its sha256 (pip's console scripts), or when it is a compiled program
outside the repository and ``/tmp`` that shadows no packaged program of its name (rustup, nvm, a
Go tarball). Any other script fails, and so does a compiled wrapper ahead of the system's program
on PATH (a Go program named ``go`` in ``/usr/local/bin``). Where the command runs Python, the
interpreter's site directories are checked (``probes/site_integrity.py``: start-up files, the
files every ``RECORD`` lists, a test runner's module shadowed); where it runs Cargo, Cargo's
configuration above the checkout and in its home.
"""

from __future__ import annotations

import base64
import posixpath
import re
import shlex
from collections.abc import Collection, Mapping
from dataclasses import dataclass

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
    "RUSTC_WRAPPER": "runs every rustc call through another program",
    "RUSTC_WORKSPACE_WRAPPER": "runs the workspace's rustc calls through another program",
    "CARGO_BUILD_RUSTC_WRAPPER": "runs every rustc call through another program",
    "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER": "runs rustc through another program",
    "RUSTC": "replaces the compiler cargo runs",
    "CARGO_BUILD_RUSTC": "replaces the compiler cargo runs",
}
# Dropped whatever their value, by name: a test binary run through another program.
_DROPPED_NAMES = {
    re.compile(r"CARGO_TARGET_\w+_RUNNER"): "runs the test binaries through another program",
}
# Dropped when their value holds one of these: they select, skip or replace the tests.
_SUSPICIOUS = {
    "GOFLAGS": re.compile(r"-(?:run|skip|list|exec|overlay|toolexec|modfile)\b"),
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
        for pattern, reason in _DROPPED_NAMES.items():
            if why is None and pattern.fullmatch(name):
                why = reason
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


# Run in the box before the setup, with the image's own PATH: what each program name was then.
IMAGE_TOOLS_SCRIPT = r"""
for name in @NAMES@; do
  type -ap -- "$name" 2>/dev/null | while IFS= read -r p; do
    r=$(readlink -f -- "$p" 2>/dev/null) || r=$p
    [ -f "$r" ] && printf 'image\t%s\t%s\n' "$r" "$(sha256sum -- "$r" | cut -d' ' -f1)"
  done
done
true
"""

# Run in the graded shell after the setup: each program, what it shadows, and the installers'
# RECORD lines that may list it (a pip console script).
TOOLS_SCRIPT = r"""
owner() {
  for c in "$@"; do
    o=$(dpkg -S -- "$c" 2>/dev/null | head -n1 | cut -d: -f1) || true
    [ -n "$o" ] && { printf '%s' "$o"; return; }
  done
}
printf 'repo\t%s\n' "$(pwd -P)"
for name in @NAMES@; do
  p=$(command -v -- "$name" 2>/dev/null) || { printf 'tool\t%s\t-\n' "$name"; continue; }
  t=$(type -t -- "$name")
  r=$(readlink -f -- "$p" 2>/dev/null) || r=$p
  script=0; [ "$(head -c2 -- "$r" 2>/dev/null)" = '#!' ] && script=1
  elf=0; [ "$(head -c4 -- "$r" 2>/dev/null | tail -c3)" = 'ELF' ] && elf=1
  sum=$(sha256sum -- "$r" 2>/dev/null | cut -d' ' -f1)
  pkg=$(owner "$r" "$p" "${r#/usr}")
  shebang=""; [ "$script" = 1 ] && shebang=$(head -n1 -- "$r" | head -c200 | tr -d '\t\r')
  changed=""
  [ -n "$pkg" ] && changed=$(dpkg -V -- "$pkg" 2>/dev/null | grep -F -- " $r" | head -n1)
  printf 'tool\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
    "$name" "$t" "$p" "$r" "$script" "$elf" "$sum" "$pkg" "$changed" "$shebang"
  [ "$t" = file ] || continue
  type -ap -- "$name" 2>/dev/null | tail -n +2 | while IFS= read -r q; do
    rq=$(readlink -f -- "$q" 2>/dev/null) || rq=$q
    [ "$rq" = "$r" ] && continue
    printf 'shadows\t%s\t%s\t%s\n' "$name" "$q" "$(owner "$rq" "$q" "${rq#/usr}")"
  done
  case $r in
    */bin/*)
      for rec in "${r%/bin/*}"/lib/python3*/*-packages/*.dist-info/RECORD; do
        [ -f "$rec" ] || continue
        grep -F -- "/bin/${r##*/}," "$rec" | head -n3 | while IFS= read -r line; do
          printf 'record\t%s\t%s\t%s\n' "$name" "$rec" "$line"
        done
      done ;;
  esac
done
# Cargo also reads the configuration of every folder above the checkout and of its home: a
# test runner or compiler wrapper set there is not the checkout's (its own .cargo is restored).
if command -v cargo >/dev/null 2>&1; then
  keys='runner|rustc|rustc-wrapper|rustc-workspace-wrapper|rustflags'
  d=$(dirname -- "$(pwd -P)"); dirs="${CARGO_HOME:-$HOME/.cargo}"
  while :; do dirs="$dirs ${d%/}/.cargo"; [ "$d" = / ] && break; d=$(dirname -- "$d"); done
  for c in $dirs; do
    for f in "$c/config" "$c/config.toml"; do
      [ -f "$f" ] || continue
      grep -E "^[[:space:]]*($keys)[[:space:]]*=" -- "$f" | head -n3 | while IFS= read -r line; do
        printf 'cargoconf\t%s\t%s\n' "$f" "$(printf '%s' "$line" | tr -d '\t' | head -c200)"
      done
    done
  done
fi
true
"""


# Run in the graded shell after TOOLS_SCRIPT where the command runs Python: the interpreter's
# site directories against the installers' RECORDs (probes/site_integrity.py, run with -I -S so
# nothing the setup left runs), and what only dpkg can vouch for asked of dpkg.
SITE_SCRIPT = r"""
py=""
for n in @PYTHONS@; do py=$(command -v -- "$n" 2>/dev/null) && break; done
[ -n "$py" ] && "$py" -I -S @PROBE@ 2>&1 | head -n 500 \
| while IFS=$'\t' read -r kind path why sum; do
  case $kind in
    system)
      pkg=$(dpkg -S -- "$path" 2>/dev/null | head -n1 | cut -d: -f1) || true
      if [ -z "$pkg" ]; then printf 'site\tproblem\t%s\t%s\t%s\n' "$path" "$why" "$sum"
      elif dpkg -V -- "$pkg" 2>/dev/null | grep -F -- " $path" | grep -q '^..5'; then
        printf 'site\tproblem\t%s\t%s\t%s\n' "$path" "changed since $pkg installed it" "$sum"
      fi ;;
    stdlib)
      for pkg in $(dpkg -S -- "$path/os.py" "$path/unittest/runner.py" 2>/dev/null \
                   | cut -d: -f1 | sort -u); do
        dpkg -V -- "$pkg" 2>/dev/null | grep '^..5' | while read -r _ f; do
          printf 'site\tproblem\t%s\t%s\t-\n' "${f##* }" "changed since $pkg installed it"
        done
      done ;;
    problem|checked) printf 'site\t%s\t%s\t%s\t%s\n' "$kind" "$path" "$why" "${sum:--}" ;;
  esac
done
true
"""
PYTHONS = ("python", "python3")


def site_findings(output: str) -> set[tuple[str, str]]:
    """``SITE_SCRIPT``'s findings as (path, sha256): run before the setup, what the image had."""
    return {
        (fields[2], fields[4])
        for fields in (line.split("\t") for line in output.splitlines())
        if len(fields) == 5 and fields[:2] == ["site", "problem"]
    }


def site_checks(
    output: str, image: Collection[tuple[str, str]] = ()
) -> tuple[list[ToolCheck], str | None]:
    """``SITE_SCRIPT``'s lines: a check per file that fails (its problem set), and what was
    verified (None where the check did not run). ``image``: the findings before the setup
    (``site_findings``), the image's own, which stand where the setup left them unchanged."""
    checks: list[ToolCheck] = []
    summary: str | None = None
    for line in output.splitlines():
        fields = line.split("\t")
        if len(fields) != 5 or fields[0] != "site" or (fields[2], fields[4]) in image:
            continue
        if fields[1] == "checked":
            summary = f"{fields[2]} recorded files of the interpreter's site directories, "
            summary += f"{fields[3]} bytes hashed"
        elif fields[1] == "problem":
            checks.append(
                ToolCheck(
                    name="python-site",
                    path=fields[2],
                    resolved=fields[2],
                    problem=f"{fields[2]}: {fields[3]}",
                )
            )
    return checks, summary


def _under(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def parse_image_tools(output: str) -> dict[str, str]:
    """``IMAGE_TOOLS_SCRIPT``'s lines: each program file the image had, to its sha256."""
    found: dict[str, str] = {}
    for line in output.splitlines():
        fields = line.split("\t")
        if len(fields) == 3 and fields[0] == "image":
            found[fields[1]] = fields[2]
    return found


def _recorded(real: str, sha256: str, lines: list[tuple[str, str]]) -> bool:
    """Whether an installer's RECORD (``site-packages/x.dist-info/RECORD``) lists ``real`` with
    its sha256: pip's console scripts are, a hand-written ``pytest`` beside them is not."""
    try:
        wanted = base64.urlsafe_b64encode(bytes.fromhex(sha256)).rstrip(b"=").decode()
    except ValueError:
        return False
    for record, line in lines:
        parts = line.rsplit(",", 2)
        if len(parts) != 3 or parts[1] != f"sha256={wanted}":
            continue
        site = posixpath.dirname(posixpath.dirname(record))
        if posixpath.normpath(posixpath.join(site, parts[0])) == real:
            return True
    return False


def check_tools(
    output: str, image: Mapping[str, str] | None = None, own: Collection[str] = ()
) -> list[ToolCheck]:
    """``TOOLS_SCRIPT``'s lines as checks, each with its problem ("" where it passes).
    ``image``: the program files the image had before the setup, to their sha256
    (``parse_image_tools``); ``own``: the checkout's files the setup left unchanged (absolute
    paths), the case's own scripts (``./gradlew``)."""
    repo = "/data/project"
    rows: list[list[str]] = []
    shadows: dict[str, list[tuple[str, str]]] = {}
    records: dict[str, list[tuple[str, str]]] = {}
    configs: list[ToolCheck] = []
    for line in output.splitlines():
        fields = line.split("\t")
        if fields[0] == "repo" and len(fields) > 1:
            repo = fields[1]
        elif fields[0] == "shadows" and len(fields) == 4:
            shadows.setdefault(fields[1], []).append((fields[2], fields[3]))
        elif fields[0] == "record" and len(fields) == 4:
            records.setdefault(fields[1], []).append((fields[2], fields[3]))
        elif fields[0] == "tool" and len(fields) >= 3:
            rows.append(fields)
        elif fields[0] == "cargoconf" and len(fields) == 3:
            configs.append(
                ToolCheck(
                    name="cargo-config",
                    path=fields[1],
                    resolved=fields[1],
                    problem=f"{fields[1]}: a Cargo configuration outside the checkout that "
                    f"replaces the compiler or the test runner: {fields[2].strip()}",
                )
            )
    checks: list[ToolCheck] = []
    for fields in rows:
        if fields[2] == "-":
            checks.append(ToolCheck(name=fields[1]))
            continue
        if len(fields) < 11:
            continue
        _, name, kind, path, real, script, elf, sha, package, changed, shebang = fields[:11]
        check = ToolCheck(
            name=name,
            path=path,
            resolved=real,
            package=package or None,
            script=script == "1",
            created=image is None or (image or {}).get(real) != sha,
        )
        facts = _Facts(
            kind=kind,
            elf=elf == "1",
            changed=changed,
            repo=repo,
            shebang=shebang,
            image=image is not None and not check.created,
            own=real in own,
            recorded=_recorded(real, sha, records.get(name, [])),
            shadows=[(q, pkg) for q, pkg in shadows.get(name, []) if pkg],
        )
        check.problem = _problem(check, facts)
        checks.append(check)
    return checks + configs


@dataclass
class _Facts:
    kind: str
    elf: bool
    changed: str
    repo: str
    shebang: str
    image: bool  # the same file, same content, was there before the setup
    own: bool  # a file of the case's checkout the setup left unchanged
    recorded: bool  # an installer's RECORD lists it with its sha256
    shadows: list[tuple[str, str]]  # a packaged program of its name later on PATH, its package


def _problem(check: ToolCheck, facts: _Facts) -> str:
    real = check.resolved or ""
    scratch = [facts.repo, "/tmp", "/var/tmp", "/dev/shm"]
    if facts.kind in ("builtin", "keyword"):
        # bash's own (echo, test, cd): the graded shell is a fresh bash, nothing redefines them.
        return ""
    if facts.kind != "file":
        return f"`{check.name}` is a shell {facts.kind}, not a program"
    if check.package:
        # dpkg -V's third column is the checksum: '5' where the file's content differs.
        changed = facts.changed
        if changed and len(changed) > 2 and changed[2] == "5":
            return f"{real} belongs to {check.package} but was changed: {changed.strip()}"
        return ""
    # Content, not times: a backdated file (touch -d) is still not the image's.
    if facts.image or facts.own or facts.recorded:
        return ""
    # npm's own launchers (nvm's `npm`, a project's node_modules/.bin/jest).
    if "/node_modules/" in real and check.name not in interpreters() and check.script:
        return ""
    if check.script or not facts.elf:
        return f"{check.path} -> {real}: a script the setup wrote, not the real program"
    if _under(real, scratch):
        return f"{check.path} -> {real}: a program the setup built in the repository or /tmp"
    if facts.shadows:
        first, package = facts.shadows[0]
        return (
            f"{check.path} -> {real}: a program the setup put on PATH ahead of {first} "
            f"({package}), in no package and no installer's RECORD"
        )
    # A toolchain the setup installed where none was (rustup's cargo, a Go tarball).
    return ""
