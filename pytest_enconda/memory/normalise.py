"""Making a triple repository-agnostic, and the short error signature a failure is known by.

A triple learnt on one repository must read the same when another repository meets the same
problem, so the source repository's own names, paths, versions and hashes become placeholders;
``concrete`` puts the new repository's values back before an action is run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

PROJECT = "<project>"
WORKDIR = "<workdir>"
VERSION = "<version>"
HASH = "<hash>"
TMP = "<tmp>"

# Lines that name what went wrong, most specific first: the signature is the last line matching
# the first pattern that matches anything (tracebacks end with the exception, pip with "ERROR:").
# The exception pattern is matched case-sensitively: pip ends a failed build with its own
# "error: subprocess-exited-with-error", which, read as an exception, hid the build's
# "LookupError: setuptools-scm was unable to detect version" above it (every failed build then
# had one signature, and one triple's action was offered for all of them).
_EXCEPTION = re.compile(r"^\s*(?:\w+\.)*\w*(?:Error|Exception)\b:.*$")
_SIGNATURE_PATTERNS = (
    r"^E: .*$",
    r"^\s*ERROR: (?!Ignored|Could not build wheels|Failed building).*$",
    # No ".*$" after the phrase: on a text of many lines it retried every occurrence up to the
    # line's end; signature() reads one line at a time, where it added nothing.
    r"^.*(?:command not found|No such file or directory|not found|cannot find|"
    r"Unable to locate|fatal error|undefined reference|unrecognized|invalid choice|"
    r"no such option|does not exist|Permission denied|requires a different Python|"
    # `python -m pytest` without pytest: "/usr/bin/python3: No module named pytest".
    r"No module named)",
    r"^\s*(?:error|fatal)(?:\[\w+\])?:.*$",
)
_NOISE = re.compile(r"\x1b\[[0-9;]*m")


_SIGNATURE_REGEXES = (_EXCEPTION, *(re.compile(p, re.IGNORECASE) for p in _SIGNATURE_PATTERNS))


def signature(output: str, limit: int = 240) -> str:
    """The line of ``output`` that best says what failed ('' if none does)."""
    lines = [_NOISE.sub("", line).rstrip() for line in output.splitlines() if line.strip()]
    for regex in _SIGNATURE_REGEXES:
        matches = [i for i, line in enumerate(lines) if regex.match(line)]
        if matches:
            found = lines[matches[-1]].strip()
            if found.endswith(":") and matches[-1] + 1 < len(lines):
                # An exception whose message starts on the next line (versioningit's
                # "RuntimeError:" then "versioningit could not find a version ..."): the bare
                # class name would be every such failure's signature.
                found = f"{found} {lines[matches[-1] + 1].strip()}"
            return found[:limit]
    return ""


def _variants(name: str) -> set[str]:
    base = name.strip()
    if not base:
        return set()
    return {base, base.replace("-", "_"), base.replace("_", "-"), base.lower()}


def generalise(text: str, names: Iterable[str] = (), workdir: str = "/data/project") -> str:
    """``text`` with the source repository's names, folder, versions and hashes as placeholders."""
    out = text
    if workdir:
        out = out.replace(workdir.rstrip("/"), WORKDIR)
    variants = sorted({v for name in names for v in _variants(name) if len(v) > 2}, key=len)
    for variant in reversed(variants):
        # The project's own version travels with its name (pip's "name-1.2.0", "name==1.2.0").
        out = re.sub(
            rf"(?<![\w.-]){re.escape(variant)}(?:[-=]=?\d+(?:\.\d+)*\w*)",
            f"{PROJECT}-{VERSION}",
            out,
        )
        out = re.sub(rf"(?<![\w<-]){re.escape(variant)}(?![\w>-])", PROJECT, out)
    out = re.sub(r"/tmp/[\w.-]+", TMP, out)
    out = re.sub(r"\b[0-9a-f]{12,40}\b", HASH, out)
    return out


def concrete(text: str, name: str, workdir: str = "/data/project") -> str:
    """A generalised action for the repository called ``name`` in ``workdir``."""
    return (
        text.replace(WORKDIR, workdir).replace(f"{PROJECT}-{VERSION}", name).replace(PROJECT, name)
    )


def project_key(repository: str) -> str:
    """The upstream project a repository belongs to: forks and mirrors of one project share it.

    ``https://github.com/owner/Name.git``, ``owner/name`` and ``../repos/name`` all give ``name``.
    """
    text = repository.strip().rstrip("/")
    text = re.sub(r"\.git$", "", text)
    last = re.split(r"[/:]", text)[-1] if text else ""
    return re.sub(r"[-_.]+", "-", last).lower()


def tokens(text: str) -> list[str]:
    """Words for full-text search: identifiers, package names, error class names."""
    return [t for t in re.findall(r"[A-Za-z0-9][A-Za-z0-9_+.-]*[A-Za-z0-9]|[A-Za-z0-9]", text)
            if not t.isdigit()]  # fmt: skip
