"""The test part of a configuration file that configures more than the tests (``aec.guard``):
a change elsewhere in it (a dependency pinned, a compiler flag) is not a change to the tests.

Read by lines, never by a parser of the format, so that a file the agent broke still compares:
the lines in a table or section whose header names tests (``[tool.pytest.ini_options]``,
``[tool:pytest]``), in a Makefile rule whose target does, in package.json's ``scripts`` entries
and ``jest``/``mocha`` keys that do, and any other line that says ``test``.
"""

from __future__ import annotations

import re

_TEST = re.compile(r"test|spec|jest|mocha|vitest|ctest", re.I)
_SECTION = re.compile(r"^\s*\[\[?([^\]]+)\]\]?\s*$")
_RULE = re.compile(r"^([^\s#=:][^=:]*):(?!=)")


def test_part(name: str, text: str) -> list[str]:
    """The lines of ``text`` (a file called ``name``) that configure the tests."""
    kept: list[str] = []
    context = ""
    ini = name.endswith((".toml", ".cfg", ".ini"))
    make = name in ("Makefile", "GNUmakefile")
    for raw in text.splitlines():
        line = raw.rstrip()
        header = (_SECTION.match(line) if ini else None) or (_RULE.match(line) if make else None)
        if header:
            context = header.group(1)
        elif make and line and not line.startswith("\t"):
            context = ""
        if line.strip() and (_TEST.search(context) or _TEST.search(line)):
            kept.append(line.strip())
    return kept
