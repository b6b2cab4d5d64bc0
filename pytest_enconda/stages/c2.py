"""C2: the framework sees a GPU in the agent's interpreter."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Stage, StageContext

if TYPE_CHECKING:
    from ..probing.pyramid import StageResult


def run(ctx: StageContext) -> StageResult:
    from ..probing.pyramid import StageResult

    research = ctx.case.spec.research
    gpu_stages = research is None or research.supports_single_gpu or research.supports_multi_gpu
    if research is not None and not gpu_stages:
        reason = research.skip_reasons.get("C2") or "declared unsupported"
        return StageResult(stage="C2", outcome="skipped", message=f"no GPU stage: {reason}")
    if ctx.environment.gpu_count < 1:
        return StageResult(
            stage="C2", outcome="skipped", message="no GPU on this host: C2 needs one"
        )
    facts = ctx.facts()
    framework = (facts or {}).get("framework") or {}
    numbers = {
        "framework": framework.get("name"),
        "version": framework.get("version"),
        "cuda_version": framework.get("cuda_version"),
        "cuda_available": framework.get("cuda_available"),
        "device_count": framework.get("device_count"),
    }
    if facts is None:
        return StageResult(
            stage="C2", outcome="failed", message="the reported interpreter does not run"
        )
    if framework.get("cuda_available") and (framework.get("device_count") or 0) >= 1:
        message = (
            f"{framework.get('name')} {framework.get('version')} sees "
            f"{framework.get('device_count')} GPU(s) (CUDA {framework.get('cuda_version')})"
        )
        return StageResult(stage="C2", outcome="passed", message=message, numbers=numbers)
    why = framework.get("error") or "no GPU visible to the framework"
    return StageResult(stage="C2", outcome="failed", message=str(why)[:300], numbers=numbers)


STAGE = Stage(
    name="C2",
    title="C2 CUDA",
    run=run,
    probe="test_c2_gpu_visible",
    description="The framework sees a GPU in the agent's interpreter.",
    gpus=1,
    own_gpu_skip=True,
)
