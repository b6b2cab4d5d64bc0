"""The manual cannot drift from the code (issue 45).

Every option of the plugin's group and every ``pytest-enconda`` subcommand and argument has help
text, and the generated reference pages hold each of them; every ``pytest-enconda`` command and
``pytest`` option the README and the manual name exists in the installed version; the README stays
a front door.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
README_MAX_LINES = 300


@cache
def reference() -> ModuleType:
    """The mkdocs hook that generates the reference pages (``docs/hooks/reference.py``)."""
    path = DOCS / "hooks" / "reference.py"
    spec = importlib.util.spec_from_file_location("enconda_docs_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def manual_files() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


# ----------------------------------------------------------------------------- help texts


def test_every_option_of_the_plugin_group_has_help() -> None:
    options = reference().pytest_options().options
    assert len(options) > 30, "the option table was not read"
    missing = [option.name for option in options if not option.help.strip()]
    assert missing == [], f"options without help text: {missing}"


def _subcommands() -> list[tuple[str, argparse.ArgumentParser, str]]:
    ref = reference()
    return [(name, sub, help_text) for name, (sub, help_text) in ref.subcommands(ref.cli_parser())]


def test_every_subcommand_and_argument_has_help() -> None:
    ref = reference()
    subcommands = _subcommands()
    names = [name for name, _sub, _help in subcommands]
    assert {"verify", "regrade", "memory", "memory build", "memory query"} <= set(names)
    missing = [f"pytest-enconda {name}" for name, _sub, help_text in subcommands if not help_text]
    for name, sub, _help in [("", ref.cli_parser(), ""), *subcommands]:
        for action in ref.arguments(sub):
            if not (action.help or "").strip():
                missing.append(f"pytest-enconda {name} {ref._usage(action)}".replace("  ", " "))
    assert missing == [], f"without help text: {missing}"


# ----------------------------------------------------------------------------- generated pages


def test_the_options_page_has_every_option_with_its_help() -> None:
    ref = reference()
    page = ref.render_pytest_options()
    for option in ref.pytest_options().options:
        assert f"{{#{option.anchor}}}" in page, option.name
        assert option.help.split()[0] in page, option.name


def test_the_commands_page_has_every_subcommand_and_argument() -> None:
    ref = reference()
    page = ref.render_cli()
    for name, sub, _help in _subcommands():
        assert f"`pytest-enconda {name}` {{#{name.replace(' ', '-')}}}" in page, name
        for action in ref.arguments(sub):
            assert ref._cell(ref._usage(action)) in page, f"{name}: {action.dest}"


def test_every_marker_names_a_renderer_and_every_page_expands() -> None:
    ref = reference()
    used = set()
    for path in sorted(DOCS.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        used.update(match.group("name") for match in ref.MARKER.finditer(text))
        expanded = ref.expand(text, str(path))
        assert "<!-- enconda:" not in expanded, path
    assert used <= set(ref.RENDERERS)
    assert {"pytest-options", "cli", "schema", "run-directory"} <= used


def test_an_unknown_marker_fails_the_build() -> None:
    with pytest.raises(ValueError, match="unknown reference marker 'nonesuch'"):
        reference().expand("<!-- enconda:nonesuch -->", "page.md")


# ----------------------------------------------------------------------------- named commands


def code_lines(text: str) -> Iterator[str]:
    """Command lines of fenced code blocks (continuations joined) and inline code spans."""
    in_block = False
    pending = ""
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_block = not in_block
            pending = ""
            continue
        if in_block:
            stripped = line.strip()
            if stripped.endswith("\\"):
                pending += stripped[:-1] + " "
                continue
            yield pending + stripped
            pending = ""
        else:
            yield from re.findall(r"`([^`\n]+)`", line)


def _words(command: str) -> list[str]:
    """The words of one command, up to where the shell or a comment ends it."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:
        words = command.split()
    out = []
    for word in words:
        if set(word) <= set("();<>|&") or word.startswith(("$(", "#")):
            break
        out.append(word)
    return out


def _invocations(program: str) -> Iterator[tuple[Path, list[str]]]:
    """Every ``program ...`` command the README and the manual write, as its words after the
    program's name."""
    pattern = re.compile(rf"(?:^|[\s;&|(]){re.escape(program)}(?=\s)")
    for path in manual_files():
        for line in code_lines(path.read_text(encoding="utf-8")):
            for match in pattern.finditer(line):
                yield path, _words(line[match.end() :])


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    return {option for action in parser._actions for option in action.option_strings}


