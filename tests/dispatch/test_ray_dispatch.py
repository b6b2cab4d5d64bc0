"""``--dispatch ray`` on a real local multi-node Ray cluster (``ray.cluster_utils.Cluster``).

The head node takes no cases (it holds the run's board); two worker nodes take them, one of them
declaring two (fake) GPUs. Cases run on the fake backend here: these tests are about where and
how cases run, not about Docker (``test_ray_docker.py`` compares a real case with a local run).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_enconda.cases.loader import load_case
from pytest_enconda.cases.models import Case
from pytest_enconda.errors import HarnessError
from pytest_enconda.pipeline import CasePipeline
from pytest_enconda.records import CaseDir
from pytest_enconda.settings import EncondaSettings

if os.environ.get("CI") == "true":
    import ray  # .ci/run installs the dev extra: a missing ray fails the run, never skips
else:
    ray = pytest.importorskip("ray", reason="--dispatch ray needs the 'ray' extra")

from pytest_enconda.dispatch.ray import (
    RayDispatcher,
    case_resources,
    gpus_needed,
    node_run_dir,
)

ASPECTS = ["execution", "error_types", "descriptions", "fixes"]
STORE = 80 << 20  # object store per node: the machine is shared
E4 = {
    "error_type": "E4",
    "error_description": "the README runs `python tools/run.py`, but the file is scripts/run.py",
    "correction_candidates": ["python scripts/run.py"],
    "golden_answer": "python scripts/run.py",
}


def diagnosis_case(root: Path, name: str, setup: str) -> Case:
    case_dir = root / "bench" / name
    (case_dir / "repo" / "scripts").mkdir(parents=True)
    (case_dir / "repo" / "scripts" / "run.py").write_text("print('ok')\n")
    (case_dir / "README.md").write_text("# toy\n\n```bash\npython tools/run.py\n```\n")
    (case_dir / "golden.json").write_text(json.dumps({"level": 1, "errors": [E4]}))
    (case_dir / "setup.sh").write_text(setup)
    (case_dir / "case.toml").write_text(
        f'id = "{name}"\nsuite = "diagnosis"\nreadme = "README.md"\ngolden = "golden.json"\n'
        'golden_setup = "setup.sh"\ntest_command = "test -f built.txt"\n'
        '[repository]\nkind = "folder"\npath = "repo"\n'
        "[budgets]\nsetup_seconds = 60\ntest_seconds = 30\n"
    )
    return load_case(case_dir / "case.toml", [root / "bench"])


def research_case(root: Path, name: str, *, multi_gpu: bool) -> Case:
    case_dir = root / "bench" / name
    (case_dir / "repo").mkdir(parents=True)
    (case_dir / "repo" / "README.md").write_text("# toy\n")
    (case_dir / "setup.sh").write_text("true\n")
    (case_dir / "case.toml").write_text(
        f'id = "{name}"\nsuite = "research"\nreadme = "repo/README.md"\n'
        'golden_setup = "setup.sh"\n'
        '[repository]\nkind = "folder"\npath = "repo"\n'
        '[research]\nentry_point = "true"\nddp_entry_point = "-c pass"\n'
        f"supports_multi_gpu = {str(multi_gpu).lower()}\n"
    )
    return load_case(case_dir / "case.toml", [root / "bench"])


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 0, "object_store_memory": STORE, "include_dashboard": False},
    )
    cluster.add_node(num_cpus=1, object_store_memory=STORE)
    cluster.add_node(num_cpus=1, num_gpus=2, object_store_memory=STORE)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
    try:
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


def _settings(tmp_path: Path, **extra: Any) -> EncondaSettings:
    return EncondaSettings(run_dir=tmp_path / "run", dispatch="ray", **extra)


def _driver(tmp_path: Path, settings: EncondaSettings) -> tuple[CasePipeline, RayDispatcher]:
    messages: list[str] = []
    dispatcher = RayDispatcher(
        settings, messages.append, backend=("fake", {"root": tmp_path / "fake"})
    )
    dispatcher.messages = messages  # type: ignore[attr-defined]
    pipeline = CasePipeline(settings, progress=messages.append, dispatcher=dispatcher)
    return pipeline, dispatcher


def _gpu_node(cluster: Any) -> str:
    nodes = [n for n in ray.nodes() if n["Alive"] and n["Resources"].get("GPU", 0) > 0]
    return str(nodes[0]["NodeID"])


def test_a_case_runs_on_a_node_and_the_driver_grades_the_same(cluster: Any, tmp_path: Path) -> None:
    case = diagnosis_case(tmp_path, "toy", "echo built > built.txt\n")
    local = CasePipeline(
        EncondaSettings(run_dir=tmp_path / "local"),
        progress=lambda _m: None,
        backend=__import__("pytest_enconda.backends.fake", fromlist=["x"]).FakeBackend(
            tmp_path / "fake-local"
        ),
    )
    expected = {aspect: local.verdict(case, aspect).outcome for aspect in ASPECTS}

    pipeline, dispatcher = _driver(tmp_path, _settings(tmp_path))
    dispatcher.submit([(case, ASPECTS)])
    got = {aspect: pipeline.verdict(case, aspect).outcome for aspect in ASPECTS}
    assert got == expected == dict.fromkeys(ASPECTS, "passed")

    paths = CaseDir(tmp_path / "run", "toy")
    record = json.loads((paths.root / "dispatch.json").read_text())
    assert record["attempts"] == [record["node"]] and record["failures"] == {}
    # The agent ran once, in a Ray worker: the driver only read the node's files.
    runs = [json.loads(line) for line in paths.agent_runs.read_text().splitlines()]
    assert len(runs) == 1 and runs[0]["worker"].startswith("ray-")
    assert paths.execution_record.is_file() and (paths.root / "dispatch.log").is_file()
    assert any("1 done" in line for line in dispatcher.messages)  # type: ignore[attr-defined]


def test_gpu_cases_go_only_to_the_node_that_declares_gpus(cluster: Any, tmp_path: Path) -> None:
    one = research_case(tmp_path, "one-gpu", multi_gpu=False)
    two = research_case(tmp_path, "two-gpus", multi_gpu=True)
    cpu = diagnosis_case(tmp_path, "cpu-only", "echo built > built.txt\n")
    assert (gpus_needed(one), gpus_needed(two), gpus_needed(cpu)) == (1, 2, 0)
    assert case_resources(two, 2.0)["num_gpus"] == 2
    # No node with GPUs: asking for them would wait forever; the GPU stages skip instead.
    assert case_resources(two, 0.0)["num_gpus"] == 0

    pipeline, dispatcher = _driver(tmp_path, _settings(tmp_path))
    dispatcher.submit([(one, ["C3"]), (two, ["C4"])])
    for case, stage in ((one, "C3"), (two, "C4")):
        pipeline.stage(case, stage)
        record = json.loads((CaseDir(tmp_path / "run", case.id).root / "dispatch.json").read_text())
        assert record["node_id"] == _gpu_node(cluster), (case.id, record)


@pytest.mark.slow
def test_a_case_on_a_node_that_dies_is_retried_on_another(cluster: Any, tmp_path: Path) -> None:
    victim = cluster.add_node(num_cpus=1, resources={"victim": 1}, object_store_memory=STORE)
    cluster.wait_for_nodes()
    case = diagnosis_case(tmp_path, "slow", "sleep 6; echo built > built.txt\n")
    pipeline, dispatcher = _driver(tmp_path, _settings(tmp_path))
    dispatcher.submit([(case, ASPECTS)])
    deadline = time.monotonic() + 60
    while not dispatcher.attempts("slow") and time.monotonic() < deadline:
        time.sleep(0.2)
    first = dispatcher.attempts("slow")
    assert first, "the case never started"
    # Kill whichever node took it (the victim, or a regular worker replaced right after).
    by_id = {node.node_id[:8]: node for node in cluster.worker_nodes}
    dead = by_id[first[0][:8]]
    cluster.remove_node(dead, allow_graceful=False)
    if dead is not victim:
        cluster.add_node(num_cpus=1, object_store_memory=STORE)
    assert pipeline.verdict(case, "execution").outcome == "passed"
    attempts = dispatcher.attempts("slow")
    assert len(attempts) == 2 and attempts[1] != attempts[0], attempts


def test_node_dirs_are_per_run(tmp_path: Path) -> None:
    assert node_run_dir(tmp_path / "a" / "run") != node_run_dir(tmp_path / "b" / "run")


def test_a_harness_failure_on_the_node_is_the_items_error(cluster: Any, tmp_path: Path) -> None:
    case = diagnosis_case(tmp_path, "norepo", "true\n")
    (case.case_dir / "repo" / "scripts" / "run.py").unlink()
    (case.case_dir / "repo" / "scripts").rmdir()
    (case.case_dir / "repo").rmdir()
    pipeline, dispatcher = _driver(tmp_path, _settings(tmp_path))
    dispatcher.submit([(case, ["execution"])])
    with pytest.raises(HarnessError, match="on node"):
        pipeline.verdict(case, "execution")


def test_a_case_lost_twice_is_a_harness_error_naming_both_nodes(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Retried once, then given up: the error names every node that took it."""
    import pytest_enconda.dispatch.ray as dispatch

    plain = dispatch.case_resources

    def on_loss_nodes(case: Case, gpus: float) -> dict[str, Any]:
        return {**plain(case, gpus), "resources": {"loss": 1}}

    monkeypatch.setattr(dispatch, "case_resources", on_loss_nodes)
    nodes = [
        cluster.add_node(num_cpus=1, resources={"loss": 1}, object_store_memory=STORE)
        for _ in range(2)
    ]
    cluster.wait_for_nodes()
    case = diagnosis_case(tmp_path, "twice", "sleep 30; echo built > built.txt\n")
    pipeline, dispatcher = _driver(tmp_path, _settings(tmp_path))
    dispatcher.submit([(case, ASPECTS)])
    by_id = {node.node_id[:8]: node for node in nodes}
    killed: list[str] = []
    deadline = time.monotonic() + 120
    while len(killed) < 2 and time.monotonic() < deadline:
        attempts = dispatcher.attempts("twice")
        if len(attempts) > len(killed):
            node = attempts[len(killed)]
            cluster.remove_node(by_id[node[:8]], allow_graceful=False)
            killed.append(node)
        time.sleep(0.2)
    assert len(killed) == 2, f"the case was not retried: {dispatcher.attempts('twice')}"
    with pytest.raises(HarnessError) as raised:
        pipeline.verdict(case, "execution")
    message = str(raised.value)
    assert "after 2 attempt(s)" in message
    for node in killed:
        assert node in message


