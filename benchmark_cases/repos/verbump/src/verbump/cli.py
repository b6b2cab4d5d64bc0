"""``verbump show`` and ``verbump bump PART``."""

from __future__ import annotations

import argparse
import sys

from .versions import PARTS, VersionError, bump, read_version, write_version


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="verbump", allow_abbrev=False)
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser("show", help="print the current version")
    show.add_argument("pyproject", nargs="?", default="pyproject.toml")
    bump_cmd = commands.add_parser("bump", help="bump the version and write it back")
    bump_cmd.add_argument("part", choices=PARTS)
    bump_cmd.add_argument("pyproject", nargs="?", default="pyproject.toml")
    bump_cmd.add_argument("--dry-run", action="store_true", help="print, do not write")
    args = parser.parse_args(argv)
    try:
        current = read_version(args.pyproject)
        if args.command == "show":
            print(current)
            return 0
        new = bump(current, args.part)
        if not args.dry_run:
            write_version(args.pyproject, new)
    except (OSError, VersionError) as exc:
        print(f"verbump: {exc}", file=sys.stderr)
        return 1
    print(f"{current} -> {new}" + (" (dry run)" if args.dry_run else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
