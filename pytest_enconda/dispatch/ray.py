"""``--dispatch ray[=ADDRESS]``: each case's pipeline runs as a Ray task on a node of a cluster.

The driver (the pytest process) submits one task per collected case, with resources declared
from the case: CPUs, memory from its task kind (``TaskKind.memory_bytes``), and ``num_gpus``
from the GPU stages that apply to it (``Stage.gpus``: C3 one, C4 two). On its node the task
builds a ``CasePipeline`` on that node's own backend (its Docker engine), runs the steps the
driver's items need into a node-local run directory, and returns the case folder's files; large
files stay on the node and only their size and digest travel. The driver writes the files into
its own run directory, so its pipeline finds every artifact on disk (as ``--resume`` does) and
the items grade without running anything here.

One actor, pinned to the driver's node, is the run's cost ledger (the driver's
``cost-ledger.json``) and its progress board: a cluster run has one ledger, as an xdist run does.

A task holds its CPU while it works: Ray frees a task's CPU while the task's *main thread* waits
in ``ray.get`` (another case could then start on a node declared for one), so every call a task
makes to the board waits in a helper thread (``board.wait_in_thread``). A task Ray retries after
its node died starts from the driver's files in a clean, recreated case folder.

``ray`` is imported inside functions only: the plugin's import stays cheap without it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import EncondaError, HarnessError, RunStopped
from ..kinds import TASK_KINDS
from .board import BoardLedger, RunBoard, wait_in_thread

if TYPE_CHECKING:
    from ..backends.base import Box
    from ..cases.models import Case
    from ..pipeline import CasePipeline

# A file this large stays on its node (a snapshot's tarball, a big log): size and digest travel.
MAX_SHIPPED_FILE = 8 << 20
# CPUs of one case's task. A case does not declare its own: the agent and the container it
# drives are about one CPU's work (its memory is its task kind's).
CPUS_PER_CASE = 1.0
# Ctrl-C: cancelled tasks get this long to remove their containers before they are killed. A
# task that returns sooner ends the wait; 30 s left a container behind on a node at load 12.
CANCEL_GRACE_SECONDS = 120.0
PROGRESS_EVERY_SECONDS = 2.0
CONNECT_TIMEOUT_SECONDS = 5.0
# A local Ray instance (``--dispatch ray``) shares the machine with the run's containers.
LOCAL_OBJECT_STORE_BYTES = 200 << 20

Step = tuple[str, str]  # ("verdict", aspect) | ("stage", name) | ("agent", "")


def parse_dispatch(value: str) -> str | None:
    """The cluster address of ``ray[=ADDRESS]`` (``None``: a local Ray instance)."""
    engine, _sep, address = value.partition("=")
    if engine != "ray":
        raise ValueError(f"--dispatch: expected 'ray' or 'ray=ADDRESS', got {value!r}")
    return address or None


# ----------------------------------------------------------------------------- the case's needs


def gpus_needed(case: Case) -> int:
    """GPUs the case's applicable GPU stages need (0 for a diagnosis case)."""
    from ..stages import STAGES

    gpus = [stage.gpus for stage in STAGES.values() if stage.gpus and stage.applies_to(case)]
    return max(gpus, default=0)


def case_resources(case: Case, most_gpus_on_a_node: float) -> dict[str, Any]:
    """The task's Ray resources. GPUs are asked only up to what one node declares: a task no
    node can take would wait forever; asking fewer, its GPU stages skip with the reason."""
    gpus = min(gpus_needed(case), int(most_gpus_on_a_node))
    return {
        "num_cpus": CPUS_PER_CASE,
        "memory": TASK_KINDS.get(case.spec.suite).memory_bytes,
        "num_gpus": gpus,
    }


def steps_for(items: Iterable[str]) -> list[Step]:
    """The pipeline steps behind the driver's items of one case (aspects and stage names)."""
    from ..aspects import ASPECTS
    from ..stages import STAGES

    steps: list[Step] = []
    for name in items:
        if name in ASPECTS:
            steps.append(("verdict", name))
        elif name in STAGES:
            steps.append(("stage", name))
    # A case with only user probes still needs its agent run.
    return sorted(set(steps)) or [("agent", "")]


def _done_on_disk(case_root: Path, steps: list[Step]) -> bool:
    """Every step's output is already in the driver's case folder (``--resume``)."""
    for kind, name in steps:
        folder = {"verdict": "grading", "stage": "pyramid"}.get(kind)
        if folder is None or not (case_root / folder / f"{name}.json").is_file():
            return False
    return True


# ----------------------------------------------------------------------------- files


@dataclass
class CaseResult:
    """What a node sends back for one case."""

    case_id: str
    node_id: str
    host: str
    files: dict[str, bytes] = field(default_factory=dict)
    large: list[dict[str, Any]] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)
    # Steps the cost ceiling stopped (``RunStopped``): not finished on the driver too.
    stopped: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


