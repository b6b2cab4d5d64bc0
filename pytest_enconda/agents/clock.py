"""The agent's wall clock on this machine: the case's ``agent_seconds`` stretched by how slow the
machine is when the agent starts.

A case's agent budget was written for an idle machine. On a loaded one the agent's commands
(pip, compilers, tests) take longer, and a fixed budget would cut an agent for the machine's
load: the same scripted commands took 1.3 to 3.3 times longer at ``-n 8`` than at ``-n 2`` on two
cores. So the budget an agent gets is ``agent_seconds x --budget-scale x factor``, where
``factor`` is the slowdown measured just before the agent starts (``measure``), never below 1
and at most ``MAX_FACTOR``. Steps and tokens are not scaled: load does not change how many an
agent needs.

**The measurement.** A CPU-bound loop runs for ``PROBE_CPU_SECONDS`` of its own CPU time in a box
of the case's task image, where the agent's commands will run, and the factor is its wall time
over that CPU time: the share of a CPU a runnable process in such a box gets right now. On an
idle machine that is 1; with twice as many busy boxes as cores it is about 2. In a box, not in
the harness's process: Docker gives each container its own scheduling group, so CPU burners
beside the harness slow the harness far more than a box (measured: a probe on the host said
11 x where a command in a box took 1.35 x as long). It needs no reference time recorded with the
case (a shipped case records none), costs a box and a quarter of a second per case on an idle
machine, and runs per case, so a long run follows the load as it changes. It measures CPU
contention: work that waits on the network or on a disk slows less than the factor says, so such
an agent gets more time than the load took from it, never less. The golden setup's time against
a recorded reference would need a golden setup run before every agent (minutes for a research
case) and a reference time that most cases lack; the execution replay's calibration on the
golden setup (``probing.execution``) stays as it is.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from ..backends.base import Box

# A stretched budget bounds a hung agent too: ten times the case's is as far as it goes, and
# ``items.case_timeout`` sits above that.
MAX_FACTOR = 10.0
# Dozens of scheduler slices, so that no single one decides the figure; short enough to run per
# case (at most ``MAX_FACTOR`` x this of wall time).
PROBE_CPU_SECONDS = 0.25

# Run with ``python3 -c`` in a box (or, ``probe_cpu_share``, a process of the harness's own):
# prints its wall and CPU seconds; it stops at ``limit`` wall seconds, where the factor would be
# capped anyway.
PROBE = """
import sys, time
target, limit = float(sys.argv[1]), float(sys.argv[2])
wall0, cpu0 = time.perf_counter(), time.thread_time()
n = 0
while True:
    for _ in range(10000):
        n += 1
    cpu, wall = time.thread_time() - cpu0, time.perf_counter() - wall0
    if cpu >= target or wall >= limit:
        break
