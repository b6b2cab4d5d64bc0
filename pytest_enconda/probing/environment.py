"""The environment handle probes run commands on: the agent's final state, never its live one.

Two backends with one interface:

- ``DockerEnvironment``: the agent's final state is a snapshot image; every ``run`` starts a fresh
  container of it (no network), copies the probe scripts in only then, at a path made up for that
  run, and removes the container afterwards. One probe cannot change what the next one sees.
- ``HostEnvironment``: an environment that already exists on this machine (a Python interpreter
  and a repository folder, ``--python``/``--repo``), for clusters without Docker.

Commands run from the repository root with the reported interpreter's folder first on ``PATH``,
so ``python``, ``pip`` and ``torchrun`` are the agent's. ``gpus`` is ``"none"`` (hidden:
``CUDA_VISIBLE_DEVICES`` empty), a GPU index, or ``"all"``.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, Field

from ..errors import HarnessError
from ..sandbox.containers import BindMount

if TYPE_CHECKING:
    from ..sandbox.containers import Sandbox

Gpus = Literal["none", "all"] | int
OUTPUT_TAIL = 8000
_HOSTS_FIX = (
    'grep -qw "$(hostname)" /etc/hosts 2>/dev/null || '
    'echo "127.0.0.1 $(hostname)" >> /etc/hosts 2>/dev/null; '
)


class ProbeRun(BaseModel):
    """One command a probe ran, as the report shows it."""

    command: str
    exit_code: int | None = Field(description="None when it timed out")
    output: str = Field(description="stdout and stderr; the tail when long")
    duration: float
    timed_out: bool = False
    gpus: str = "none"

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def tail(self, limit: int = 2000) -> str:
        return self.output if len(self.output) <= limit else "…" + self.output[-limit:]


class ProbeScriptError(HarnessError):
    """A probe script did not print its JSON document (the harness's failure, not the agent's)."""


class Environment(Protocol):
    backend: str
    python: str
    repo_dir: str
    gpu_count: int

    def run(
        self,
        command: str,
        *,
        gpus: Gpus = "none",
        timeout: float = 600,
        env: dict[str, str] | None = None,
        scripts: list[Path] | None = None,
        mounts: list[BindMount] | None = None,
    ) -> ProbeRun: ...


def _visible(gpus: Gpus) -> str:
    if gpus == "none":
        return ""
    return "" if gpus == "all" else str(gpus)


def _tail(text: str) -> str:
    return text if len(text) <= OUTPUT_TAIL else "…" + text[-OUTPUT_TAIL:]


def run_probe_script(
    environment: Environment,
    script: Path,
    *args: str,
    python: str | None = None,
    gpus: Gpus = "none",
    timeout: float = 300,
) -> dict[str, Any]:
    """Run a standard-library probe script and parse the one JSON document it prints.

    ``python`` defaults to the reported interpreter; scanners that must not depend on the
    environment under test pass ``python3`` (the image's own).
    """
    interpreter = python or environment.python
    quoted = " ".join(_shell_quote(arg) for arg in args)
    command = f"{_shell_quote(interpreter)} {{probe:{script.name}}} {quoted}".rstrip()
    result = environment.run(command, gpus=gpus, timeout=timeout, scripts=[script])
    text = result.output.strip()
    start = text.rfind("\n{")
    document = text[start + 1 :] if start >= 0 else text
    try:
        parsed = json.loads(document)
    except json.JSONDecodeError:
        raise ProbeScriptError(
            f"probe {script.name} printed no JSON document (exit {result.exit_code}): "
            f"{result.tail(600)}"
        ) from None
    if not isinstance(parsed, dict):
        raise ProbeScriptError(f"probe {script.name} printed {type(parsed).__name__}, not a dict")
    return parsed


def _shell_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


class DockerEnvironment:
    """Fresh containers of the agent's final-state image."""

    backend = "docker"

    def __init__(
        self,
        sandbox: Sandbox,
        image: str,
        case_id: str,
        *,
        python: str,
        repo_dir: str = "/data/project",
        gpu_count: int = 0,
        log_dir: Path | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.image = image
        self.case_id = case_id
        self.python = python
        self.repo_dir = repo_dir
        self.gpu_count = gpu_count
        self.log_dir = log_dir

    def run(
        self,
        command: str,
        *,
        gpus: Gpus = "none",
        timeout: float = 600,
        env: dict[str, str] | None = None,
        scripts: list[Path] | None = None,
        mounts: list[BindMount] | None = None,
    ) -> ProbeRun:
        # A path the agent never saw, made up for this run only.
        probe_dir = PurePosixPath(f"/tmp/enconda-probe-{uuid.uuid4().hex[:12]}")
        for script in scripts or []:
            command = command.replace(f"{{probe:{script.name}}}", str(probe_dir / script.name))
        bindir = str(PurePosixPath(self.python).parent) if "/" in self.python else ""
        variables = {"CUDA_VISIBLE_DEVICES": _visible(gpus), **(env or {})}
        if gpus != "none":
            variables.pop("CUDA_VISIBLE_DEVICES")  # the device request decides what is visible
        prefix = f'export PATH={_shell_quote(bindir)}:"$PATH"; ' if bindir else ""
        # Probe containers have no network, and then not even their own hostname resolves:
        # torchrun --standalone would retry that lookup until its budget ran out.
        prefix = _HOSTS_FIX + prefix
        log = None
        if self.log_dir is not None:
            log = self.log_dir / f"probe-{time.strftime('%H%M%S')}-{uuid.uuid4().hex[:6]}.log"
        device: Gpus = "none" if gpus == "none" else ("all" if gpus == "all" else 1)
        with self.sandbox.container(
            self.image,
            case_id=self.case_id,
            role="probe",
            network=False,
            gpus=device,
            mounts=list(mounts or []),
        ) as box:
            for script in scripts or []:
                box.copy_in(script.read_bytes(), str(probe_dir / script.name))
            result = box.exec(
                prefix + command,
                timeout=timeout,
                workdir=self.repo_dir,
                env=variables,
                log_path=log,
            )
        return ProbeRun(
            command=command,
            exit_code=result.exit_code,
            output=_tail(result.output),
            duration=result.duration,
            timed_out=result.timed_out,
            gpus=str(gpus),
        )


# Asked per gpu-marked item and per probe environment; the host's GPUs do not change mid-run.
@functools.cache
def host_gpu_count() -> int:
    """NVIDIA GPUs this host shows (``nvidia-smi -L``); 0 without the tool."""
    if shutil.which("nvidia-smi") is None:
        return 0
    try:
        out = subprocess.run(
            ["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))


def gpu_skip_reason(given: int | None) -> str | None:
    """Why a ``gpu``-marked test cannot run here, or None. ``given``: GPUs a benchmark run hands
    its containers (``--gpus``); None outside a benchmark run, where the host's count decides."""
    visible = host_gpu_count()
    if visible == 0:
        return "no GPU on this host (nvidia-smi lists none): the gpu marker needs one"
    if given == 0:
        return f"this host has {visible} GPU(s) but --gpus none gives them to no container"
    return None


class HostEnvironment:
    """An environment that already exists here: an interpreter and a repository folder."""

    backend = "host"

    def __init__(self, python: Path, repo_dir: Path, *, gpu_count: int | None = None) -> None:
        self.python = str(python)
        self.repo_dir = str(repo_dir)
        self.gpu_count = host_gpu_count() if gpu_count is None else gpu_count

    def run(
        self,
        command: str,
        *,
        gpus: Gpus = "none",
        timeout: float = 600,
        env: dict[str, str] | None = None,
        scripts: list[Path] | None = None,
        mounts: list[BindMount] | None = None,
    ) -> ProbeRun:
        if mounts:
            raise HarnessError("the host backend cannot mount folders: run the tool directly")
        with tempfile.TemporaryDirectory(prefix="enconda-probe-") as tmp:
            for script in scripts or []:
                target = Path(tmp) / script.name
                shutil.copyfile(script, target)
                command = command.replace(f"{{probe:{script.name}}}", str(target))
            variables = {**os.environ, **(env or {})}
            bindir = str(Path(self.python).parent)
            variables["PATH"] = bindir + os.pathsep + variables.get("PATH", "")
            if gpus == "none":
                variables["CUDA_VISIBLE_DEVICES"] = ""
            elif gpus != "all":
                variables["CUDA_VISIBLE_DEVICES"] = str(gpus)
            started = time.monotonic()
            # Its own session, so a timeout kills every process it started.
            process = subprocess.Popen(
                ["bash", "-c", command],
                cwd=self.repo_dir,
                env=variables,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                output, _ = process.communicate(timeout=timeout)
                code: int | None = process.returncode
                timed_out = False
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                output, _ = process.communicate()
                code, timed_out = None, True
        return ProbeRun(
            command=command,
            exit_code=code,
            output=_tail(output.decode("utf-8", errors="replace")),
            duration=time.monotonic() - started,
            timed_out=timed_out,
            gpus=str(gpus),
        )