def read_case_files(root: Path) -> tuple[dict[str, bytes], list[dict[str, Any]]]:
    """(small files by relative path, [{path, size, sha256}] of the large ones)."""
    small: dict[str, bytes] = {}
    large: list[dict[str, Any]] = []
    if not root.is_dir():
        return small, large
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        size = path.stat().st_size
        if size > MAX_SHIPPED_FILE:
            digest = hashlib.sha256()
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            large.append({"path": rel, "size": size, "sha256": digest.hexdigest()})
        else:
            small[rel] = path.read_bytes()
    return small, large


def write_case_files(root: Path, files: dict[str, bytes]) -> None:
    """Write files sent by the other side; a path leaving ``root`` is refused (a node is not
    trusted to write anywhere on the driver)."""
    for rel, data in files.items():
        pure = PurePosixPath(rel)
        if pure.is_absolute() or ".." in pure.parts or not pure.parts:
            raise HarnessError(f"a node sent a file outside the case folder: {rel!r}")
        target = root.joinpath(*pure.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)


def node_run_dir(driver_run_dir: Path) -> Path:
    """The node-local run directory of a driver's run (one per driver path, so two runs of one
    host never share it)."""
    tag = hashlib.sha256(str(driver_run_dir).encode()).hexdigest()[:10]
    base = Path(os.environ.get("ENCONDA_RAY_NODE_DIR") or tempfile.gettempdir())
    return base / "enconda-ray" / f"{driver_run_dir.name}-{tag}"


# ----------------------------------------------------------------------------- on the node


def run_case(
    settings: Any,
    case: Case,
    steps: list[Step],
    shipped: dict[str, bytes],
    board: Any,
    backend: tuple[str, dict[str, Any]] | None,
) -> CaseResult:
    """One case's pipeline on this node (the body of the Ray task).

    ``backend`` names a registered backend and its options (tests use the fake one); None: the
    node's own, as a local run would make it (Docker). No argument has a default: Ray's typed
    ``remote`` counts the parameters a function takes without one.
    """
    import ray

    from ..agents import llm
    from ..backends import get_backend
    from ..pipeline import CasePipeline, backend_for
    from ..records import CaseDir

    node_id = ray.get_runtime_context().get_node_id()
    node = f"{node_id[:8]} ({socket.gethostname()})"
    wait_in_thread(board.started.remote(case.id, node))
    started = time.monotonic()
    run_dir = node_run_dir(Path(settings.run_dir))
    local = settings.model_copy(update={"run_dir": run_dir})
    paths = CaseDir(run_dir, case.id)
    # The driver's files are the truth: a resumed or retried case continues from them, not from
    # whatever an earlier attempt (on this node, or a node sharing its disk) left behind.
    if paths.root.exists():
        import shutil

        shutil.rmtree(paths.root)
    paths.root.mkdir(parents=True)
    write_case_files(paths.root, shipped)
    log = paths.root / "dispatch.log"

    def progress(message: str) -> None:
        # Reaping a dead attempt's containers says so before any step has written here.
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a", encoding="utf-8") as handle:
            handle.write(f"{time.strftime('%H:%M:%S')} {message.rstrip()}\n")

    previous_factory = llm.LEDGER_FACTORY
    llm.LEDGER_FACTORY = lambda _run_dir, max_cost: BoardLedger(board, max_cost)
    if backend is None:
        made = backend_for(local, progress, run_dir.name)
    else:
        made = get_backend(backend[0], **backend[1])
    pipeline = CasePipeline(local, progress=progress, worker_id=f"ray-{node_id[:8]}", backend=made)
    failures: dict[str, str] = {}
    stopped: dict[str, str] = {}
    try:
        for kind, name in steps:
            try:
                if kind == "verdict":
                    pipeline.verdict(case, name)
                elif kind == "stage":
                    pipeline.stage(case, name)
                else:
                    pipeline.agent_outcome(case)
            except EncondaError:
                pass  # kept in the pipeline's failures, sent below
        for step, exc in pipeline.failures_of(case).items():
            if isinstance(exc, RunStopped):
                stopped[step] = str(exc)
            else:
                failures[step] = f"{exc} (on node {node})"
    finally:
        llm.LEDGER_FACTORY = previous_factory
        # Graded here: the node's snapshot goes, as after a case's last item in a local run.
        pipeline.release_snapshot(case)
        pipeline.close()  # this case's boxes go with it, cancelled or not
        wait_in_thread(board.finished.remote(case.id))
    files, large = read_case_files(paths.root)
    return CaseResult(
        case_id=case.id,
        node_id=node_id,
        host=node,
        files=files,
        large=large,
        failures=failures,
        stopped=stopped,
        seconds=time.monotonic() - started,
    )


