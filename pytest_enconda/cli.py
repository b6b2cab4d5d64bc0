"""``pytest-enconda``: manage the sandbox's images and leftover containers outside pytest; compare
and re-grade runs."""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from . import cli_commands as commands
from .errors import EncondaError, InputError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_MAX_SECONDS = 7 * 24 * 3600


def parse_duration(text: str) -> timedelta:
    """``30m``, ``12h``, ``7d``, ``2w``."""
    match = _DURATION.match(text)
    if not match:
        raise argparse.ArgumentTypeError(f"expected a duration such as 12h, 7d or 2w, got {text!r}")
    return timedelta(**{_UNITS[match.group(2).lower()]: float(match.group(1))})


def _size(text: str) -> int:
    from .sandbox.settings import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    # inf or 1e308 overflow the timeout machinery; a week is already far beyond any step.
    if not 0 < value <= _MAX_SECONDS:
        raise argparse.ArgumentTypeError(
            f"expected seconds above 0 and at most {_MAX_SECONDS}, got {text!r}"
        )
    return value


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a share from 0 to 1, got {text!r}")
    return value


_OWNER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def _owner(text: str) -> str:
    # The owner becomes a folder name (OUT/mirror/<owner>+<name>) and a repository's name: a
    # path (../../x) or an option (-x) is neither.
    if not _OWNER.fullmatch(text) or ".." in text:
        raise argparse.ArgumentTypeError(
            f"expected at most 100 letters, digits, '.', '_' or '-', beginning with a letter "
            f"or digit, got {text!r}"
        )
    return text


@dataclass(frozen=True)
class Argument:
    """One ``add_argument`` call of a subcommand: its names and keywords. Arguments with the same
    ``exclusive`` name share one mutually exclusive group."""

    names: tuple[str, ...]
    options: Mapping[str, Any]
    exclusive: str | None = None


def arg(*names: str, exclusive: str | None = None, **options: Any) -> Argument:
    return Argument(names, options, exclusive)


@dataclass(frozen=True)
class Command:
    """A subcommand as data: what the manual's command reference and ``--help`` show, and the
    function that runs it. ``install`` is for a command that declares its own parser (its
    subcommands): it is given the subparsers and the rest is not read."""

    name: str
    run: Callable[[argparse.Namespace], int] | None = None
    help: str = ""
    description: str | None = None
    epilog: str | None = None
    arguments: tuple[Argument, ...] = ()
    install: Callable[[Any], None] | None = None

    def add_to(self, sub: Any) -> None:
        if self.install is not None:
            self.install(sub)
            return
        texts = {"description": self.description, "epilog": self.epilog}
        parser = sub.add_parser(
            self.name, help=self.help, **{k: v for k, v in texts.items() if v is not None}
        )
        groups: dict[str, Any] = {}
        for argument in self.arguments:
            target = parser
            if argument.exclusive is not None:
                if argument.exclusive not in groups:
                    groups[argument.exclusive] = parser.add_mutually_exclusive_group()
                target = groups[argument.exclusive]
            target.add_argument(*argument.names, **argument.options)
        parser.set_defaults(func=self.run)


def _memory(sub: Any) -> None:
    # The memory commands are declared by their own package (imported only to build the parser).
    from .memory.cli import add_parser

    add_parser(sub)


DESCRIPTION = (
    "Manage pytest-enconda's Docker images and containers. Exit status: 0 "
    "done; 1 the operation failed; 2 a bad input or argument, named with what was expected "
    "(pytest-enconda COMMAND: error: INPUT: ...); test-log and imports give 2 for "
    "inconclusive and not measured too."
)

