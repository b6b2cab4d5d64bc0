"""How ``verify`` works through a dataset's repositories: one record each, made by a worker
(the attempt ladder, or the null-setup recheck) on daemon threads, written into the sidecar as it
is ready; Ctrl-C and SIGTERM stop the queued ones and remove the running ones' containers."""

from __future__ import annotations

import queue
import signal
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from .. import __version__
from ..cases.sidecar import RepoVerification, Sidecar
from .context import Progress, VerifyContext, VerifyOptions
from .sidecar_writer import write_sidecar

if TYPE_CHECKING:
    from ..backends.base import Backend

__all__ = ["Worker", "run_repositories"]

Worker = Callable[[VerifyContext, str, str], RepoVerification]


def run_repositories(
    options: VerifyOptions,
    progress: Progress,
    sidecar: Sidecar,
    todo: list[tuple[str, str]],
    worker: Worker,
    said: Callable[[RepoVerification], str],
    backend: Backend | None = None,
) -> Sidecar:
    """``worker``'s record of each repository of ``todo`` into ``sidecar``, rewritten after each
    one (``said`` is its progress line); the backend is closed at the end."""
    sidecar.dataset = str(options.dataset)
    sidecar.harness_version = __version__
    ctx = VerifyContext(options, progress, backend=backend)
    ctx.backend.reap_orphans()
    restore = _terminate_as_interrupt()
    try:
        for record in _verify_all(ctx, todo, worker):
            with ctx.lock:
                sidecar.repositories[record.repository] = record
                write_sidecar(options.out, sidecar)
            progress(said(record))
    except BaseException:
        # Ctrl-C or SIGTERM: queued repositories are not started; removing the open containers
        # ends the running ones' commands; the recorded ones stay in the sidecar.
        ctx.stopping.set()
        progress("verify: interrupted: queued repositories cancelled, containers removed")
        raise
    finally:
        restore()
        ctx.backend.close()
    return sidecar


def _verify_all(
    ctx: VerifyContext, todo: list[tuple[str, str]], worker: Worker
) -> Iterator[RepoVerification]:
    """Each repository's record as it is ready, made by ``worker`` on ``workers`` daemon threads.

    Not a ThreadPoolExecutor: the interpreter joins its threads at exit, so an interrupted verify
    still waited for each running repository, whose setup may take 2,400 s (a blocked Docker
    call, a fetch, longer), before the process ended. A daemon thread is abandoned at exit; what
    it leaves is removed with the sandbox's containers, or reaped at the next start."""
    pending: queue.SimpleQueue[tuple[str, str]] = queue.SimpleQueue()
    for item in todo:
        pending.put(item)
    done: queue.SimpleQueue[RepoVerification | BaseException] = queue.SimpleQueue()

    def work() -> None:
        while not ctx.stopping.is_set():
            try:
                name, revision = pending.get_nowait()
            except queue.Empty:
                return
            try:
                done.put(worker(ctx, name, revision))
            except BaseException as exc:  # KeyboardInterrupt in a worker ends the whole run
                done.put(exc)
                return

    for index in range(min(max(1, ctx.options.workers), len(todo))):
        threading.Thread(target=work, name=f"enconda-verify-{index}", daemon=True).start()
    for _ in todo:
        outcome = done.get()
        if isinstance(outcome, BaseException):
            raise outcome
        yield outcome


def _terminate_as_interrupt() -> Callable[[], None]:
    """SIGTERM (``kill``, a CI timeout, a job scheduler) handled like Ctrl-C: Python's default
    ends the process at once, leaving the running setups' containers and the queued repositories'
    futures behind. Returns what restores the previous handler."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def interrupt(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    return restore
