"""Reading a user's file: bounded, regular files only, UTF-8 and JSON with reasons that say why.

Every input (case files, datasets, predictions, sidecars, run directories) is read through here,
so a FIFO cannot hang the harness, ``/dev/zero`` cannot fill its memory, and a bad file's
problem reads the same wherever it is met. Standard library only.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any


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


def parse_json(text: str | bytes) -> Any:
    """``ValueError`` for invalid JSON and for nesting deeper than the parser's recursion."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    except RecursionError:
        raise ValueError("not valid JSON: nested too deeply") from None


def read_bounded(path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of a regular file; ``ValueError`` for anything else or more.

    Opened without blocking and checked on the open descriptor, so a FIFO or device swapped in
    after a check is still refused; sized by the file, so a small file allocates little.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if info.st_size > limit:
            raise ValueError(f"larger than {limit} bytes")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(min(info.st_size, limit) + 1)
    finally:
        os.close(fd)
    if len(data) > limit:  # grew while being read
        raise ValueError(f"larger than {limit} bytes")
    return data


def read_text(path: Path, limit: int) -> str:
    return decode_utf8(read_bounded(path, limit))


def read_json(path: Path, limit: int) -> Any:
    return parse_json(read_text(path, limit))
