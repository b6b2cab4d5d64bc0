"""``tabkit head`` and ``tabkit stats``."""

from __future__ import annotations

import argparse
import json
import sys

from .stats import column_stats
from .table import read_csv, to_markdown


def main(argv: list[str] | None = None) -> int:
    # allow_abbrev=False: a misspelt option must fail loudly rather than match a prefix.
    parser = argparse.ArgumentParser(prog="tabkit", allow_abbrev=False)
    commands = parser.add_subparsers(dest="command", required=True)
    head = commands.add_parser("head", help="print the first rows as a Markdown table")
    head.add_argument("file")
    head.add_argument("-n", "--rows", type=int, default=5)
    stats = commands.add_parser("stats", help="print per-column statistics as JSON")
    stats.add_argument("file")
    stats.add_argument("--columns", help="comma-separated column names (default: all)")
    args = parser.parse_args(argv)

    try:
        table = read_csv(args.file)
    except FileNotFoundError:
        print(f"tabkit: no such file: {args.file}", file=sys.stderr)
        return 2
    if args.command == "head":
        print(to_markdown(table, limit=args.rows))
        return 0
    names = args.columns.split(",") if args.columns else table.columns
    try:
        report = {name: column_stats(table.column(name)) for name in names}
    except KeyError as exc:
        print(f"tabkit: {exc.args[0]}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