def test_every_pytest_enconda_command_in_the_docs_exists() -> None:
    ref = reference()
    parser = ref.cli_parser()
    commands = {name: sub for name, sub, _help in _subcommands()}
    seen = 0
    problems = []
    for path, words in _invocations("pytest-enconda"):
        words = [w for w in words if w not in ("...", "[...]")]
        if not words or words[0].startswith(("-", "<", "[")) or words[0] == "SUBCOMMAND":
            continue
        name = words[0]
        if name not in commands:
            problems.append(f"{path.relative_to(ROOT)}: pytest-enconda {name}: no such command")
            continue
        sub = commands[name]
        if len(words) > 1 and f"{name} {words[1]}" in commands:
            name = f"{name} {words[1]}"
            sub = commands[name]
        elif any(isinstance(a, argparse._SubParsersAction) for a in sub._actions):
            problems.append(f"{path.relative_to(ROOT)}: pytest-enconda {name} needs a subcommand")
            continue
        known = _option_strings(sub) | _option_strings(parser)
        for word in words[1:]:
            flag = word.strip("[]").split("=", 1)[0]
            if flag.startswith("--") and flag not in known:
                problems.append(f"{path.relative_to(ROOT)}: pytest-enconda {name} {flag}")
        seen += 1
    assert seen > 20, "the docs' commands were not found"
    assert problems == []


@cache
def pytest_help() -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_every_pytest_option_in_the_docs_exists() -> None:
    known = set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", pytest_help()))
    assert "--agent" in known and "--dispatch" in known, "the plugin's options are not in --help"
    problems = []
    seen = 0
    for path, words in _invocations("pytest"):
        seen += 1
        for word in words:
            flag = word.strip("[]").split("=", 1)[0]
            if re.fullmatch(r"--[a-z][\w-]*", flag) and flag not in known:
                problems.append(f"{path.relative_to(ROOT)}: pytest {flag}")
    assert seen > 30, "the docs' pytest commands were not found"
    assert problems == []


def test_the_checker_catches_a_command_that_does_not_exist() -> None:
    # The same reading as above, on a line naming a subcommand and an option that do not exist.
    line = "pytest-enconda frobnicate --out X; pytest-enconda verify DATA --no-such-flag"
    found = [_words(line[m.end() :]) for m in re.finditer(r"pytest-enconda(?=\s)", line)]
    assert found == [["frobnicate", "--out", "X"], ["verify", "DATA", "--no-such-flag"]]
    verify = dict((name, sub) for name, sub, _help in _subcommands())["verify"]
    assert "--no-such-flag" not in _option_strings(verify)
    assert "--repo-mirror" in _option_strings(verify)


# ----------------------------------------------------------------------------- the README


def test_the_readme_is_a_front_door() -> None:
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"
    in_block = False
    headings = []
    for line in lines:
        if line.lstrip().startswith("```"):
            in_block = not in_block
        elif not in_block and line.startswith("#"):
            headings.append(line)
    dated = [h for h in headings if re.search(r"\b20\d\d-\d\d-\d\d\b|session", h, re.I)]
    assert dated == [], f"dated work-log headings: {dated}"
    assert "mkdocs serve" in text
    # The set-up commands CI and .ci/run depend on.
    assert "pytest benchmark_cases" in text and "pytest -n 2" in text


# ----------------------------------------------------------------------------- code named


def _inline_code(path: Path) -> Iterator[str]:
    in_block = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            in_block = not in_block
        elif not in_block:
            yield from re.findall(r"`([^`\n]+)`", line)


def _file_exists(name: str) -> bool:
    """A source file the manual names: from the repository's root, or the package's."""
    return any(list(base.glob(name)) for base in (ROOT, ROOT / "pytest_enconda"))


def _resolves(dotted: str) -> bool:
    """``pytest_enconda.a.b`` is a module, or ``pytest_enconda.a.b.Name`` a name in one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if found:
            value: object = importlib.import_module(module)
            for name in parts[cut:]:
                if not hasattr(value, name):
                    return False
                value = getattr(value, name)
            return True
    return False


def test_source_files_and_names_the_manual_points_to_exist() -> None:
    """A code span that is a source file (`repo/test_commands.py`) or a dotted name of the
    package (`pytest_enconda.records.RunDir`) names something that exists; entry-point groups
    (`pytest_enconda.judges`) are names of their own."""
    ref = reference()
    groups = {registry.group for _path, registry in ref._registries()}
    problems = []
    files = names = 0
    for path in manual_files():
        for code in _inline_code(path):
            if re.fullmatch(r"[\w*.-][\w*./-]*/[\w*.-]+\.(py|sh)", code):
                files += 1
                if not _file_exists(code):
                    problems.append(f"{path.relative_to(ROOT)}: {code}")
            elif re.fullmatch(r"pytest_enconda(\.\w+)+", code) and code not in groups:
                names += 1
                if not _resolves(code):
                    problems.append(f"{path.relative_to(ROOT)}: {code}")
    assert files > 20 and names > 10, "the manual's references to the code were not found"
    assert problems == []
