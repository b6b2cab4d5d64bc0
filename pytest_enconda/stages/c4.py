"""C4: a distributed run of the case's DDP entry point (torchrun)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Stage, StageContext

if TYPE_CHECKING:
    from ..cases.models import Case
    from ..probing.environment import Environment
    from ..probing.pyramid import StageResult


def run(ctx: StageContext) -> StageResult:
    return run_ddp(ctx.environment, ctx.case, ddp_cpu=ctx.ddp_cpu)


def applies(case: Case) -> bool:
    research = case.spec.research
    return research is not None and research.supports_multi_gpu and bool(research.ddp_entry_point)


def run_ddp(environment: Environment, case: Case, *, ddp_cpu: bool) -> StageResult:
    """C4: torchrun (``python -m torch.distributed.run --standalone``) over the visible GPUs
    (NCCL), or 2 CPU processes on gloo."""
    from ..probing.pyramid import StageResult, _declared_skip, _skip, failure_line

    research = case.spec.research
    if research is None:
        return _skip("C4", "not a research case")
    skip = _declared_skip(case, "C4", research.supports_multi_gpu, "multi-GPU")
    if skip is None and not research.ddp_entry_point:
        skip = "the case declares no DDP entry point"
    if skip is not None:
        return _skip("C4", skip)
    assert research.ddp_entry_point is not None
    if environment.gpu_count >= 2:
        nproc, gpus, backend, mode = environment.gpu_count, "all", "nccl", "gpu-nccl"
    elif ddp_cpu:
        nproc, gpus, backend, mode = 2, "none", "gloo", "cpu-gloo"
    else:
        return _skip(
            "C4",
            f"C4 needs 2 or more GPUs (this host has {environment.gpu_count}); "
            "--ddp-cpu runs it as 2 CPU processes on gloo",
        )
    # torchrun's module, not the torchrun first on PATH: a virtual environment made with
    # --system-site-packages has no torchrun of its own, and the base's would run the base
    # interpreter, without the packages installed in the environment under test.
    command = (
        f"python -m torch.distributed.run --standalone --nproc_per_node={nproc} "
        f"{research.ddp_entry_point}"
    )
    run = environment.run(
        command,
        gpus=gpus,  # type: ignore[arg-type]
        timeout=research.c4_seconds,
        env={"ENCONDA_DDP_BACKEND": backend},
    )
    gpus_used = nproc if backend == "nccl" else 0
    numbers = {
        "exit_code": run.exit_code,
        "seconds": round(run.duration, 3),
        "nproc": nproc,
        "mode": mode,
        "backend": backend,
        "gpus_used": gpus_used,
    }
    label = ddp_label(mode, nproc, gpus_used)
    if run.ok:
        return StageResult(
            stage="C4",
            outcome="passed",
            message=f"{label} {command!r} exited 0 in {run.duration:.1f}s",
            numbers=numbers,
            runs=[run.model_dump()],
        )
    why = (
        f"timed out after {research.c4_seconds:.0f}s" if run.timed_out else f"exit {run.exit_code}"
    )
    return StageResult(
        stage="C4",
        outcome="failed",
        # The failing rank's error leads: torchrun's own last words are only "ChildFailedError".
        message=f"{failure_line(run.output)} ({label} {command!r}: {why})",
        numbers=numbers,
        runs=[run.model_dump()],
    )


def ddp_label(mode: str, nproc: int, gpus_used: int) -> str:
    """Where C4 ran, in every message: ``[cpu-gloo: 2 CPU processes on gloo, no GPU]`` is not
    the paper's C4 (``--ddp-cpu``), ``[gpu-nccl: 4 processes on 4 GPUs, nccl]`` is."""
    if mode == "cpu-gloo":
        return f"[cpu-gloo: {nproc} CPU processes on gloo, no GPU]"
    return f"[{mode}: {nproc} processes on {gpus_used} GPUs, nccl]"


STAGE = Stage(
    name="C4",
    title="C4 DDP",
    run=run,
    probe="test_c4_distributed_run",
    description="torchrun over the visible GPUs (or 2 CPU processes on gloo with --ddp-cpu).",
    gpus=2,  # DDP: two processes, one GPU each
    own_gpu_skip=True,
    applies=applies,
    cpu_fallback=True,
    budget_field="c4_seconds",
)
