"""The hostile-input suite's tally: inputs tried per kind, and what went wrong with them.

Each test runs its inputs through ``attempt``, which times it, watches the process's peak
memory and the canary host file, and fails the test at the first crash, hang, blow-up or host
read. With ``ENCONDA_HOSTILE_FIGURES=FILE`` the tally is written there (the README's figures).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# What one bad input may cost: a hang is anything slower, a blow-up anything bigger.
SECONDS = 5.0
WHOLE_RUN_SECONDS = 60.0
MEGABYTES = 512
# A command run as its own process (``run_command``): its limits.
COMMAND_SECONDS = 60.0
COMMAND_MEGABYTES = 1024
# The address-space cap that stops a runaway command before it takes the machine down; its
# resident peak is what is judged against COMMAND_MEGABYTES.
_COMMAND_ADDRESS_SPACE = 6 * 1024**3
CANARY = "ENCONDA-HOST-CANARY-7f3a"

TALLY: Counter[str] = Counter()
FAULTS: Counter[str] = Counter()


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Attempt:
    whole_run = WHOLE_RUN_SECONDS

    def __init__(self, canary: Path) -> None:
        self.canary = canary

    def __call__(
        self,
        kind: str,
        run: Callable[[], Any],
        expected: tuple[type[BaseException], ...],
        seconds: float = SECONDS,
    ) -> tuple[Any, BaseException | None]:
        """(result, the expected error raised or None); anything else fails the test.

        ``seconds``: a whole-run operation (a regrade with its report) is given
        ``WHOLE_RUN_SECONDS``: seconds of work on an idle machine, and many more on a loaded
        one, where 5 s would call it a hang."""
        TALLY[kind] += 1
        before = _peak_mb()
        started = time.monotonic()
        result: Any = None
        error: BaseException | None = None
        try:
            result = run()
        except expected as exc:
            error = exc
        except Exception:
            FAULTS[f"{kind}: crash"] += 1
            raise
        took = time.monotonic() - started
        grew = _peak_mb() - before
        if took > seconds:
            FAULTS[f"{kind}: hang"] += 1
            pytest.fail(f"{kind}: took {took:.1f} s")
        if grew > MEGABYTES:
            FAULTS[f"{kind}: memory"] += 1
            pytest.fail(f"{kind}: peak memory grew {grew:.0f} MB")
        if CANARY in repr(result) or (error is not None and CANARY in str(error)):
            FAULTS[f"{kind}: host read"] += 1
            pytest.fail(f"{kind}: the host file's text reached the result")
        return result, error


class CommandResult:
    def __init__(self, returncode: int, stdout: str, stderr: str, peak_mb: float) -> None:
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.peak_mb = peak_mb


def _cap_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_COMMAND_ADDRESS_SPACE, _COMMAND_ADDRESS_SPACE))


def run_command(
    kind: str,
    argv: list[str],
    *,
    cwd: Path | None = None,
    returncodes: tuple[int, ...] = (0, 2),
    seconds: float = COMMAND_SECONDS,
    env: dict[str, str] | None = None,
) -> CommandResult:
    """``pytest-enconda ARGV`` as its own process, as a user runs it; the test fails when it
    crashes (a traceback, or an exit code outside ``returncodes``), hangs past ``seconds``,
    takes more than ``COMMAND_MEGABYTES`` resident, or prints the host canary."""
    TALLY[kind] += 1
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_enconda.cli", *argv],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
        preexec_fn=_cap_address_space,
    )
    streams: dict[str, bytes] = {}
    readers = [
        threading.Thread(target=lambda n=name, f=handle: streams.__setitem__(n, f.read()))
        for name, handle in (("out", proc.stdout), ("err", proc.stderr))
    ]
    for reader in readers:
        reader.start()
    hung = threading.Event()

    def stop() -> None:
        hung.set()
        proc.kill()

    timer = threading.Timer(seconds, stop)
    timer.start()
    # Reaped here rather than by Popen: wait4's rusage is this child's own resident peak.
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    for reader in readers:
        reader.join()
    stdout = streams.get("out", b"").decode("utf-8", "replace")
    stderr = streams.get("err", b"").decode("utf-8", "replace")
    peak = usage.ru_maxrss / 1024
    if hung.is_set():
        FAULTS[f"{kind}: hang"] += 1
        pytest.fail(f"{kind}: pytest-enconda {argv!r} ran past {seconds:.0f} s")
    took = time.monotonic() - started
    if "Traceback (most recent call last)" in stderr or proc.returncode not in returncodes:
        FAULTS[f"{kind}: crash"] += 1
        pytest.fail(
            f"{kind}: pytest-enconda {argv!r} exited {proc.returncode} after {took:.1f} s\n"
            f"{stderr[-3000:]}"
        )
    if peak > COMMAND_MEGABYTES:
        FAULTS[f"{kind}: memory"] += 1
        pytest.fail(f"{kind}: peak resident memory {peak:.0f} MB")
    if CANARY in stdout or CANARY in stderr:
        FAULTS[f"{kind}: host read"] += 1
        pytest.fail(f"{kind}: the host file's text reached the output")
    return CommandResult(proc.returncode, stdout, stderr, peak)


@pytest.fixture(scope="session")
def canary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A host file no input may make the harness read."""
    path = tmp_path_factory.mktemp("host") / "secret.txt"
    path.write_text(CANARY + "\n")
    return path


@pytest.fixture
def attempt(canary: Path) -> Attempt:
    return Attempt(canary)


@pytest.fixture(scope="session", autouse=True)
def _figures() -> Iterator[None]:
    yield
    target = os.environ.get("ENCONDA_HOSTILE_FIGURES")
    if target:
        Path(target).write_text(
            json.dumps({"inputs": dict(sorted(TALLY.items())), "faults": dict(FAULTS)}, indent=2)
        )
