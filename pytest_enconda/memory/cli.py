"""``pytest-enconda memory build|show|query``: the memory file from the command line."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..errors import EncondaError


def add_parser(sub: argparse._SubParsersAction) -> None:
    memory = sub.add_parser(
        "memory",
        help="trajectory-derived memory: build a memory file from runs, show it, query it",
    )
    msub = memory.add_subparsers(dest="memory_command", required=True)

    build = msub.add_parser("build", help="extract triples from runs' trajectories into FILE")
    build.add_argument("runs", nargs="+", help="run directories or mini-swe-agent .traj.json")
    build.add_argument("--out", required=True, help="the memory file (created or extended)")
    build.add_argument("--extractor", default="offline", help="offline or llm:<model>")
    build.add_argument("--api-base", help="OpenAI-compatible server for an llm extractor")
    build.add_argument("--embedding-model", help="also embed every triple with this model")
    build.set_defaults(func=_cmd_build)

    show = msub.add_parser("show", help="counts, provenance and the triples of a memory file")
    show.add_argument("file")
    show.add_argument("--json", action="store_true", help="every triple as JSON")
    show.set_defaults(func=_cmd_show)

    credit = msub.add_parser(
        "credit",
        help="add runs' counts (retrieved, used, helped) to the triples of FILE, once per run",
    )
    credit.add_argument("file", help="the memory file the runs were given (--memory)")
    credit.add_argument("runs", nargs="+", help="run directories")
    credit.set_defaults(func=_cmd_credit)

    query = msub.add_parser("query", help="the triples a text retrieves (BM25 or embeddings)")
    query.add_argument("file")
    query.add_argument("text")
    query.add_argument("--k", type=int, default=5, help="how many triples (default 5)")
    query.add_argument("--json", action="store_true")
    query.add_argument(
        "--exclude-repo", action="append", default=[],
        help="leakage guard: never return triples learnt on this repository (repeatable)",
    )  # fmt: skip
    query.add_argument("--embedding-model", help="rank by this embedding model instead of BM25")
    query.add_argument("--api-base", help="OpenAI-compatible server for the embedding model")
    query.set_defaults(func=_cmd_query)


def _cmd_build(args: argparse.Namespace) -> int:
    from .build import build
    from .retrieve import completer, embedder
    from .store import MemoryStore

    extractor = args.extractor
    complete = None
    if extractor.startswith("llm:") and extractor[4:]:
        complete = completer(extractor[4:], args.api_base)
    elif extractor != "offline":
        raise EncondaError(f"--extractor: expected offline or llm:<model>, got {extractor!r}")
    paths = [Path(p) for p in args.runs]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise EncondaError(f"no such run directory or file: {', '.join(missing)}")
    report = build(paths, Path(args.out), extractor, complete)
    print(
        f"{report.trajectories} trajectories, {report.cases} read: {report.triples} triples "
        f"extracted, {report.new} new; memory file {args.out}"
    )
    for problem in report.problems:
        print(f"  skipped: {problem}")
    if args.embedding_model:
        with MemoryStore(args.out) as store:
            count = store.embed_missing(
                args.embedding_model, embedder(args.embedding_model, args.api_base)
            )
        print(f"embedded {count} triples with {args.embedding_model}")
    return 0


def _open(path: str):
    from .store import MemoryStore

    try:
        return MemoryStore(path, readonly=True)
    except FileNotFoundError as exc:
        raise EncondaError(str(exc)) from None


def _cmd_show(args: argparse.Namespace) -> int:
    with _open(args.file) as store:
        hits = store.all()
        if args.json:
            print(json.dumps({"stats": store.stats(), "meta": store.meta(),
                              "triples": [h.to_json() for h in hits]}, indent=2))  # fmt: skip
            return 0
        stats = store.stats()
        print(f"{args.file}: {stats['triples']} triples from {stats['cases']} cases of "
              f"{len(stats['projects'])} projects ({', '.join(stats['projects'])}); "
              f"{stats['sightings']} sightings; helped {stats['helped']} times")  # fmt: skip
        for hit in hits:
            kind = f" {hit.error_type}" if hit.error_type else ""
            print(f"\n[{hit.id}]{kind} from {', '.join(hit.projects) or '?'} "
                  f"(helped {hit.helped})")  # fmt: skip
            print(
                f"  problem:  {hit.problem}\n  solution: {hit.solution}\n  action:   {hit.action}"
            )
    return 0


def _cmd_credit(args: argparse.Namespace) -> int:
    from .credit import credit_runs

    memory = Path(args.file)
    if not memory.is_file():
        raise EncondaError(f"no memory file {memory}")
    runs = [Path(p) for p in args.runs]
    missing = [str(p) for p in runs if not (p / "cases").is_dir()]
    if missing:
        raise EncondaError(f"not a run directory (no cases/ folder): {', '.join(missing)}")
    report = credit_runs(memory, runs)
    print(
        f"{report.runs} runs credited ({report.cases} cases): retrieved +{report.retrieved}, "
        f"used +{report.used}, helped +{report.helped}"
        + (f"; {report.unknown_ids} ids not in {memory}" if report.unknown_ids else "")
    )
    for skipped in report.skipped_runs:
        print(f"  already credited: {skipped}")
    for problem in report.problems:
        print(f"  skipped: {problem}")
    return 0


def _cmd_query(args: argparse.Namespace) -> int:
    from .retrieve import embedder, retrieve

    with _open(args.file) as store:
        embed = embedder(args.embedding_model, args.api_base) if args.embedding_model else None
        result = retrieve(
            store, [args.text], args.k, args.exclude_repo, embed, args.embedding_model
        )
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
        return 0
    if not result.hits:
        print("no triple matches")
    for hit in result.hits:
        print(f"[{hit.id}] score {hit.score:.3f} from {', '.join(hit.projects) or '?'}")
        print(f"  problem:  {hit.problem}\n  solution: {hit.solution}\n  action:   {hit.action}")
    return 0
