"""``confmerge FILE...``: print the merged configuration as JSON."""

from __future__ import annotations

import argparse
import json
import sys

from .loading import ConfigError, load
from .merging import merge


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="confmerge", description="Deep-merge configuration files; later files win."
    )
    parser.add_argument("files", nargs="+", help="JSON, TOML or YAML files")
    parser.add_argument("--indent", type=int, default=2, help="JSON indentation (default 2)")
    args = parser.parse_args(argv)
    try:
        merged = merge(*(load(path) for path in args.files))
    except FileNotFoundError as exc:
        print(f"confmerge: no such file: {exc.filename}", file=sys.stderr)
        return 2
    except ConfigError as exc:
        print(f"confmerge: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(merged, indent=args.indent, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
