"""The agent's wall clock on this machine: the case's ``agent_seconds`` stretched by how slow the
machine is when the agent starts.

A case's agent budget was written for an idle machine. On a loaded one the agent's commands
(pip, compilers, tests) take longer, and a fixed budget would cut an agent for the machine's
load: the same scripted commands took 1.3 to 3.3 times longer at ``-n 8`` than at ``-n 2`` on two
cores. So the budget an agent gets is ``agent_seconds x --budget-scale x factor``, where
``factor`` is the slowdown measured just before the agent starts (``measure``), never below 1
and at most ``MAX_FACTOR``. Steps and tokens are not scaled: load does not change how many an
agent needs.

**The measurement.** A CPU-bound loop runs in a fresh Python process for ``PROBE_CPU_SECONDS`` of
its own CPU time, and the factor is its wall time over that CPU time: the share of a CPU a
runnable process gets right now. On an idle machine that is 1; with twice as many runnable
processes as cores it is about 2. It needs no reference time recorded with the case (a shipped
case records none), it costs half a second per case on an idle machine, and it runs per case, so
a long run follows the load as it changes. It measures CPU contention: work that waits on the
network or on a disk slows less than the factor says, so such an agent gets more time than the
load took from it, never less. The golden setup's time against a recorded reference would need
a golden setup run before every agent (minutes for a research case) and a reference time that
most cases lack; the execution replay's calibration on the golden setup
(``probing.execution``) stays as it is.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Literal

from pydantic import BaseModel, Field

# A stretched budget bounds a hung agent too: ten times the case's is as far as it goes, and
# ``items.case_timeout`` sits above that.
MAX_FACTOR = 10.0
# Long enough that one scheduler slice does not decide the figure, short enough to run per case.
PROBE_CPU_SECONDS = 0.5

# Run with ``python -c``: its own process, so no thread of the harness's holds the GIL while it
# measures. Prints its wall and CPU seconds; it stops at ``limit`` wall seconds, where the
# factor would be capped anyway.
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
    method: Literal["cpu-share", "none"] = "cpu-share"
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


def probe_cpu_share(cpu_seconds: float = PROBE_CPU_SECONDS, cap: float = MAX_FACTOR) -> ClockProbe:
    """Run the probe once; ``OSError`` or ``ValueError`` when it could not run."""
    limit = cpu_seconds * cap
    try:
        done = subprocess.run(
            [sys.executable, "-c", PROBE, str(cpu_seconds), str(limit)],
            capture_output=True,
            text=True,
            timeout=limit + 60,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise OSError(f"the probe did not end in {limit + 60:g} s") from exc
    if done.returncode != 0:
        raise OSError(f"the probe exited {done.returncode}: {done.stderr.strip()[-300:]}")
    wall, cpu = (float(value) for value in done.stdout.split())
    return ClockProbe(wall_seconds=round(wall, 4), cpu_seconds=round(cpu, 4))


def bounded(measured: float, cap: float = MAX_FACTOR) -> tuple[float, bool]:
    """(the factor, whether the cap bounded it): never below 1, never above ``cap``."""
    return round(min(max(measured, 1.0), cap), 3), measured > cap


def measure(case_seconds: float, budget_scale: float = 1.0) -> AgentClock:
    """The agent's clock for a case whose budget is ``case_seconds``, measured now. A probe that
    cannot run leaves the factor at 1 and the record says why."""
    try:
        probe = probe_cpu_share()
    except (OSError, ValueError) as exc:
        return AgentClock(
            case_seconds=case_seconds,
            budget_scale=budget_scale,
            factor=1.0,
            method="none",
            seconds=case_seconds * budget_scale,
            note=f"the slowdown could not be measured ({exc}): the budget is not stretched",
        )
    measured = probe.slowdown
    factor, capped = bounded(measured)
    return AgentClock(
        case_seconds=case_seconds,
        budget_scale=budget_scale,
        factor=factor,
        measured=round(measured, 3),
        capped=capped,
        probe=probe,
        seconds=round(case_seconds * budget_scale * factor, 3),
        note=f"capped at {MAX_FACTOR:g}" if capped else "",
    )
