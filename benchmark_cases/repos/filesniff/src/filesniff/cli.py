"""``filesniff PATH...``: print each file's detected type; ``--check`` fails on mismatches."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .sniffing import sniff_file


def _files(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.is_file()))
        elif path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(name)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="filesniff", description=__doc__)
    parser.add_argument("paths", nargs="+", help="files or directories (searched recursively)")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when an extension does not match the content"
    )
    args = parser.parse_args(argv)
    try:
        files = _files(args.paths)
    except FileNotFoundError as exc:
        print(f"filesniff: no such file or directory: {exc}", file=sys.stderr)
        return 2
    mismatches = 0
    for path in files:
        finding = sniff_file(path)
        flag = ""
        if finding.mismatch:
            mismatches += 1
            flag = f"  MISMATCH (extension says {', '.join(sorted(finding.expected))})"
        print(f"{path}: {finding.detected}{flag}")
    if args.check and mismatches:
        print(f"filesniff: {mismatches} file(s) with a misleading extension", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