print(wall, cpu)
"""


class ClockProbe(BaseModel):
    """One run of the CPU probe: its wall time and the CPU time it got."""

    wall_seconds: float = Field(ge=0)
    cpu_seconds: float = Field(ge=0)

    @property
    def slowdown(self) -> float:
        if self.cpu_seconds <= 0:
            return MAX_FACTOR
        return self.wall_seconds / self.cpu_seconds


class AgentClock(BaseModel):
    """How the agent's wall-clock budget was set for one case (``agent/outcome.json``'s
    ``clock``): ``seconds = case_seconds x budget_scale x factor``."""

    case_seconds: float = Field(description="the case's agent_seconds")
    budget_scale: float = Field(default=1.0, description="--budget-scale")
    factor: float = Field(
        ge=1.0, le=MAX_FACTOR, description="the slowdown the budget was stretched by"
    )
    measured: float | None = Field(
        default=None, description="the probe's slowdown before bounding (None: not measured)"
    )
    cap: float = Field(default=MAX_FACTOR, description="the most the factor may be")
    capped: bool = Field(default=False, description="the measured slowdown was above the cap")
    method: Literal["box", "host", "none"] = Field(
        default="box",
        description="where the probe ran: in a box of the task image (the harness's way), in a "
        "process on the host (``measure`` given no box: the benchmark's contrast), or nowhere "
        "(the factor is 1: see note)",
    )
    probe: ClockProbe | None = Field(default=None, description="the measurement's inputs")
    seconds: float = Field(description="the wall-clock budget the agent ran with")
    note: str = ""

    def describe(self) -> str:
        """One line for a message: the budget and where it came from."""
        text = f"{self.seconds:.0f} s = {self.case_seconds:g} s"
        if self.budget_scale != 1:
            text += f" x --budget-scale {self.budget_scale:g}"
        text += f" x slowdown {self.factor:.2f}"
        return text + (" (capped)" if self.capped else "")


def _parsed(output: str) -> ClockProbe:
    wall, cpu = (float(value) for value in output.split()[-2:])
    return ClockProbe(wall_seconds=round(wall, 4), cpu_seconds=round(cpu, 4))


def _limits(cpu_seconds: float, cap: float) -> tuple[str, float]:
    """The probe's arguments and how long it may take in all (its limit and a start)."""
    limit = cpu_seconds * cap
    return f"{cpu_seconds:g} {limit:g}", limit + 60


def probe_in_box(
    box: Box, cpu_seconds: float = PROBE_CPU_SECONDS, cap: float = MAX_FACTOR
) -> ClockProbe:
    """Run the probe in ``box`` (a ``Box``: where the agent's commands run); ``OSError`` or
    ``ValueError`` when it could not run there."""
    arguments, timeout = _limits(cpu_seconds, cap)
    result = box.exec(f"python3 -c {shlex.quote(PROBE)} {arguments}", timeout=timeout, workdir="/")
    if result.exit_code != 0:
        raise OSError(f"the probe exited {result.exit_code}: {result.output.strip()[-300:]}")
    return _parsed(result.output)


def probe_cpu_share(cpu_seconds: float = PROBE_CPU_SECONDS, cap: float = MAX_FACTOR) -> ClockProbe:
    """Run the probe in a process of the harness's own; ``OSError`` or ``ValueError`` when it
    could not run."""
    arguments, timeout = _limits(cpu_seconds, cap)
    try:
        done = subprocess.run(
            [sys.executable, "-c", PROBE, *arguments.split()],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise OSError(f"the probe did not end in {timeout:g} s") from exc
    if done.returncode != 0:
        raise OSError(f"the probe exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return _parsed(done.stdout)


def bounded(measured: float, cap: float = MAX_FACTOR) -> tuple[float, bool]:
    """(the factor, whether the cap bounded it): never below 1, never above ``cap``."""
    return round(min(max(measured, 1.0), cap), 3), measured > cap


def measure(
    case_seconds: float,
    budget_scale: float = 1.0,
    probe: Callable[[], ClockProbe] | None = None,
    method: Literal["box", "host"] = "host",
) -> AgentClock:
    """The agent's clock for a case whose budget is ``case_seconds``, measured now by ``probe``
    (``method`` says where it runs; default: ``probe_cpu_share`` on the host). A probe that
    cannot run leaves the factor at 1 and the record says why."""
    try:
        found = probe() if probe is not None else probe_cpu_share()
    except (OSError, ValueError) as exc:
        return AgentClock(
            case_seconds=case_seconds,
            budget_scale=budget_scale,
            factor=1.0,
            method="none",
            seconds=case_seconds * budget_scale,
            note=f"the slowdown could not be measured ({exc}): the budget is not stretched",
        )
    measured = found.slowdown
    factor, capped = bounded(measured)
    return AgentClock(
        case_seconds=case_seconds,
        budget_scale=budget_scale,
        factor=factor,
        measured=round(measured, 3),
        capped=capped,
        method=method,
        probe=found,
        seconds=round(case_seconds * budget_scale * factor, 3),
        note=f"capped at {MAX_FACTOR:g}" if capped else "",
    )
