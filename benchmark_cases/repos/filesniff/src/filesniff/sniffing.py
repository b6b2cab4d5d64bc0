"""Content-based type detection on top of python-magic (which wraps the libmagic C library)."""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass
from pathlib import Path

# python-magic loads libmagic with ctypes when imported: without the system library this
# import fails, which is why the README asks for the libmagic1 Debian package.
import magic

# mimetypes knows the extension of each type, but some files legitimately carry several
# MIME names depending on the libmagic version; these aliases keep the check stable.
_ALIASES = {
    "application/x-gzip": "application/gzip",
    "text/xml": "application/xml",
}


def _canonical(mime: str) -> str:
    return _ALIASES.get(mime, mime)


def sniff(data: bytes) -> str:
    """MIME type of ``data`` as libmagic sees it."""
    return _canonical(magic.from_buffer(data, mime=True))


def expected_types(path: Path) -> set[str]:
    """MIME types that ``path``'s extension promises (empty when the extension is unknown)."""
    guessed, _ = mimetypes.guess_type(path.name, strict=False)
    return {_canonical(guessed)} if guessed else set()


@dataclass(frozen=True)
class Finding:
    path: Path
    detected: str
    expected: frozenset[str]

    @property
    def mismatch(self) -> bool:
        # An unknown extension promises nothing, so it cannot be misleading.
        return bool(self.expected) and self.detected not in self.expected


def sniff_file(path: str | Path) -> Finding:
    path = Path(path)
    detected = _canonical(magic.from_file(str(path), mime=True))
    return Finding(path=path, detected=detected, expected=frozenset(expected_types(path)))
