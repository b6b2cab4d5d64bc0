"""The agent clock's slowdown factor (``agents.clock``) on this machine as it is, then under load
this script makes, beside how much slower an agent-like command actually got.

    python -m pytest_enconda.bench agent-clock [--samples 5] [--burners N] [--boxes K]
                                               [--image IMAGE] [--json PATH]

Each phase takes ``--samples`` probes as the harness takes them (in a box of ``--image``: an
``enconda/base`` image unless given), the same probe in a process on the host for contrast, and
times an agent-like command (byte-compiling part of the standard library afresh: reading,
compiling and writing files, as an install does) with ``docker exec`` in that box. The load
phase adds ``--burners`` CPU-bound processes on the host (default: 2 per CPU) and ``--boxes``
containers of the image each running a CPU-bound loop (default 2), as other cases' setups would.
Prints, per phase, the load average, each factor's median and range, the command's median time
and its own wall over CPU time (how much slower than idle a CPU-bound command ran: what the
factor estimates); then the command's slowdown under load next to how far each factor moved.
Figures only: nothing is asserted. Needs Docker and an image with ``python3``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..agents.clock import probe_cpu_share, probe_in_box
from ..sandbox.exec_result import ExecResult

# An install's kind of work, fixed in size: about a second on an idle machine.
WORKLOAD = (
    "import compileall, os, sys, tempfile;"
    "os.environ['PYTHONPYCACHEPREFIX'] = tempfile.mkdtemp();"
    "sys.pycache_prefix = os.environ['PYTHONPYCACHEPREFIX'];"
    "root = os.path.dirname(os.__file__);"
    "[compileall.compile_dir(os.path.join(root, p), quiet=1, force=True) "
    "for p in ('email', 'json', 'http', 'xml', 'logging', 'unittest')]"
)
BURN = "while True: pass"


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _docker(*args: str, check: bool = True) -> str:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, check=check)
    return done.stdout.strip()


def _default_image() -> str | None:
    try:
        out = _docker("images", "--format", "{{.Repository}}:{{.Tag}}", "enconda/base")
    except (OSError, subprocess.CalledProcessError):
        return None
    names = [name for name in out.splitlines() if name and "<none>" not in name]
    return names[0] if names else None


class _ExecBox:
    """A running container, as much of a ``Box`` as the probe uses (``exec``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def exec(self, command: str, *, timeout: float, workdir: str = "/") -> ExecResult:
        started = time.perf_counter()
        done = subprocess.run(
            ["docker", "exec", "-w", workdir, self.name, "sh", "-c", command],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        return ExecResult(
            exit_code=done.returncode,
            output=done.stdout + done.stderr,
            duration=time.perf_counter() - started,
            timed_out=False,
            truncated=False,
        )


@contextlib.contextmanager
def _box(image: str, name: str, command: str = "sleep 3600") -> Iterator[str]:
    """A container of ``image``, removed afterwards."""
    _docker("run", "-d", "--rm", "--name", name, "--entrypoint", "sh", image, "-c", command)
    try:
        yield name
    finally:
        _docker("rm", "-f", name, check=False)


# Runs WORKLOAD as a child and prints its wall and CPU seconds (user + system).
TIMED = (
    "import resource, subprocess, sys, time;"
    "t = time.perf_counter(); subprocess.run([sys.executable, '-c', sys.argv[1]], check=True);"
    "w = time.perf_counter() - t; r = resource.getrusage(resource.RUSAGE_CHILDREN);"
    "print(w, r.ru_utime + r.ru_stime)"
)


def _timed_command(box: str) -> tuple[float, float]:
    """The agent-like command's wall and CPU seconds in ``box``."""
    done = subprocess.run(
        ["docker", "exec", box, "python3", "-c", TIMED, WORKLOAD],
        capture_output=True,
        text=True,
        check=True,
    )
    wall, cpu = (float(value) for value in done.stdout.split())
    return wall, cpu


def _summary(values: list[float], name: str) -> dict[str, float]:
    return {
        f"{name}_median": statistics.median(values),
        f"{name}_min": min(values),
        f"{name}_max": max(values),
    }


def _phase(box: str, samples: int) -> dict[str, Any]:
    load_before = _load()
    in_box, on_host, commands, ratios = [], [], [], []
    for _ in range(samples):
        in_box.append(probe_in_box(_ExecBox(box)).slowdown)  # type: ignore[arg-type]
        on_host.append(probe_cpu_share().slowdown)
        wall, cpu = _timed_command(box)
        commands.append(wall)
        ratios.append(wall / cpu if cpu > 0 else float("inf"))
    return {
        "load_before": load_before,
        "load_after": _load(),
        **_summary(in_box, "box_factor"),
        **_summary(on_host, "host_factor"),
        "command_median_s": statistics.median(commands),
        # The command's own wall over CPU time: how much slower than on an idle machine it ran
        # (it is CPU-bound there), the figure the factor estimates.
        **_summary(ratios, "command_ratio"),
    }


@contextlib.contextmanager
def _made_load(burners: int, boxes: int, image: str) -> Iterator[None]:
    procs = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(burners)]
    with contextlib.ExitStack() as stack:
        try:
            for index in range(boxes):
                name = f"enconda-bench-clock-burn-{os.getpid()}-{index}"
                stack.enter_context(_box(image, name, f"python3 -c '{BURN}'"))
            time.sleep(2.0)  # the load is running before the first probe
            yield
        finally:
            for proc in procs:
                proc.kill()
            for proc in procs:
                proc.wait()


def _report(figures: dict[str, Any], burners: int, boxes: int) -> None:
    for name in ("as_is", "loaded"):
        phase = figures[name]
        print(
            f"{name:7s} load {phase['load_before']} -> {phase['load_after']}: factor in a box "
            f"median {phase['box_factor_median']:.2f} (min {phase['box_factor_min']:.2f}, max "
            f"{phase['box_factor_max']:.2f}); on the host median "
            f"{phase['host_factor_median']:.2f}; command median {phase['command_median_s']:.2f} s, "
            f"its wall/CPU median {phase['command_ratio_median']:.2f} (min "
            f"{phase['command_ratio_min']:.2f}, max {phase['command_ratio_max']:.2f})"
        )
    idle, loaded = figures["as_is"], figures["loaded"]
    figures["command_slowdown"] = loaded["command_median_s"] / idle["command_median_s"]
    for where in ("box", "host"):
        key = f"{where}_factor_median"
        figures[f"{where}_factor_ratio"] = max(loaded[key], 1.0) / max(idle[key], 1.0)
    print(
        f"under the made load (+{burners} burners, +{boxes} boxes): the command took "
        f"{figures['command_slowdown']:.2f} x as long; the agent's clock (factor in a box, each "
        f"phase floored at 1) moved {figures['box_factor_ratio']:.2f} x; a probe on the host "
        f"would have moved {figures['host_factor_ratio']:.2f} x"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_enconda.bench agent-clock")
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--burners", type=int, default=2 * len(os.sched_getaffinity(0)))
    parser.add_argument("--boxes", type=int, default=2)
    parser.add_argument("--image", default=None, help="default: an enconda/base image")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    image = args.image or _default_image()
    if image is None:
        print("no image: give --image (one with python3), or build an enconda base image first")
        return 2
    print(f"cpus: {len(os.sched_getaffinity(0))}; image {image}")
    figures: dict[str, Any] = {"image": image, "burners": args.burners, "boxes": args.boxes}
    with _box(image, f"enconda-bench-clock-{os.getpid()}") as box:
        _timed_command(box)  # warm: the first exec pays for the filesystem cache
        figures["as_is"] = _phase(box, args.samples)
        with _made_load(args.burners, args.boxes, image):
            figures["loaded"] = _phase(box, args.samples)
    _report(figures, args.burners, args.boxes)
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0
