"""Reading a user's file: bounded, regular files only, UTF-8 and JSON with reasons that say why.

Every input (case files, datasets, predictions, sidecars, run directories) is read through here,
so a FIFO cannot hang the harness, ``/dev/zero`` cannot fill its memory, and a bad file's
problem reads the same wherever it is met. Standard library only.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

_Model = TypeVar("_Model", bound="BaseModel")


def decode_utf8(data: bytes) -> str:
    """UTF-8 with an optional byte-order mark; ``ValueError`` says what the bytes are instead."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ValueError("UTF-16 text; expected UTF-8")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); expected UTF-8"
        ) from None


class JsonError(ValueError):
    """Text that is not JSON this project reads; ``msg``, ``lineno`` and ``colno`` say what and
    where, as ``json.JSONDecodeError``'s do (``lineno`` 0 where no place applies), ``detail``
    both together."""

    def __init__(self, msg: str, lineno: int = 0, colno: int = 0, detail: str = "") -> None:
        self.msg = msg
        self.lineno = lineno
        self.colno = colno
        self.detail = detail or msg
        super().__init__(f"not valid JSON: {self.detail}")


def parse_json(text: str | bytes) -> Any:
    """The one JSON reader: ``JsonError`` (a ``ValueError``) for invalid JSON, nesting deeper
    than the parser's recursion, and integers past Python's digit limit, never another error."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonError(exc.msg, exc.lineno, exc.colno, str(exc)) from None
    except RecursionError:
        raise JsonError("nested too deeply") from None
    except UnicodeDecodeError as exc:  # bytes: json guesses the encoding, which may not fit
        raise JsonError(f"not UTF-8, UTF-16 or UTF-32 text (byte {exc.start})") from None
    except ValueError:
        # int()'s guard against its quadratic conversion; its message points at a setting
        # of this process, which is no help to whoever wrote the file.
        limit = sys.get_int_max_str_digits()
        raise JsonError(f"a number of more than {limit} digits") from None


def lone_surrogate(data: Any) -> str | None:
    """The first lone surrogate among the strings of parsed JSON (JSON may escape one, UTF-8
    cannot hold it: a file read with it fails when written again), or None."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.object[exc.start]
    return None


def link_within(root: Path, path: Path) -> Path | None:
    """The first symbolic link on the way from ``root`` down to ``path`` (``path`` included),
    or ``None``; ``ValueError`` when ``path`` does not lie under ``root`` as spelled.

    A run directory or a copied-out tree is not trusted: a link in it may point anywhere on the
    host, so readers of such trees refuse links instead of resolving them.
    """
    root = Path(os.path.abspath(root))
    path = Path(os.path.abspath(path))
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        raise ValueError(f"{path} lies outside {root}") from None
    if ".." in parts:
        raise ValueError(f"{path} leaves {root}")
    here = root
    for part in parts:
        here = here / part
        if here.is_symlink():
            return here
    return None


