"""What ``--dispatch ray`` costs against a local run of the same cases.

    python -m pytest_enconda.bench dispatch [--runs 3] [--nodes 2] [--backend fake|docker]
                                            [--cases N] [PATH ...]

Runs ``pytest CASES --agent=oracle`` locally and with ``--dispatch ray`` (a local Ray instance
the run starts), and with ``--nodes K`` also on a cluster of K one-CPU nodes started beforehand
(``ray.cluster_utils.Cluster``, its head taking no case), each run into a new run directory, the
modes interleaved so that load on the machine hits them alike. Prints each mode's median and p90
wall time, the median overhead against the local run (in all and per case), whether every run's
item outcomes equal the local run's, and the load average before and after: an overhead is only
worth quoting from an idle machine.

``--backend fake`` (the default) runs N generated toy cases whose setup is one ``echo``: the
figure is the dispatch's own cost (Ray's start, the task, the files' round trip). ``--backend
docker`` runs the shipped cases given (default ``benchmark_cases/diagnosis/wordstat-e2``); run it
once before measuring so that the images exist.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import summarize

SHIPPED = Path(__file__).resolve().parents[2] / "benchmark_cases" / "diagnosis" / "wordstat-e2"
STORE = 200 << 20
TOY_GOLDEN = {
    "level": 1,
    "errors": [
        {
            "error_type": "E4",
            "error_description": "the README runs `python tools/run.py`; it is scripts/run.py",
            "correction_candidates": ["python scripts/run.py"],
            "golden_answer": "python scripts/run.py",
        }
    ],
}


def write_toy_cases(root: Path, count: int) -> list[str]:
    """``count`` diagnosis cases of a one-file repository whose setup is one ``echo``."""
    for index in range(count):
        case = root / f"toy{index}"
        (case / "repo" / "scripts").mkdir(parents=True)
        (case / "repo" / "scripts" / "run.py").write_text("print('ok')\n")
        (case / "README.md").write_text("# toy\n\n```bash\npython tools/run.py\n```\n")
        (case / "golden.json").write_text(json.dumps(TOY_GOLDEN))
        (case / "setup.sh").write_text("echo built > built.txt\n")
        (case / "case.toml").write_text(
            f'id = "toy{index}"\nsuite = "diagnosis"\nreadme = "README.md"\n'
            'golden = "golden.json"\ngolden_setup = "setup.sh"\n'
            'test_command = "test -f built.txt"\n'
            '[repository]\nkind = "folder"\npath = "repo"\n'
            "[budgets]\nsetup_seconds = 60\ntest_seconds = 30\n"
        )
    return [str(root)]


def timed_run(paths: list[str], run_dir: Path, extra: list[str]) -> tuple[float, dict[str, str]]:
    """Wall seconds of one ``pytest`` run and its item outcomes by ``case::item``."""
    started = time.perf_counter()
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *paths),
            *("--agent=oracle", "--run-dir", str(run_dir), *extra),
        ],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTEST_ADDOPTS": ""},
    )
    seconds = time.perf_counter() - started
    # The run's terminal output beside its run directory: a run without results says why there.
    run_dir.with_name(f"{run_dir.name}.out").write_text(done.stdout + done.stderr, "utf-8")
    outcomes: dict[str, str] = {}
    results = run_dir / "results.jsonl"
    if results.is_file():
        for line in results.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            outcomes[f"{row['case']}::{row['item']}"] = row["outcome"]
    return seconds, outcomes


def _load() -> str:
    one, five, _fifteen = os.getloadavg()
    return f"{one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} CPUs"


def _cluster(nodes: int) -> tuple[Any, str]:
    """A head that takes no case and ``nodes`` one-CPU nodes: (the cluster, its address)."""
    from ray.cluster_utils import Cluster

    head = {"num_cpus": 0, "object_store_memory": STORE, "include_dashboard": False}
    cluster = Cluster(initialize_head=True, head_node_args=head)
    for _ in range(nodes):
        cluster.add_node(num_cpus=1, object_store_memory=STORE)
    cluster.wait_for_nodes()
    return cluster, str(cluster.address)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_enconda.bench dispatch")
    parser.add_argument("paths", nargs="*", help="cases (--backend docker)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=0, help="also on a K-node cluster")
    parser.add_argument("--backend", choices=("fake", "docker"), default="fake")
    parser.add_argument("--cases", type=int, default=3, help="toy cases (--backend fake)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.cases < 1 or args.nodes < 0:
        parser.error("--runs and --cases must be at least 1, --nodes at least 0")
    root = Path(tempfile.mkdtemp(prefix="enconda-bench-dispatch-"))
    if args.backend == "fake":
        paths, backend = write_toy_cases(root / "cases", args.cases), ["--backend", "fake"]
    else:
        paths, backend = args.paths or [str(SHIPPED)], []
    print(f"load before: {_load()}")
    cluster, address = _cluster(args.nodes) if args.nodes else (None, "")
    modes = {"local": backend, "ray, local instance": [*backend, "--dispatch", "ray"]}
    if address:
        modes[f"ray, {args.nodes} nodes of 1 CPU"] = [*backend, "--dispatch", f"ray={address}"]
    seconds: dict[str, list[float]] = {mode: [] for mode in modes}
    outcomes: dict[str, list[dict[str, str]]] = {mode: [] for mode in modes}
    try:
        for run in range(args.runs):
            for index, (mode, extra) in enumerate(modes.items()):
                run_dir = root / f"run{run}-{index}"
                took, got = timed_run(paths, run_dir, extra)
                seconds[mode].append(took)
                outcomes[mode].append(got)
                if not got:
                    print(f"  {mode}: no results (its output: {run_dir}.out)")
    finally:
        if cluster is not None:
            cluster.shutdown()
    reference = outcomes["local"][0]
    cases = len({key.split("::")[0] for key in reference})
    print(f"load after: {_load()}")
    print(f"{cases} case(s), {len(reference)} items, {args.runs} run(s) per mode; runs in {root}")
    local = summarize(seconds["local"])["median"]
    for mode in modes:
        stats = summarize(seconds[mode])
        same = all(got == reference for got in outcomes[mode]) and bool(reference)
        extra = stats["median"] - local
        print(
            f"  {mode:24} median {stats['median']:7.2f} s  p90 {stats['p90']:7.2f} s  "
            f"overhead {extra:+6.2f} s ({extra / max(cases, 1):+5.2f} s a case, "
            f"x{stats['median'] / local:.2f})  outcomes {'same' if same else 'DIFFERENT'}"
        )
    return 0