# ----------------------------------------------------------------------------- on the driver


class DispatchedBackend:
    """The driver's backend under ``--dispatch``: boxes live on the nodes, so the driver starts
    none; its pipeline only reads what the nodes sent back."""

    name = "ray"
    local_tools = False
    existing: str | None = None
    keep = False

    def __init__(self, run_dir: Path) -> None:
        self._cache = run_dir / ".ray-driver-cache"

    @property
    def cache_dir(self) -> Path:
        return self._cache

    def _refuse(self, what: str) -> HarnessError:
        return HarnessError(
            f"{what}: under --dispatch ray boxes run on the cluster's nodes; the node did not "
            "send this step's result (its log is dispatch.log in the case folder)"
        )

    def start(self, image: str, **options: Any) -> Box:
        raise self._refuse(f"starting {image} for {options.get('case_id')}")

    def image_exists(self, image: str) -> bool:
        return True  # snapshots stay on their node, which checked them

    def free_bytes(self) -> int | None:
        return None  # the nodes write images and check their own disks

    def remove_snapshot(self, image: str) -> bool:
        return False  # a node removes its own once the case is graded there

    def task_image(self, case: Case, *args: Any, **kwargs: Any) -> str:
        raise self._refuse(f"task image of {case.id}")

    def gpu_count(self) -> int:
        return 0

    def reap_orphans(self) -> list[str]:
        return []

    def close(self) -> None:
        pass


@dataclass
class _Pending:
    ref: Any
    steps: list[Step]
    submitted: float