def test_a_leftover_case_folder_on_the_node_is_replaced_by_a_clean_one(
    cluster: Any, tmp_path: Path
) -> None:
    """What a dead attempt left in the node's case folder is gone, and the case runs from a
    recreated folder (it crashed on its ``dispatch.log`` when the folder was only deleted)."""
    case = diagnosis_case(tmp_path, "stale", "echo built > built.txt\n")
    settings = _settings(tmp_path)
    left = CaseDir(node_run_dir(settings.run_dir), "stale").root
    left.mkdir(parents=True)
    (left / "left-by-a-dead-attempt.txt").write_text("stale\n")
    try:
        pipeline, dispatcher = _driver(tmp_path, settings)
        dispatcher.submit([(case, ASPECTS)])
        got = {aspect: pipeline.verdict(case, aspect).outcome for aspect in ASPECTS}
    finally:
        import shutil

        shutil.rmtree(node_run_dir(settings.run_dir), ignore_errors=True)
    assert got == dict.fromkeys(ASPECTS, "passed")
    root = CaseDir(tmp_path / "run", "stale").root
    assert not (root / "left-by-a-dead-attempt.txt").exists()
    assert (root / "dispatch.log").is_file()


def _blocks_in_get(board: Any, in_thread: bool) -> tuple[float, float]:
    """A task that waits on the board three times (as a case waits on the run's ledger)."""
    from pytest_enconda.dispatch.board import wait_in_thread

    began = time.time()
    for _ in range(3):
        ref = board.ledger_state.remote()
        wait_in_thread(ref) if in_thread else ray.get(ref)
        time.sleep(0.3)
    return began, time.time()


