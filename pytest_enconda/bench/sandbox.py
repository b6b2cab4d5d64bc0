"""Sandbox overheads against the ``docker run --rm IMAGE true`` floor.

    python -m pytest_enconda.bench sandbox [--runs 20] [--base bookworm-py3.11] [--cold]

``--cold`` also builds a salted copy of the base recipe from nothing (debootstrap included),
then removes it, so the shared base image is never destroyed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from . import summarize


def _timed(runs: int, action: Callable[[], object], label: str) -> list[float]:
    samples = []
    for index in range(runs):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
        print(f"  {label}: run {index + 1}/{runs} {samples[-1] * 1000:.0f} ms", file=sys.stderr)
    return samples


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_enconda.bench sandbox")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--base", default="bookworm-py3.11")
    parser.add_argument("--cold", action="store_true", help="also time a from-nothing base build")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    from rich.console import Console
    from rich.table import Table

    from ..sandbox.common import stderr_progress
    from ..sandbox.containers import Sandbox
    from ..sandbox.images import ImageBuilder
    from ..sandbox.repo import tree_hash
    from ..sandbox.settings import SandboxSettings

    settings = SandboxSettings.from_env()
    run_id = f"bench-{uuid.uuid4().hex[:8]}"
    builder = ImageBuilder(settings, run_id=run_id)
    sandbox = Sandbox(settings, run_id)
    results: dict[str, list[float]] = {}
    notes: list[str] = []

    started = time.perf_counter()
    base = builder.ensure_base(args.base, stderr_progress("[bench build]"))
    if base in builder.built:
        notes.append(f"base {base} was built by this run in {time.perf_counter() - started:.0f}s")
    results["base lookup, warm (ensure_base)"] = _timed(
        args.runs, lambda: builder.ensure_base(args.base), "warm base"
    )

    docker_cli = shutil.which("docker")
    if docker_cli:
        results["floor: docker run --rm IMAGE true"] = _timed(
            args.runs,
            lambda: subprocess.run(
                [docker_cli, "run", "--rm", base, "true"], check=True, capture_output=True
            ),
            "floor",
        )
    else:
        notes.append("docker CLI not on PATH: no floor measured")

    def lifecycle() -> None:
        with sandbox.container(base, case_id="bench", role="noop") as box:
            result = box.exec("true", timeout=30)
            if result.exit_code != 0:
                raise RuntimeError(f"no-op exec failed: {result}")

    results["harness: create → exec true → remove"] = _timed(args.runs, lifecycle, "harness")

    with sandbox.container(base, case_id="bench", role="exec") as box:
        results["exec true in a running container"] = _timed(
            args.runs, lambda: box.exec("true", timeout=30), "exec"
        )
        box.exec("echo data > /data/project/bench.txt", timeout=30)
        snapshots: list[str] = []
        results["snapshot (commit) of a container"] = _timed(
            args.runs, lambda: snapshots.append(box.snapshot("bench")), "snapshot"
        )
        for ref in snapshots:
            sandbox.client.api.remove_image(ref)

    with tempfile.TemporaryDirectory(prefix="enconda-bench-") as scratch:
        repo = Path(scratch) / "repo"
        (repo / "pkg").mkdir(parents=True)
        for index in range(200):
            (repo / "pkg" / f"module_{index}.py").write_text(f"VALUE = {index}\n" * 50)
        (repo / "README.md").write_text("# bench\n")
        overrides = {"README.md": b"# bench (shown to the agent)\n"}
        digest = tree_hash(repo)
        task = builder.ensure_task_image(base, repo, overrides, "bench", lambda line: None)
        results["task image lookup, cached (tree hash given)"] = _timed(
            args.runs,
            lambda: builder.ensure_task_image(base, repo, overrides, "bench", tree_hash=digest),
            "task lookup",
        )
        results["task image lookup, cached (tree re-hashed, 201 files)"] = _timed(
            args.runs,
            lambda: builder.ensure_task_image(base, repo, overrides, "bench"),
            "task lookup+hash",
        )
        sandbox.client.api.remove_image(task)

    if args.cold:
        recipe = builder.recipe(args.base).model_copy(
            update={"name": f"{args.base}-cold", "salt": f"bench-{uuid.uuid4().hex[:8]}"}
        )
        started = time.perf_counter()
        tag = builder.ensure_base(recipe, stderr_progress("[bench cold]"))
        results["base bootstrap, cold (debootstrap + build)"] = [time.perf_counter() - started]
        results["base bootstrap, warm (same recipe again)"] = _timed(
            args.runs, lambda: builder.ensure_base(recipe), "warm salted base"
        )
        builder.remove_base(recipe, rootfs=True)
        notes.append(f"cold base {tag} removed after measuring")

    floor = results.get("floor: docker run --rm IMAGE true")
    floor_median = summarize(floor)["median"] if floor else None
    table = Table(title=f"sandbox benchmark ({args.runs} runs, image {base})")
    for column in ("measure", "n", "median", "p90", "x floor"):
        table.add_column(column, justify="right" if column != "measure" else "left")
    for name, samples in results.items():
        stats = summarize(samples)
        ratio = f"{stats['median'] / floor_median:.2f}" if floor_median else "-"
        table.add_row(
            name,
            str(int(stats["n"])),
            _fmt(stats["median"]),
            _fmt(stats["p90"]),
            ratio,
        )
    Console().print(table)
    for note in notes:
        print(f"note: {note}")
    return 0


def _fmt(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds >= 10 else f"{seconds * 1000:.0f} ms"