def open_regular(path: Path, limit: int, *, follow_links: bool = True) -> BinaryIO:
    """A regular file of at most ``limit`` bytes opened for reading; ``ValueError`` otherwise.

    Opened without blocking and checked on the open descriptor, so a FIFO or device swapped in
    after a check is still refused; with ``follow_links=False`` a link as the last component is
    refused by the kernel (``O_NOFOLLOW``), not by a check a swap could race.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_links:
            raise ValueError("a symbolic link; only regular files are read") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if info.st_size > limit:
            raise ValueError(f"larger than allowed: {info.st_size} bytes, more than the {limit}")
        # Blocking again: a regular file never blocks, and buffered reads expect it.
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path: Path, limit: int, *, follow_links: bool = True) -> bytes:
    """At most ``limit`` bytes of a regular file; ``ValueError`` for anything else or more.

    Sized by the file, so a small file allocates little.
    """
    with open_regular(path, limit, follow_links=follow_links) as handle:
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(min(size, limit) + 1)
    if len(data) > limit:  # grew while being read
        raise ValueError(f"larger than {limit} bytes")
    return data


def read_url(url: str, limit: int, *, timeout: float) -> bytes:
    """At most ``limit`` bytes of what ``url`` answers: ``OSError`` when it cannot be read (an
    HTTP error, a refused or timed-out connection), ``ValueError`` when it is larger."""
    import urllib.request

    with urllib.request.urlopen(url, timeout=timeout) as response:
        data = response.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"larger than {limit} bytes")
    return data


def read_tail(path: Path, limit: int) -> bytes:
    """The last ``limit`` bytes of a regular file, never through a link as its last component:
    a log or trajectory of any size costs ``limit`` bytes of memory."""
    with open_regular(path, 1 << 62, follow_links=False) as handle:
        size = os.fstat(handle.fileno()).st_size
        handle.seek(max(0, size - limit))
        return handle.read(limit)


def tails_text(paths: list[Path], limit: int) -> str:
    """The last ``limit`` bytes of each of ``paths`` that is a readable regular file (not a
    link), decoded leniently and joined by newlines; the others are passed over."""
    parts: list[str] = []
    for path in paths:
        try:
            parts.append(read_tail(path, limit).decode("utf-8", errors="replace"))
        except (OSError, ValueError):
            continue
    return "\n".join(parts)


def read_within(root: Path, path: Path, limit: int) -> bytes:
    """``read_bounded`` of a file in an untrusted tree: no link on the way from ``root``."""
    link = link_within(root, path)
    if link is not None:
        raise ValueError(f"{link} is a symbolic link; links in {root} are not followed")
    return read_bounded(path, limit, follow_links=False)


def read_text(path: Path, limit: int) -> str:
    return decode_utf8(read_bounded(path, limit))


def read_json(path: Path, limit: int) -> Any:
    return parse_json(read_text(path, limit))


# A key of this many dotted parts is no case's: tomllib's time and memory grow with the square
# of a key's depth (20,000 parts in 40 KB took 70 s and 2 GB), so such a key is refused unparsed.
MAX_KEY_PARTS = 64
# A basic string part may hold escaped quotes (``"\""``): a part that stopped at the first
# quote let ``z."\""."\""`` past the guard. Each alternative starts with its own character,
# so a failed match never backtracks into another.
_KEY_PART = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
# Keys start a line (tables, ``[[arrays]]``, key/value pairs) or follow ``{`` or ``,`` in an
# inline table, where tomllib is just as quadratic. One run of blanks before the brackets and
# one after them: two runs side by side made a long blank line cost its length squared.
_DEEP_KEY = re.compile(
    rf"(?:^|[{{,])[ \t]*(?:\[+[ \t]*)?(?:{_KEY_PART}[ \t]*\.[ \t]*){{{MAX_KEY_PARTS},}}",
    re.MULTILINE,
)


def parse_toml(text: str) -> dict[str, Any]:
    """TOML with every failure a ``ValueError``: syntax, keys nested past ``MAX_KEY_PARTS``,
    arrays nested past the recursion limit, and integers past Python's digit limit.

    Every TOML the project reads (cases, pyproject files, references) goes through here."""
    deep = _DEEP_KEY.search(text)
    if deep is not None:
        line = text.count("\n", 0, deep.start()) + 1
        raise ValueError(f"line {line}: a key of more than {MAX_KEY_PARTS} dotted parts")
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except MemoryError:
        raise ValueError("too large to parse") from None
    except ValueError as exc:  # TOMLDecodeError, and int()'s "Exceeds the limit" on huge digits
        raise ValueError(str(exc)) from None


def read_input(path: Path, limit: int, root: Path | None = None) -> bytes:
    """A user's file, bounded and never through a link: with ``root``, none on the way down
    from it either (a run directory's records cannot point outside it)."""
    if root is not None:
        return read_within(root, path, limit)
    return read_bounded(path, limit, follow_links=False)


def validated_lines(
    text: str, model: type[_Model], problems: list[str]
) -> Iterator[tuple[int, _Model]]:
    """Each non-blank line of a JSON Lines ``text`` that validates as ``model``, with its number;
    every other line adds one problem per error (``line N: field: message``) to ``problems``, so
    a file's problems are reported together rather than one per attempt."""
    from pydantic import ValidationError

    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = parse_json(line)
        except JsonError as exc:
            problems.append(f"line {number}: not JSON: {exc.msg}")
            continue
        try:
            item = model.model_validate(raw)
        except ValidationError as exc:
            for err in exc.errors():
                where = ".".join(str(part) for part in err["loc"]) or "<line>"
                problems.append(f"line {number}: {where}: {err['msg']}")
            continue
        yield number, item


class JsonLinesError(ValueError):
    """A JSON Lines file that does not validate; the message names the file, each line and
    field. Subclasses name what the file is (``what``)."""

    what = "file"

    def __init__(self, path: Path, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        listed = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"{path}: invalid {self.what}\n{listed}")
