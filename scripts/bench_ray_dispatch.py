"""Per-case overhead of ``--dispatch ray`` against a local run, on shipped diagnosis cases.

Runs ``pytest CASES --agent=oracle`` locally, then with ``--dispatch ray`` (a local Ray instance
of one node), then on a 2-node ``ray.cluster_utils.Cluster`` (``ray=ADDRESS``), each into a new run
directory, and prints wall times, the ratio to the local run and whether the item outcomes match.
Images are built by the first run: run it once before measuring, or read the later rows only.

    PYTHONPATH=$PWD python scripts/bench_ray_dispatch.py benchmark_cases/diagnosis/wordstat-e2
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(cases: list[str], run_dir: Path, extra: list[str]) -> tuple[float, dict[str, str]]:
    started = time.monotonic()
    subprocess.run(
        ["pytest", "-q", "-p", "no:cacheprovider", *cases, "--run-dir", str(run_dir), *extra],
        check=False,
        stdout=subprocess.DEVNULL,
    )
    seconds = time.monotonic() - started
    outcomes = {}
    for line in (run_dir / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        outcomes[f"{row['case']}::{row['item']}"] = row["outcome"]
    return seconds, outcomes


def main() -> None:
    cases = sys.argv[1:] or ["benchmark_cases/diagnosis/wordstat-e2"]
    root = Path(tempfile.mkdtemp(prefix="enconda-ray-bench-"))
    rows = []
    local_s, local = run(cases, root / "local", [])
    rows.append(("local", local_s, local))
    ray_s, outcomes = run(cases, root / "ray-1", ["--dispatch", "ray"])
    rows.append(("ray, 1 node (local instance)", ray_s, outcomes))

    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 0,
            "object_store_memory": 200 << 20,
            "include_dashboard": False,
        },
    )
    for _ in range(2):
        cluster.add_node(num_cpus=1, object_store_memory=200 << 20)
    cluster.wait_for_nodes()
    try:
        two_s, outcomes = run(cases, root / "ray-2", ["--dispatch", f"ray={cluster.address}"])
        rows.append(("ray, 2 nodes (1 CPU each)", two_s, outcomes))
    finally:
        cluster.shutdown()
    print(f"{len(cases)} case(s), {len(local)} items; run dirs under {root}")
    for name, seconds, outcomes in rows:
        same = "same outcomes" if outcomes == local else f"DIFFERENT: {outcomes}"
        ratio = seconds / local_s
        print(f"{name:32} {seconds:7.1f} s  x{ratio:.2f} of local  {same}")


if __name__ == "__main__":
    main()