COMMANDS: tuple[Command, ...] = (
    Command(
        "images",
        commands.cmd_images,
        "list our images",
        arguments=(
            arg(
                "--kind",
                choices=["rootfs", "base", "env", "task", "snapshot"],
                help="only images of this kind",
            ),
        ),
    ),
    Command("recipes", commands.cmd_recipes, "list declared base recipes and whether they exist"),
    Command(
        "build-base",
        commands.cmd_build_base,
        "build a base image (prints its build log)",
        arguments=(
            arg("name", help="recipe name, e.g. bookworm-py3.11"),
            arg("--force", action="store_true", help="rebuild without the build cache"),
            arg("--pull-base", help="pullable image to start from instead of debootstrap"),
        ),
    ),
    Command(
        "cleanup",
        commands.cmd_cleanup,
        "remove leftover containers (default: those of dead processes)",
        arguments=(
            arg("--run", exclusive="which", help="remove the containers of this run id"),
            arg(
                "--all",
                exclusive="which",
                action="store_true",
                help="remove the containers of all runs",
            ),
            arg("--dry-run", action="store_true", help="list only"),
        ),
    ),
    Command(
        "prune",
        commands.cmd_prune,
        "remove cached task/snapshot/env images (default: older than 7d)",
        arguments=(
            arg("--older-than", type=parse_duration, help="e.g. 12h, 7d, 2w"),
            arg("--max-size", type=_size, help="keep at most this much, e.g. 20G"),
            arg("--dry-run", action="store_true", help="list only"),
        ),
    ),
    Command(
        "imports",
        commands.cmd_imports,
        "C0 on this host: which of a repository's imports do not resolve in an interpreter "
        "(pyright); exit 0 none missing, 1 some missing, 2 not measured",
        description="C0 on this host: which of a repository's imports do not resolve in an "
        "interpreter (basedpyright's missing-import diagnostics, by top-level name).",
        epilog="exit status: 0 every import resolves; 1 some imports are missing; 2 not "
        "measured (REPO_DIR is not a directory, the interpreter does not run, pyright failed or "
        "timed out) or a usage error",
        arguments=(
            arg("repo_dir", help="the repository folder"),
            arg("--python", help="the interpreter to resolve with (default: this one)"),
            arg("--json", action="store_true", help="print the full result as JSON"),
            arg("--timeout", type=float, default=600, help="pyright's budget, seconds"),
        ),
    ),
    Command(
        "verify",
        commands.cmd_verify,
        "reference setups, test commands and PASS sets of a dataset's repositories, "
        "written to the verification sidecar",
        arguments=(
            arg("dataset", help="an EnConda-Bench dataset folder (repo_info.jsonl)"),
            arg("--agent", default="readme", help="agent writing the reference setup"),
            arg("--agent-option", action="append", help="KEY=VALUE for the agent"),
            arg("--no-recipe", action="store_true", help="no install-from-source fallback"),
            arg(
                "--no-as-of",
                action="store_true",
                help="no second recipe with the packages of the revision's day (pip's upload "
                "cutoff)",
            ),
            arg(
                "--start-at",
                choices=("agent", "recipe", "as-of"),
                default="agent",
                help="the first attempt (default agent): a re-run may skip attempts whose "
                "failures are on record; the record says which were not tried",
            ),
            arg("--repo-mirror", help="local clones or fetched snapshots of repositories"),
            arg("-n", type=_positive_int, default=1, help="repositories verified at once"),
            arg("--out", help="sidecar path (default: DATASET/enconda-verification.json)"),
            arg("--logs", help="folder for setup and test logs (default: reports/verify-*)"),
            arg(
                "--repo",
                action="append",
                help="only this owner/name (repeatable; case is ignored, and a name the dataset "
                "lacks is an error)",
            ),
            arg(
                "--redo",
                action="store_true",
                help="verify recorded repositories again (with --recheck: make null setups and "
                "checkout proofs again)",
            ),
            arg(
                "--recheck",
                action="store_true",
                help="on the verified records of --out: the null-setup check (the test step after "
                "an empty setup) and the checkout proof with the current probe (the reference "
                "setup, no test run); references and PASS sets stay as recorded, a refused proof "
                "makes the record unverified. A record current in both is skipped unless --redo",
            ),
            arg(
                "--setup-timeout",
                type=_seconds,
                default=2400,
                help="seconds per reference setup (default 2400: a large install on a loaded "
                "machine)",
            ),
            arg(
                "--agent-setup-timeout",
                type=_seconds,
                default=900,
                help="seconds for the agent's setup on the original README when the recipe "
                "follows it (default 900: READMEs that start a server in the foreground never "
                "end)",
            ),
            arg(
                "--min-pass-share",
                type=_share,
                default=0.5,
                help="share of the tests that ran (skips left out) the reference must pass in "
                "both runs to be verified (default 0.5)",
            ),
            arg("--test-timeout", type=_seconds, default=900, help="seconds per test run"),
        ),
    ),
    Command(
        "construct",
        commands.cmd_construct,
        "new instances: inject errors into working READMEs, validate each in Docker, "
        "filter, split and merge into levels (EnConda-Bench's layout, with the sidecar)",
        arguments=(
            arg(
                "sources",
                nargs="+",
                help="repository folders, datasets (repo_info.jsonl) whose "
                "repositories --repo-mirror holds, or OWNER/NAME[@REVISION] it holds",
            ),
            arg("--out", required=True, help="the dataset folder to write"),
            arg("--types", help="error types, e.g. E1,E4 (default: all six)"),
            arg("--per-readme", type=_positive_int, default=2, help="errors per README (2)"),
            arg("--per-type", type=_positive_int, default=2, help="injections per type (2)"),
            arg("--levels", default="1,2,3,5", help="levels to make (1,2,3,5)"),
            arg("--injector", default="rules", help="rules or llm:<model>"),
            arg("--llm-api-base", help="OpenAI-compatible server for llm:<model>"),
            arg("--judge", help="llm:<model>: a judge filter of the labels"),
            arg("--judge-api-base", help="OpenAI-compatible server for the judge"),
            arg("--seed", type=int, default=0, help="same seed, same errors"),
            arg("--owner", type=_owner, default="local", help="owner name of repository folders"),
            arg("--repo-mirror", help="local clones of a dataset's repositories"),
            arg("-n", type=_positive_int, default=2, help="READMEs validated at once"),
            arg("--logs", help="setup and test logs (default: OUT/construct-logs)"),
            arg("--setup-timeout", type=_seconds, default=900, help="seconds per setup"),
            arg("--test-timeout", type=_seconds, default=600, help="seconds per test run"),
        ),
    ),
    Command(
        "audit",
        commands.cmd_audit,
        "label audit of a dataset: flags per instance, counts per flag and type, and the "
        "verified subset (audit.json, audit.md, verified-subset.txt)",
        arguments=(
            arg("dataset", help="an EnConda-Bench dataset folder (repo_info.jsonl)"),
            arg("--out", help="output folder (default: DATASET/enconda-audit)"),
            arg(
                "--verification",
                help="the sidecar of `pytest-enconda verify` (default: "
                "enconda-verification.json beside the dataset): flags trivial and "
                "unverified references",
            ),
        ),
    ),
    Command(
        "compare",
        commands.cmd_compare,
        "runs side by side (the paper's main table) and the items whose outcome differs; "
        "printed and written as compare.md and compare.html",
        arguments=(
            arg("runs", nargs="+", help="run directories (two or more)"),
            arg(
                "--intersection",
                action="store_true",
                help="compare runs over different case sets on the items they share (refused "
                "otherwise)",
            ),
            arg("--out", help="folder for compare.md/.html (default: reports/compare-*)"),
        ),
    ),
    Command(
        "regrade",
        commands.cmd_regrade,
        "grade a run again from its saved agent outcomes (no Docker, no agent), e.g. with "
        "another judge; writes a new run directory with its summary and report",
        arguments=(
            arg("run_dir", help="the run directory"),
            arg("--judge", help="offline, offline-rules or llm:<model> (default: the run's judge)"),
            arg("--judge-api-base", help="OpenAI-compatible server for an llm judge"),
            arg(
                "--judge-concurrency",
                type=_positive_int,
                default=4,
                help="parallel judge requests (default 4)",
            ),
            arg("--out", help="new run directory (default: RUN_DIR-regrade-<judge>)"),
        ),
    ),
    Command("memory", install=_memory),
    Command(
        "test-log",
        commands.cmd_test_log,
        "read a test runner's log: counts and a verdict; exit 0 success, 1 failure, 2 inconclusive",
        epilog="exit status: 0 success; 1 failure; 2 inconclusive, or a FILE that is no log "
        "(missing, a folder, a FIFO or device: give a stream on standard input as -)",
        arguments=(
            arg("file", help="the log file, or - for standard input"),
            arg("--exit-code", type=int, help="the test command's exit status"),
            arg("--json", action="store_true", help="print the result as JSON"),
        ),
    ),
    Command(
        "import-msb",
        commands.cmd_import_msb,
        "Multi-SWE-bench instances (JSONL) as AEC cases at their base commits",
        epilog="exit status: 0 every instance imported; 1 some were refused (each named by file "
        "and line; the others are imported, and no case the loader refuses is written); 2 a "
        "file or option that cannot be used (nothing is written)",
        arguments=(
            arg("files", nargs="+", help="instance files, one JSON object per line"),
            arg("--out", required=True, help="folder the case folders are written into"),
            arg("--language", help="the instances' language, where they do not say it"),
            arg(
                "--repo-mirror",
                type=Path,
                help="a mirror of the repositories: each base commit is checked there (run the "
                "cases with the same --repo-mirror)",
            ),
            arg(
                "--references",
                type=Path,
                help="TOML of per-repository golden setups and test commands ([[reference]] "
                "org, repo, setup, test_command, source): an instance of such a repository gets "
                "them, so the oracle can run it",
            ),
        ),
    ),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pytest-enconda", description=DESCRIPTION)
    parser.add_argument("--network", help="Docker network mode for builds (default: bridge)")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_to(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except InputError as exc:
        print(f"pytest-enconda {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except EncondaError as exc:
        print(f"pytest-enconda: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("pytest-enconda: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