# The two helpers above and below run in Ray's workers, which cannot import this test module.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


@ray.remote(num_cpus=0)
class _SlowBoard:
    def ledger_state(self) -> int:
        time.sleep(1.0)
        return 0


@pytest.mark.parametrize("in_thread", [True, False])
def test_a_task_keeps_its_cpu_while_it_waits_on_the_board(cluster: Any, in_thread: bool) -> None:
    """Two one-CPU tasks on a one-CPU node: waiting through ``wait_in_thread`` they run one
    after the other; a plain ``ray.get`` in the task's main thread lets Ray free the CPU and
    start the second meanwhile (why a node declared for one case ran two)."""
    cluster.add_node(num_cpus=1, resources={"solo": 1}, object_store_memory=STORE)
    cluster.wait_for_nodes()
    board = _SlowBoard.remote()
    task = ray.remote(_blocks_in_get).options(num_cpus=1, resources={"solo": 0.01})
    (s1, e1), (s2, e2) = ray.get([task.remote(board, in_thread) for _ in range(2)], timeout=120)
    overlap = s2 < e1 and s1 < e2
    assert overlap is not in_thread, ((s1, e1), (s2, e2))


def test_a_one_cpu_node_runs_one_case_at_a_time_and_done_cases_are_counted(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pytest_enconda.dispatch.ray as dispatch

    plain = dispatch.case_resources

    def on_the_single_node(case: Case, gpus: float) -> dict[str, Any]:
        # A sliver of the node's own resource: only its one CPU bounds how many run.
        return {**plain(case, gpus), "resources": {"single": 0.01}}

    monkeypatch.setattr(dispatch, "case_resources", on_the_single_node)
    cluster.add_node(num_cpus=1, resources={"single": 1}, object_store_memory=STORE)
    cluster.wait_for_nodes()
    cases = [
        diagnosis_case(tmp_path, f"one-{n}", "sleep 1; echo built > built.txt\n") for n in range(3)
    ]
    pipeline, dispatcher = _driver(tmp_path, _settings(tmp_path))
    dispatcher.submit([(case, ASPECTS) for case in cases])
    assert pipeline.verdict(cases[0], "execution").outcome == "passed"
    # The others finish on the node while no item has asked for them yet: done, not queued.
    deadline = time.monotonic() + 120
    while len(ray.get(dispatcher._board.finished_cases.remote())) < 3:
        assert time.monotonic() < deadline, dispatcher.messages  # type: ignore[attr-defined]
        time.sleep(0.5)
    dispatcher._report(force=True)
    messages = dispatcher.messages  # type: ignore[attr-defined]
    assert "ray: 0 queued, 0 running (none), 3 done" in messages, messages
    assert list(dispatcher.peaks().values()) == [1]
