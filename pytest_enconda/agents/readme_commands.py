"""Shell commands of a README, in order, as a literal reader would type them.

EnConda-Bench checks that an injected error really breaks setup by running what the README says.
This module makes that check deterministic: no model decides which lines are commands, only the
README's own markup (fenced blocks, reStructuredText directives, ``::`` literal blocks, console
prompts) and a small content heuristic for blocks that do not name their language.

``extract_commands`` never raises: a malformed README yields whatever can be read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import PurePath

__all__ = ["build_script", "extract_commands"]

# Languages whose blocks are commands as written.
SHELL_LANGUAGES = frozenset(
    {"bash", "sh", "shell", "zsh", "shell-script", "fish", "ksh", "csh", "tcsh"}
)
# Languages of a terminal *session*: prompts mark the commands; without prompts, such a block
# is as often program output as commands, so the content decides.
SESSION_LANGUAGES = frozenset(
    {"console", "shell-session", "shellsession", "sh-session", "bash-session", "terminal"}
)
# Languages often put on shell commands by mistake: taken only when every line is a command.
MISLABELLED_LANGUAGES = frozenset(
    {"python", "py", "python3", "text", "txt", "plaintext", "cmd", "bat", "batch"}
)
# Languages that say nothing: the content decides (``none`` only switches highlighting off).
NEUTRAL_LANGUAGES = frozenset({"", "none", "default", "plain", "nohighlight"})

_FENCE = re.compile(r"^(?P<prefix>[ \t>]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_PROMPT = re.compile(
    r"""^\s*
    (?:\([\w.@-]+\)\s*)?                 # an activated environment: (venv)
    (?:[\w.-]+@[\w.-]+(?::\S*)?\s*)?     # user@host:~/path
    (?P<sign>[$%>])(?:\ |$)              # the prompt sign, then a space or nothing
    """,
    re.VERBOSE,
)
# A line that is only inline code (a list marker may precede it): `pip install x` / ``make``.
_INLINE_LINE = re.compile(
    r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?P<tick>`{1,2})(?P<code>[^`]+)(?P=tick)\s*$"
)
_INLINE_SPAN = re.compile(r"(?<!`)(?P<tick>`{1,2})(?!`)(?P<code>[^`]+?)(?<!`)(?P=tick)(?![`_])")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEREDOC = re.compile(r"<<-?\s*(?P<q>['\"]?)(?P<word>[A-Za-z_][\w]*)(?P=q)")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_]\w*=\S*$")
_BIBTEX = re.compile(r"^\s*@[A-Za-z]+\s*\{")

# First words that make a line a shell command without doubt.
_KNOWN_COMMANDS = """
    apt apt-get aptitude yum dnf zypper apk pacman brew port choco winget snap
    pip pip3 pipx pip-compile pip-sync python python3 python2 py conda mamba micromamba pyenv
    virtualenv venv poetry pipenv pdm hatch flit uv uvx rye tox nox pytest pre-commit twine
    setup.py git svn hg curl wget tar unzip gunzip zip make cmake ninja meson gcc g++ clang
    cargo rustup go npm npx yarn pnpm node bun deno bower gem bundle ruby java javac mvn gradle
    ant docker docker-compose podman kubectl helm vagrant ansible ansible-playbook ssh
    cd ls mkdir rm rmdir cp mv ln touch cat echo printf export source set unset alias chmod
    chown sudo su env which whereis test eval exec bash sh zsh fish sed awk grep find xargs
    tee head tail sort wc true false mount systemctl service nohup
    jupyter ipython streamlit flask django-admin gunicorn uvicorn celery redis-server
    mysql psql createdb createuser sqlite3 mongod pyinstaller tensorboard
    sphinx-build mkdocs coverage black ruff flake8 mypy isort pylint bumpversion
    conda-env activate deactivate workon mkvirtualenv nvm sdk rbenv asdf
