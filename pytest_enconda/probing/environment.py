"""The environment handle probes run commands on: the agent's final state, never its live one.

One class, ``BoxEnvironment``, over any backend (``pytest_enconda.backends``): the agent's final
state is an image of that backend; every ``run`` starts a fresh box of it (no network), copies
the probe scripts in only then, at a path made up for that run, and removes the box afterwards.
One probe cannot change what the next one sees. With Docker the image is a snapshot; with the
host backend (``--python``/``--repo``, clusters without Docker) it is the existing environment.

Commands run from the repository root with the reported interpreter's folder first on ``PATH``,
so ``python``, ``pip`` and ``torchrun`` are the agent's. ``gpus`` is ``"none"`` (hidden:
``CUDA_VISIBLE_DEVICES`` empty), a GPU index, or ``"all"``.
"""

from __future__ import annotations

import shutil
import time
import uuid
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

from ..backends.base import Backend, Gpus, host_gpu_count, started
from ..errors import HarnessError
from ..sandbox.containers import BindMount
from ..textio import parse_json

if TYPE_CHECKING:
    from ..sandbox.containers import Sandbox
    from .imports import ImportsResult

__all__ = [
    "BoxEnvironment",
    "DockerEnvironment",
    "Environment",
    "Gpus",
    "HostEnvironment",
    "ProbeRun",
    "ProbeScriptError",
    "gpu_skip_reason",
    "host_gpu_count",
    "run_probe_script",
]
OUTPUT_TAIL = 8000


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
    box_backend: Backend
    python: str
    repo_dir: str
    gpu_count: int

    def check_imports(self, timeout: float) -> ImportsResult: ...

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
        parsed = parse_json(document)
    except ValueError:  # also nested too deeply, or a number past the digit limit
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


class BoxEnvironment:
    """Fresh boxes of the agent's final state, from any backend.

    Every ``run`` starts a box of ``image`` (no network), copies the probe scripts in only then,
    at a path made up for that run, and removes the box afterwards: one probe cannot change what
    the next one sees. On the host backend the box is the existing environment itself.
    """

    def __init__(
        self,
        backend: Backend,
        image: str,
        case_id: str,
        *,
        python: str,
        repo_dir: str = "/data/project",
        gpu_count: int = 0,
        log_dir: Path | None = None,
    ) -> None:
        self.box_backend = backend
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
        # Hidden GPUs are hidden from CUDA too; visible ones are the box's to decide.
        variables = {"CUDA_VISIBLE_DEVICES": ""} if gpus == "none" else {}
        variables.update(env or {})
        if gpus != "none":
            variables.pop("CUDA_VISIBLE_DEVICES", None)
        prefix = f'export PATH={_shell_quote(bindir)}:"$PATH"; ' if bindir else ""
        log = None
        if self.log_dir is not None:
            log = self.log_dir / f"probe-{time.strftime('%H%M%S')}-{uuid.uuid4().hex[:6]}.log"
        # A GPU index asks for one GPU: the first the box is given.
        device: Gpus = "none" if gpus == "none" else ("all" if gpus == "all" else 1)
        with started(
            self.box_backend,
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

    def check_imports(self, timeout: float) -> ImportsResult:
        """C0: the repository's imports checked by pyright against the interpreter.

        The scan and pyright run where the environment is. A box of this host's own (the host
        backend) is checked by pyright here, directly; any other box gets the host's pyright
        lent read-only through mounts, and its image's own ``python3`` scans, so a broken agent
        interpreter cannot hide imports.
        """
        from . import imports
        from .scripts import IMPORTS_SCAN, probe_script

        if self.box_backend.local_tools:
            return imports.check_imports_host(Path(self.repo_dir), self.python, timeout=timeout)
        document = run_probe_script(
            self, probe_script(IMPORTS_SCAN), self.repo_dir, python="python3"
        )
        scan = imports.parse_scan(document)
        invocation = imports.container_pyright(
            self.python, self.repo_dir, scan.paths, timeout=timeout
        )
        try:
            run = self.run(invocation.command, timeout=timeout + 30, mounts=invocation.mounts)
        finally:
            shutil.rmtree(invocation.config_dir, ignore_errors=True)
        report = imports.parse_pyright_output(run.output, run.exit_code)
        return imports.imports_result(scan, report, python=self.python, repo=self.repo_dir)


def DockerEnvironment(
    sandbox: Sandbox,
    image: str,
    case_id: str,
    *,
    python: str,
    repo_dir: str = "/data/project",
    gpu_count: int = 0,
    log_dir: Path | None = None,
) -> BoxEnvironment:
    """Fresh containers of the agent's final-state image."""
    from ..backends.docker import DockerBackend

    return BoxEnvironment(
        DockerBackend(sandbox=sandbox),
        image,
        case_id,
        python=python,
        repo_dir=repo_dir,
        gpu_count=gpu_count,
        log_dir=log_dir,
    )


def gpu_skip_reason(given: int | None) -> str | None:
    """Why a ``gpu``-marked test cannot run here, or None. ``given``: GPUs a benchmark run hands
    its containers (``--gpus``); None outside a benchmark run, where the host's count decides."""
    visible = host_gpu_count()
    if visible == 0:
        return "no GPU on this host (nvidia-smi lists none): the gpu marker needs one"
    if given == 0:
        return f"this host has {visible} GPU(s) but --gpus none gives them to no container"
    return None


def HostEnvironment(
    python: Path, repo_dir: Path, *, gpu_count: int | None = None
) -> BoxEnvironment:
    """An environment that already exists here: an interpreter and a repository folder."""
    from ..backends.host import EXISTING, HostBackend

    backend = HostBackend(python, repo_dir, gpus=gpu_count)
    return BoxEnvironment(
        backend,
        EXISTING,
        "existing",
        python=str(python),
        repo_dir=str(repo_dir),
        gpu_count=backend.gpu_count(),
    )
