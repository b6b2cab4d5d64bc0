"""Signs in a failed setup's or test run's log that the code predates the interpreter.

A repository pinned years back often declares no Python range at all, so ``choose_base`` keeps
the default base; its tests then fail on a standard-library name that Python removed since
(google/trax on 3.11: ``cannot import name 'formatargspec' from 'inspect'``; wpi-lnl/lnldb's
django-permission: ``collections.Iterable``). Each sign names the Python release that removed the
name, so ``verify`` can retry on the newest base whose Python still has it.

Only removals Python's own changelog lists are here, matched on the exact error text the
interpreter prints: a third-party package's missing attribute says nothing about the interpreter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

from .. import textio

__all__ = ["Removal", "find_removal", "removal_in_logs"]

# collections' ABC aliases, removed in 3.10 (bpo-37324).
_ABCS = (
    "Awaitable|Coroutine|AsyncIterable|AsyncIterator|AsyncGenerator|Hashable|Iterable|Iterator|"
    "Generator|Reversible|Sized|Container|Callable|Collection|MutableSet|Set|MutableMapping|"
    "Mapping|MappingView|KeysView|ItemsView|ValuesView|MutableSequence|Sequence|ByteString"
)
# Modules removed in 3.13 by PEP 594 (the "dead batteries").
_DEAD_BATTERIES = (
    "aifc|audioop|cgi|cgitb|chunk|crypt|imghdr|mailcap|msilib|nis|nntplib|ossaudiodev|pipes|"
    "sndhdr|spwd|sunau|telnetlib|uu|xdrlib|lib2to3"
)


def _missing_name(module: str, names: str) -> str:
    """Both spellings of a name gone from a module: ``from m import n`` and ``m.n``."""
    return (
        rf"cannot import name '(?:{names})' from '{module}'"
        rf"|module '{module}' has no attribute '(?:{names})'"
    )


# (pattern, the release that removed it, what it is)
_SIGNS: tuple[tuple[str, str, str], ...] = (
    (_missing_name("time", "clock"), "3.8", "time.clock"),
    (_missing_name("cgi", "escape"), "3.8", "cgi.escape"),
    (_missing_name("base64", "encodestring|decodestring"), "3.9", "base64.encodestring"),
    (_missing_name("fractions", "gcd"), "3.9", "fractions.gcd"),
    (r"'Thread' object has no attribute 'isAlive'", "3.9", "Thread.isAlive"),
    (r"'array\.array' object has no attribute '(?:tostring|fromstring)'", "3.9", "array.tostring"),
    (_missing_name("collections", _ABCS), "3.10", "collections' ABC aliases"),
    (_missing_name("inspect", "formatargspec|getargspec"), "3.11", "inspect.getargspec"),
    (_missing_name("asyncio", "coroutine"), "3.11", "asyncio.coroutine"),
    (r"No module named 'binhex'", "3.11", "binhex"),
    (r"longintrepr\.h: No such file or directory", "3.11", "longintrepr.h (old Cython output)"),
    (r"No module named '(?:distutils|imp|asynchat|asyncore|smtpd)'", "3.12", "distutils/imp"),
    (_missing_name("configparser", "SafeConfigParser"), "3.12", "configparser.SafeConfigParser"),
    (_missing_name("pkgutil", "ImpImporter"), "3.12", "pkgutil.ImpImporter"),
    (_missing_name("ssl", "wrap_socket"), "3.12", "ssl.wrap_socket"),
    (_missing_name("locale", "format"), "3.12", "locale.format"),
    (
        r"object has no attribute '(?:assertEquals|assertNotEquals|assertItemsEqual|"
        r"assertDictContainsSubset|failUnless)'",
        "3.12",
        "unittest's old aliases",
    ),
    (rf"No module named '(?:{_DEAD_BATTERIES})'", "3.13", "a module PEP 594 removed"),
)
_COMPILED = tuple(
    (re.compile(pattern, re.MULTILINE), Version(release), what) for pattern, release, what in _SIGNS
)

# A log's tail holds its errors; a huge log is not read whole.
_TAIL = 2_000_000


@dataclass(frozen=True)
class Removal:
    """A standard-library name the log's code used and the release that removed it."""

    what: str
    removed_in: str
    evidence: str

    def allows(self, python: str) -> bool:
        """Whether an interpreter of release ``python`` (``3.9`` or ``3.9.2``) still has it."""
        have = Version(python)
        return (have.major, have.minor) < (
            Version(self.removed_in).major,
            Version(self.removed_in).minor,
        )

    def describe(self) -> str:
        return f"the code uses {self.what}, removed in Python {self.removed_in} ({self.evidence!r})"


def find_removal(text: str, python: str) -> Removal | None:
    """The removal ``text`` shows that an interpreter of release ``python`` lacks; of several,
    the earliest removed (the base that has it has the later ones too)."""
    found: list[Removal] = []
    for pattern, release, what in _COMPILED:
        match = pattern.search(text)
        if match is None:
            continue
        removal = Removal(what=what, removed_in=str(release), evidence=match.group(0).strip())
        if not removal.allows(python):
            found.append(removal)
    return min(found, key=lambda r: Version(r.removed_in), default=None)


def removal_in_logs(logs: list[Path], python: str) -> Removal | None:
    """``find_removal`` over the tails of the logs that exist."""
    return find_removal(textio.tails_text(logs, _TAIL), python)