"""
KNOWN_COMMANDS = frozenset(_KNOWN_COMMANDS.split())
# Markers of Python (or a Python REPL) in a block that names no language.
_PYTHON_LINE = re.compile(
    r"""^\s*(?:
        >>>|\.\.\.\ |
        import\s+[\w.]+|from\s+[\w.]+\s+import\b|
        (?:async\s+)?def\s+\w+\s*\(|class\s+\w+\s*[(:]|@\w[\w.]*(?:\(|$)|
        if\s+__name__\s*==|return\b|print\s*\(|with\s+.+\bas\b.+:$|for\s+\w+\s+in\s+.+:$|
        [\w.\[\]'"]+\s*=\s*\S.*[()\[\]{}]|   # assignment with a call or literal
        \w+\s*\(.*\)\s*$                      # a bare call: foo(...)
    )""",
    re.VERBOSE,
)
# Lines that are not commands in any language a reader would type at a shell.
_NOT_SHELL_LINE = re.compile(
    r"""^\s*(?:
        [{}\[\]]|"[^"]*"\s*:|                 # JSON
        [\w.-]+\s*:\s*(?:\S.*)?$|             # YAML / key: value / output headings
        [├└│─|+]|                             # directory trees and tables
        <[A-Za-z!/]|                          # HTML / XML
        https?://|                            # a bare URL
        \[[\w.-]+\]\s*$                       # INI section
    )""",
    re.VERBOSE,
)
# A line shaped like ``word --flag arg path``: weak evidence of a command.
_COMMAND_SHAPE = re.compile(r"^[A-Za-z.~/][\w.~/+-]*(?:\s+[^\s]+)*$")
_SENTENCE_END = re.compile(r"[.,;:!?)]$")
_PROSE_MARK = re.compile(r"`|,\s")


@dataclass(frozen=True)
class _Block:
    language: str
    lines: list[str]
    # Blocks explicitly marked as a shell session with a prompt (``.. prompt:: bash``).
    prompt_directive: bool = False
    # A line that is nothing but inline code: kept only when it starts with a known command.
    inline: bool = False


# ----------------------------------------------------------------------------- public API


def extract_commands(
    text: str, filename: str = "README.md", known: Iterable[str] = ()
) -> list[str]:
    """The README's shell commands in order of appearance, prompts stripped, comments dropped.

    ``known`` adds first words that make a line a command, beside ``KNOWN_COMMANDS``: a
    project's own console scripts (cclib's README shows `ccget scfenergies --file x.log` as a
    line of inline code, which is kept only when its first word is a known command)."""
    try:
        words = frozenset(word.lower() for word in known)
        return _extract(text if isinstance(text, str) else str(text), filename or "", words)
    except Exception:
        # The contract is "never raises": a bug in a heuristic must not stop a benchmark run.
        return []


def build_script(commands: list[str]) -> str:
    """A bash script running ``commands`` one per line (the harness adds ``set -eo pipefail``)."""
    body = "\n".join(command for command in commands if command.strip())
    return "#!/bin/bash\n" + (body + "\n" if body else "")


# ----------------------------------------------------------------------------- dispatch


def _extract(text: str, filename: str, known: frozenset[str]) -> list[str]:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    suffix = PurePath(filename).suffix.lower()
    if suffix in (".md", ".markdown", ".mdown", ".mkd"):
        blocks = list(_markdown_blocks(text))
    elif suffix in (".rst", ".rest"):
        blocks = list(_rst_blocks(text))
    else:
        # No telling suffix (README, README.txt): fences are unambiguous, so Markdown first.
        blocks = list(_markdown_blocks(text))
        if not any(_block_commands(block, known) for block in blocks):
            blocks = list(_rst_blocks(text))
    commands: list[str] = []
    for block in blocks:
        commands.extend(_block_commands(block, known))
    return commands


def _language(info: str) -> str:
    """``{.bash title="x"}`` / ``bash $`` / ``Shell`` → ``bash``."""
    word = info.strip().split(maxsplit=1)[0] if info.strip() else ""
    word = word.strip("{}.").split(",")[0].lower()
    if word.startswith("language-"):
        word = word[len("language-") :]
    return word


# ----------------------------------------------------------------------------- Markdown


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _strip_container(line: str, quote_depth: int, indent: int) -> str:
    """Remove the blockquote markers and indentation that the opening fence had."""
    for _ in range(quote_depth):
        stripped = line.lstrip(" ")
        if stripped.startswith(">"):
            line = stripped[1:]
            if line.startswith(" "):
                line = line[1:]
    removable = len(line) - len(line.lstrip(" "))
    return line[min(indent, removable) :]


def _markdown_blocks(text: str) -> Iterator[_Block]:
    lines = text.split("\n")
    i = 0
    after_blank = True
    while i < len(lines):
        line = lines[i]
        match = _FENCE.match(line)
        if match and not (match.group("fence")[0] == "`" and "`" in match.group("info")):
            block, i = _fenced_block(lines, i, match)
            yield block
            after_blank = False
            continue
        if not line.strip():
            after_blank = True
            i += 1
            continue
        if after_blank and _indent_of(line) >= 4:
            # An indented code block: only the content can say whether it is shell.
            body: list[str] = []
            while i < len(lines) and (not lines[i].strip() or _indent_of(lines[i]) >= 4):
                if _FENCE.match(lines[i]):
                    break
                body.append(lines[i][4:])
                i += 1
            yield _Block("", body)
            after_blank = not body or not body[-1].strip()
            continue
        yield from _inline_blocks(line, ("`", "``"))
        after_blank = False
        i += 1


def _inline_blocks(line: str, ticks: tuple[str, ...]) -> Iterator[_Block]:
    """Inline code that a reader would type: a line that is only code, or a step's command.

    A span counts when the line is nothing but that span, or when it is introduced as an
    instruction (a list item, or after ``:`` / "run" / "type" / "execute"); the span must then
    start with a known command and have an argument, so that a mention such as `pip` is not one.
    """
    whole = _INLINE_LINE.match(line)
    if whole:
        if whole.group("tick") in ticks:
            yield _Block("", [whole.group("code")], inline=True)
        return
    if "`" not in line:
        return
    is_step = bool(_LIST_ITEM.match(line))
    for span in _INLINE_SPAN.finditer(line):
        if span.group("tick") not in ticks:
            continue
        code = span.group("code").strip()
        before = line[: span.start()].rstrip().lower()
        introduced = is_step or before.endswith((":", "run", "type", "execute", "running"))
        if introduced and len(code.split()) >= 2:
            yield _Block("", [code], inline=True)


def _fenced_block(lines: list[str], i: int, match: re.Match[str]) -> tuple[_Block, int]:
    prefix = match.group("prefix")
    quote_depth = prefix.count(">")
    after_quotes = prefix.rsplit(">", 1)[-1]
    # _strip_container already removes the one space that may follow each ``>``.
    indent = len(after_quotes) - (1 if quote_depth and after_quotes.startswith(" ") else 0)
    fence = match.group("fence")
    language = _language(match.group("info"))
    body: list[str] = []
    i += 1
    # An unclosed fence runs to the end of the document, as CommonMark says.
    while i < len(lines):
        stripped = _strip_container(lines[i], quote_depth, 0).strip()
        if len(stripped) >= len(fence) and set(stripped) == {fence[0]}:
            i += 1
            break
        body.append(_strip_container(lines[i], quote_depth, indent))
        i += 1
    return _Block(language, body), i


# ----------------------------------------------------------------------------- reStructuredText

_RST_DIRECTIVE = re.compile(
    r"^(?P<indent>\s*)\.\.\s+(?P<name>code-block|code|sourcecode|prompt|highlight|ipython|doctest)"
    r"::\s*(?P<arg>.*)$",
    re.IGNORECASE,
)
_RST_OPTION = re.compile(r"^\s*:[\w-]+:")


def _rst_body(lines: list[str], start: int, parent_indent: int) -> tuple[list[str], int]:
    """The indented body after a directive or ``::`` starting at ``start``; returns (body, next)."""
    i = start
    # Directive options directly under the directive line.
    while i < len(lines) and lines[i].strip() and _RST_OPTION.match(lines[i]):
        if _indent_of(lines[i]) <= parent_indent:
            break
        i += 1
    body: list[str] = []
    while i < len(lines):
        line = lines[i]
        if line.strip() and _indent_of(line) <= parent_indent:
            break
        body.append(line)
        i += 1
    while body and not body[-1].strip():
        body.pop()
    while body and not body[0].strip():
        body.pop(0)
    if body:
        margin = min(_indent_of(line) for line in body if line.strip())
        body = [line[margin:] if line.strip() else "" for line in body]
    return body, i


def _rst_blocks(text: str) -> Iterator[_Block]:
    lines = text.split("\n")
    default_language = ""  # Sphinx highlights ``::`` as Python; we let the content decide.
    i = 0
    after_blank = True
    paragraph_indent = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            after_blank = True
            i += 1
            continue
        fence = _FENCE.match(line)
        if fence and not (fence.group("fence")[0] == "`" and "`" in fence.group("info")):
            # Generated READMEs mix Markdown fences into reStructuredText; readers follow them.
            block, i = _fenced_block(lines, i, fence)
            yield block
            after_blank = False
            continue
        directive = _RST_DIRECTIVE.match(line)
        if directive:
            name = directive.group("name").lower()
            arg = directive.group("arg").strip()
            parent = len(directive.group("indent"))
            after_blank = False
            if name == "highlight":
                default_language = _language(arg)
                i += 1
                continue
            body, i = _rst_body(lines, i + 1, parent)
            if name == "prompt":
                # ``.. prompt:: bash $``: the body holds commands without their prompt.
                yield _Block(_language(arg) or "bash", body, prompt_directive=True)
            elif name in ("ipython", "doctest"):
                yield _Block("python", body)
            else:
                yield _Block(_language(arg), body)
            continue
        indent = _indent_of(line)
        if after_blank and indent > paragraph_indent and i > 0:
            # A block quote. Generated READMEs indent commands without ``::``, so the content
            # decides, as for a literal block that names no language.
            body, i = _rst_body(lines, i, paragraph_indent)
            yield _Block("", body)
            after_blank = True
            continue
        after_blank = False
        paragraph_indent = indent
        yield from _inline_blocks(line, ("``", "`"))
        stripped = line.rstrip()
        # A paragraph ending in ``::`` introduces a literal block, unless it is a comment or
        # a directive we do not read (``.. note::``), whose body is prose.
        if stripped.endswith("::") and not stripped.lstrip().startswith(".."):
            j = i + 1
            if j < len(lines) and not lines[j].strip():
                body, nxt = _rst_body(lines, j, indent)
                if body:
                    yield _Block(default_language, body)
                    i = nxt
                    after_blank = True
                    continue
        i += 1


# ----------------------------------------------------------------------------- block contents


def _logical_lines(lines: list[str]) -> list[str]:
    """Join backslash continuations and keep heredocs whole."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        current = lines[i].rstrip()
        i += 1
        while current.endswith("\\") and i < len(lines):
            current = current[:-1].rstrip() + " " + lines[i].strip()
            i += 1
        if current.endswith("\\"):
            current = current[:-1].rstrip()
        heredoc = _HEREDOC.search(current)
        if heredoc and not current.lstrip().startswith("#"):
            terminator = heredoc.group("word")
            parts = [current]
            while i < len(lines):
                parts.append(lines[i].rstrip())
                i += 1
                if parts[-1].strip() == terminator:
                    break
            current = "\n".join(parts)
        out.append(current)
    return out


def _prompt_commands(lines: list[str], sign: str) -> list[str]:
    """Only lines after a prompt are commands; the rest is output."""
    commands: list[str] = []
    i = 0
    while i < len(lines):
        match = _PROMPT.match(lines[i])
        i += 1
        if not match or match.group("sign") != sign or lines[i - 1].lstrip().startswith(">>>"):
            continue
        current = lines[i - 1][match.end() :].rstrip()
        # Continuations follow the prompt line whether or not they carry a ``> `` prompt.
        while current.endswith("\\") and i < len(lines):
            nxt = lines[i]
            cont = _PROMPT.match(nxt)
            if cont and cont.group("sign") == ">":
                nxt = nxt[cont.end() :]
            current = current[:-1].rstrip() + " " + nxt.strip()
            i += 1
        if current.endswith("\\"):
            current = current[:-1].rstrip()
        commands.append(current)
    return commands


def _prompt_sign(lines: list[str]) -> str | None:
    signs = []
    for line in lines:
        if line.lstrip().startswith(">>>"):
            continue
        match = _PROMPT.match(line)
        if match and line[match.end() :].strip():
            signs.append(match.group("sign"))
    for sign in ("$", "%", ">"):
        if sign in signs:
            return sign
    return None


def _clean(commands: list[str]) -> list[str]:
    out = []
    for command in commands:
        stripped = command.strip()
        if not stripped or stripped.startswith("#"):
            continue
        out.append(stripped if "\n" not in stripped else command.strip("\n"))
    return out


def _first_word(line: str) -> str:
    words = line.strip().split()
    # Skip ``sudo``, ``FOO=bar`` prefixes to reach the program.
    while words and (words[0] in ("sudo", "time", "env", "!") or _ENV_ASSIGN.match(words[0])):
        words = words[1:]
    return words[0].lower() if words else ""


def _is_known_command(line: str, known: frozenset[str] = frozenset()) -> bool:
    word = _first_word(line)
    if not word:
        return False
    if word in KNOWN_COMMANDS or word in known or word.startswith(("./", "../", "~/", "$")):
        return True
    # pip3.11, python3.10, Scripts\activate, venv/bin/activate
    return bool(
        re.match(r"^(?:pip|python)\d+(?:\.\d+)?$", word)
        or word.endswith(("activate", ".sh", "/python", "/pip"))
    )


def _looks_like_shell(lines: list[str], known: frozenset[str] = frozenset()) -> bool:
    """Content heuristic for blocks with no (or a neutral) language."""
    candidates = _clean(_logical_lines(lines))
    if not candidates:
        return False
    certain = shaped = 0
    for line in candidates:
        first = line.split("\n", 1)[0]
        if _PYTHON_LINE.match(first):
            return False
        if _is_known_command(first, known):
            certain += 1
        elif (
            not _NOT_SHELL_LINE.match(first)
            and _COMMAND_SHAPE.match(first)
            and not _SENTENCE_END.search(first)
            and not _PROSE_MARK.search(first)
            and len(first.split()) <= 12
        ):
            shaped += 1
    # At least one certain command, and most lines shaped like commands.
    return certain >= 1 and (certain + shaped) * 2 >= len(candidates)


_BOX_DRAWING = re.compile(r"^\s*[│├└┌┐┘┬┴┼─]")
_USAGE_LINE = re.compile(r"^\s*usage:\s", re.IGNORECASE)


def _without_usage_text(lines: list[str]) -> list[str]:
    """A command's ``--help`` output pasted under it (``usage: ...`` and its options) is output,
    up to the next line that starts with a known command."""
    kept: list[str] = []
    in_usage = False
    for line in lines:
        if _USAGE_LINE.match(line):
            in_usage = True
        elif in_usage and _is_known_command(line):
            in_usage = False
        if not in_usage:
            kept.append(line)
    return kept


def _block_commands(block: _Block, known: frozenset[str] = frozenset()) -> list[str]:
    lines = block.lines
    if not any(line.strip() for line in lines):
        return []
    language = block.language
    if block.prompt_directive:
        return _clean(_logical_lines(lines))
    if block.inline:
        commands = _clean(_logical_lines(lines))
        return commands if commands and _is_known_command(commands[0], known) else []
    if _BIBTEX.match(next(line for line in lines if line.strip())):
        # A citation, whatever the fence says (trafilatura's is in a ``shell`` block).
        return []
    if language in SHELL_LANGUAGES:
        sign = _prompt_sign(lines)
        if sign is not None:
            return _clean(_prompt_commands(lines, sign))
        # A directory tree shown in an ``sh`` block is not something anyone would type.
        kept = [ln for ln in _without_usage_text(lines) if not _BOX_DRAWING.match(ln)]
        return _clean(_logical_lines(kept))
    if language in SESSION_LANGUAGES or language in NEUTRAL_LANGUAGES:
        sign = _prompt_sign(lines)
        # ``> `` alone is too common in output and quotes to mark a neutral block as a session.
        if sign is not None and (language in SESSION_LANGUAGES or sign != ">"):
            commands = _clean(_prompt_commands(lines, sign))
            if language in SESSION_LANGUAGES:
                return commands
            return commands if _looks_like_shell(commands, known) else []
        return _clean(_logical_lines(lines)) if _looks_like_shell(lines, known) else []
    if language in MISLABELLED_LANGUAGES:
        # ``python`` blocks holding ``pip install x`` are common; a reader types them anyway.
        commands = _clean(_logical_lines(lines))
        if commands and all(
            _is_known_command(c, known) and not _PYTHON_LINE.match(c) for c in commands
        ):
            return commands
    return []