class RayDispatcher:
    """Submits each case once, waits for it when an item first needs it, and adopts its files."""

    def __init__(
        self,
        settings: Any,
        progress: Callable[[str], None],
        *,
        backend: tuple[str, dict[str, Any]] | None = None,
        address: str | None = None,
        init_options: dict[str, Any] | None = None,
    ) -> None:
        if settings.python is not None:
            raise pytest.UsageError(
                "--dispatch ray runs cases on the cluster's nodes; --python grades an "
                "environment on this host: use one or the other"
            )
        self.settings = settings
        self.progress = progress
        self.backend = backend
        self.address = address if address is not None else parse_dispatch(settings.dispatch)
        self._init_options = init_options or {}
        self._started_ray = False
        self._board: Any = None
        self._pending: dict[str, _Pending] = {}
        self._results: dict[str, CaseResult] = {}
        self._last_report = ""
        self._last_poll = 0.0
        self.connect()

    # -- the cluster

    def connect(self) -> None:
        import ray

        if not ray.is_initialized():
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if self.address is None:
                options["object_store_memory"] = LOCAL_OBJECT_STORE_BYTES
            options.update(self._init_options)
            try:
                _reachable(self.address)
                # "local": a new instance even where `ray start` runs a cluster on this machine
                # (Ray would join that one, and refuse the object store size given here).
                ray.init(address=self.address or "local", **options)
            except (ConnectionError, TimeoutError, RuntimeError, ValueError) as exc:
                with contextlib.suppress(Exception):
                    ray.shutdown()
                where = self.address or "a local Ray instance"
                raise pytest.UsageError(
                    f"--dispatch ray: cannot reach the Ray cluster at {where}: {exc}; start one "
                    "with `ray start --head` (README: Running on a Ray cluster)"
                ) from None
            self._started_ray = True
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = ray.get_runtime_context().get_node_id()
        # On the driver's node: the ledger file it writes is the driver's run directory's.
        board = ray.remote(num_cpus=0)(RunBoard).options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)
        )
        self._board = board.remote(str(self.settings.run_dir), self.settings.max_cost)

    def most_gpus_on_a_node(self) -> float:
        import ray

        alive = [node for node in ray.nodes() if node.get("Alive")]
        return max((node["Resources"].get("GPU", 0.0) for node in alive), default=0.0)

    def driver_backend(self) -> DispatchedBackend:
        return DispatchedBackend(self.settings.run_dir)

    # -- cases

    def submit(self, cases: Iterable[tuple[Case, list[str]]]) -> None:
        """One task per case not yet done; ``items`` are the names of its collected items."""
        import ray

        from ..records import CaseDir

        remote = ray.remote(run_case)
        gpus = self.most_gpus_on_a_node()
        for case, items in cases:
            if case.id in self._pending:
                continue
            steps = steps_for(items)
            root = CaseDir(self.settings.run_dir, case.id).root
            if _done_on_disk(root, steps):
                continue  # --resume: its files are here already
            shipped, _large = read_case_files(root)
            options = remote.options(
                max_retries=1, retry_exceptions=False, **case_resources(case, gpus)
            )
            ref = options.remote(self.settings, case, steps, shipped, self._board, self.backend)
            self._pending[case.id] = _Pending(ref, steps, time.monotonic())
        if self._pending:
            self.progress(f"ray: {len(self._pending)} cases queued on the cluster")

    def fetch(self, pipeline: CasePipeline, case: Case) -> None:
        """Wait for the case's task and write what it sent into the driver's case folder."""
        import ray
        import ray.exceptions

        pending = self._pending.get(case.id)
        if pending is None or case.id in self._results:
            return
        try:
            while True:
                ready, _ = ray.wait([pending.ref], timeout=PROGRESS_EVERY_SECONDS)
                self._report()
                if ready:
                    break
            result: CaseResult = ray.get(pending.ref)
        except KeyboardInterrupt:
            self.cancel()
            raise
        except ray.exceptions.RayTaskError as exc:
            raise HarnessError(f"{case.id}: the case's task failed on its node: {exc}") from None
        except ray.exceptions.RayError as exc:
            nodes = self.attempts(case.id)
            raise HarnessError(
                f"{case.id}: lost on node {nodes[-1] if nodes else 'unknown'} after "
                f"{len(nodes)} attempt(s) (nodes: {', '.join(nodes) or 'none'}): "
                f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            ) from None
        self._results[case.id] = result
        root = pipeline.case_dir(case).root
        write_case_files(root, result.files)
        import json

        record = {
            "node": result.host,
            "node_id": result.node_id,
            "attempts": self.attempts(case.id),
            "seconds": round(result.seconds, 3),
            "large_files": result.large,
            "failures": result.failures,
            "not_finished": result.stopped,
        }
        write_case_files(root, {"dispatch.json": (json.dumps(record, indent=2) + "\n").encode()})
        for step, message in result.failures.items():
            pipeline.adopt_failure(case, step, HarnessError(message))
        for step, message in result.stopped.items():
            pipeline.adopt_failure(case, step, RunStopped(message))
        self._report(force=True)

    def peaks(self) -> dict[str, int]:
        """The most cases each node ran at once (by node, as ``attempts`` names them)."""
        import ray

        return dict(ray.get(self._board.peaks.remote(), timeout=10))

    def attempts(self, case_id: str) -> list[str]:
        import ray

        try:
            _running, attempts = ray.get(self._board.snapshot.remote(), timeout=10)
        except Exception:  # the board's own node is gone: nothing more to say
            return []
        return list(attempts.get(case_id, []))

    def _report(self, *, force: bool = False) -> None:
        """Queued / running per node / done, through the session's progress, when it changes."""
        import ray

        now = time.monotonic()
        if not force and now - self._last_poll < PROGRESS_EVERY_SECONDS:
            return
        self._last_poll = now
        try:
            running, _attempts = ray.get(self._board.snapshot.remote(), timeout=10)
            finished = set(ray.get(self._board.finished_cases.remote(), timeout=10))
        except Exception:
            return
        # Finished on its node, whether or not an item has fetched it yet.
        done = len((finished & set(self._pending)) | set(self._results))
        busy = {case for case in running if case not in self._results}
        queued = max(0, len(self._pending) - done - len(busy))
        per_node: dict[str, int] = {}
        for case in busy:
            per_node[running[case]] = per_node.get(running[case], 0) + 1
        nodes = ", ".join(f"{node}: {count}" for node, count in sorted(per_node.items()))
        line = f"ray: {queued} queued, {len(busy)} running ({nodes or 'none'}), {done} done"
        if line != self._last_report:
            self._last_report = line
            self.progress(line)

    def cancel(self) -> None:
        """Ctrl-C: cancel every unfinished task; each removes its boxes as it unwinds (a grace
        period), then what is left is killed."""
        import ray

        left = [p.ref for key, p in self._pending.items() if key not in self._results]
        if not left:
            return
        self.progress(f"ray: cancelling {len(left)} cases on the cluster")
        for ref in left:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=False)
        with contextlib.suppress(Exception):
            _ready, left = ray.wait(left, num_returns=len(left), timeout=CANCEL_GRACE_SECONDS)
        for ref in left:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)

    def close(self) -> None:
        import ray

        if not ray.is_initialized():
            return
        self.cancel()
        if self._started_ray:
            ray.shutdown()


def _reachable(address: str | None) -> None:
    """A TCP connection to ``HOST:PORT`` first: ``ray.init`` retries an unreachable address for
    minutes inside C++ code, where neither an alarm nor Ctrl-C reaches it."""
    if address is None or address in ("auto", "local") or address.startswith("ray://"):
        return
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"expected HOST:PORT, got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_SECONDS).close()
    except OSError as exc:
        raise ConnectionError(f"no Ray head answers there ({exc})") from None
