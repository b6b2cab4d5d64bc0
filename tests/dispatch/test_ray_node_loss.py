"""A node killed mid-case loses no case (issue 48 item 6), on a real local multi-node cluster:
``ray start --head`` and two ``ray start --address=...`` nodes of one CPU each, a shipped
diagnosis case on the nodes' Docker engine, and the raylet process of the node running the case
killed (SIGKILL) while the case runs. Ray retries the case on the other node, which starts from a
clean, recreated case folder and removes the dead attempt's container; the item outcomes are the
undisturbed run's on the same cluster.

Every process of the test's cluster carries a marker in its environment; the test ends those
processes by id (never ``ray stop``, which would end every Ray instance on the machine).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

if os.environ.get("CI") != "true":  # .ci/run installs the dev extra: there, ray must import
    pytest.importorskip("ray", reason="--dispatch ray needs the 'ray' extra")

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "benchmark_cases" / "diagnosis" / "wordstat-e2"
MARKER = "ENCONDA_NODE_LOSS_TEST"
STORE = str(80 << 20)
# A cluster of this machine's processes only: no token (one saved in ~/.ray by another local
# Ray instance would not match the head's).
NO_TOKEN = {"RAY_AUTH_MODE": "disabled"}


def _docker() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _marked(value: str, *, prefix: bool = False) -> list[int]:
    """Pids of this user's processes whose environment has ``MARKER=value`` (or a value starting
    with it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        for pair in environ:
            key, _sep, got = pair.decode(errors="replace").partition("=")
            if key == MARKER and (got.startswith(value) if prefix else got == value):
                found.append(int(entry.name))
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


class LocalCluster:
    """A head (no CPUs: it takes no case) and named worker nodes, each a ``ray start``."""

    def __init__(self, base: Path) -> None:
        self.tag = uuid.uuid4().hex[:12]
        self.base = base
        # Unix socket paths are short: the session folder must be too.
        self.temp = Path(tempfile.mkdtemp(prefix="rnl-", dir="/tmp"))
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        head = ("--head", f"--port={self.port}", "--num-cpus=0", "--include-dashboard=false")
        self._start("head", *head, f"--temp-dir={self.temp}")

    def node_dir(self, name: str) -> Path:
        return self.base / f"node-{name}"

    def _start(self, name: str, *args: str) -> None:
        env = {
            **os.environ,
            MARKER: f"{self.tag}-{name}",
            "ENCONDA_RAY_NODE_DIR": str(self.node_dir(name)),
            "PYTHONPATH": str(ROOT),
            "RAY_USAGE_STATS_ENABLED": "0",
            **NO_TOKEN,
        }
        command = [
            *("ray", "start", *args, f"--object-store-memory={STORE}", "--disable-usage-stats"),
        ]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stdout + done.stderr

    def add_node(self, name: str) -> None:
        self._start(name, f"--address={self.address}", "--num-cpus=1")

    def kill_node(self, name: str) -> int:
        """SIGKILL the node's raylet (its workers and agents go with it, as on a lost host)."""
        raylets = [pid for pid in _marked(f"{self.tag}-{name}") if "raylet" in _cmdline(pid)]
        assert len(raylets) == 1, [(pid, _cmdline(pid)) for pid in _marked(f"{self.tag}-{name}")]
        os.kill(raylets[0], signal.SIGKILL)
        return raylets[0]

    def shutdown(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in _marked(self.tag, prefix=True):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            time.sleep(3)
        subprocess.run(["rm", "-rf", "--", str(self.temp)], check=False)


@pytest.fixture
def local_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    cluster = LocalCluster(tmp_path)
    try:
        cluster.add_node("a")
        cluster.add_node("b")
        yield cluster
    finally:
        cluster.shutdown()


def _driver(cluster: LocalCluster, run_dir: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **NO_TOKEN}
    return subprocess.Popen(
        [
            *("pytest", "-q", "-p", "no:cacheprovider", str(CASE), "--run-dir", str(run_dir)),
            *("--dispatch", f"ray={cluster.address}"),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _outcomes(run_dir: Path) -> dict[str, str]:
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    return {row["item"]: row["outcome"] for row in rows}


def _containers(run_id: str) -> list[str]:
    return subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=io.enconda.run={run_id}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()


@pytest.mark.slow
def test_a_node_killed_mid_case_gives_the_undisturbed_outcomes(
    local_cluster: LocalCluster, tmp_path: Path
) -> None:
    if not _docker():
        pytest.skip("no Docker daemon")
    from pytest_enconda.dispatch.ray import node_run_dir

    calm_dir = tmp_path / "calm"
    calm = _driver(local_cluster, calm_dir)
    calm_output, _ = calm.communicate(timeout=900)
    assert calm.returncode == 0, calm_output[-3000:]
    undisturbed = _outcomes(calm_dir)
    assert len(undisturbed) == 4, calm_output[-3000:]

    run_dir = tmp_path / "killed"
    run_id = node_run_dir(run_dir.resolve()).name
    driver = _driver(local_cluster, run_dir)
    killed = None
    try:
        deadline = time.monotonic() + 600
        while killed is None and time.monotonic() < deadline and driver.poll() is None:
            # The case is in flight on the node whose run directory holds its log and whose
            # container runs: that node's raylet dies.
            for name in ("a", "b"):
                case_dir = local_cluster.node_dir(name) / "enconda-ray" / run_id / "cases"
                if (case_dir / "wordstat-e2" / "dispatch.log").is_file() and _containers(run_id):
                    local_cluster.kill_node(name)
                    killed = name
                    break
            time.sleep(0.5)
        assert killed is not None, "the case never ran on a node"
        output, _ = driver.communicate(timeout=900)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.communicate()
        for container in _containers(run_id):
            subprocess.run(["docker", "rm", "-f", container], capture_output=True, check=False)
    assert driver.returncode == 0, output[-3000:]
    assert _outcomes(run_dir) == undisturbed
    record = json.loads((run_dir / "cases" / "wordstat-e2" / "dispatch.json").read_text())
    attempts = record["attempts"]
    assert len(attempts) == 2 and attempts[0] != attempts[1], record
    assert record["failures"] == {}, record
    # Whether the retry finds the dead attempt's container to reap depends on when the killed
    # node's worker process dies (a run at 2026-11-29 17:06 found none: its dispatch.log had no
    # "removed ... containers left by dead runs"), so the reaping is not asserted here; the
    # outcomes, the two attempts and the absence of failures are.
    assert _containers(run_id) == []
