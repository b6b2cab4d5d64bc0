"""A case's cluster resources come from the records (issue 44): its GPUs from the stages that
apply to it (``Stage.gpus``, ``Stage.applies_to``), its memory from its task kind. No Ray needed:
these are computed on the driver before anything is submitted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_enconda.cases.loader import load_case
from pytest_enconda.cases.models import Case
from pytest_enconda.dispatch.ray import case_resources, gpus_needed
from pytest_enconda.stages import STAGES, Stage


def research_case(root: Path, name: str, research: str) -> Case:
    case_dir = root / name
    (case_dir / "repo").mkdir(parents=True)
    (case_dir / "repo" / "README.md").write_text("# toy\n")
    (case_dir / "setup.sh").write_text("true\n")
    (case_dir / "case.toml").write_text(
        f'id = "{name}"\nsuite = "research"\nreadme = "repo/README.md"\n'
        'golden_setup = "setup.sh"\n[repository]\nkind = "folder"\npath = "repo"\n'
        f"[research]\n{research}\n"
    )
    return load_case(case_dir / "case.toml", [root])


ENTRY = 'entry_point = "python train.py"\n'
DDP = 'ddp_entry_point = "train.py"\n'


@pytest.mark.parametrize(
    ("research", "gpus"),
    [
        (ENTRY + DDP, 2),  # C4 applies: two
        (ENTRY, 1),  # no DDP entry point: C4 does not apply, C2 and C3 need one
        (ENTRY + DDP + "supports_multi_gpu = false", 1),
        (ENTRY + DDP + 'skip_reasons = {C4 = "no NCCL"}', 1),
        # C2 declares no condition of its own: only a skip reason takes it away.
        (ENTRY + DDP + 'skip_reasons = {C2 = "x", C3 = "y", C4 = "z"}', 0),
    ],
)
def test_gpus_come_from_the_stages_that_apply(tmp_path: Path, research: str, gpus: int) -> None:
    case = research_case(tmp_path, "tiny", research)
    assert gpus_needed(case) == gpus
    assert case_resources(case, 8.0)["num_gpus"] == gpus


@pytest.fixture
def four_gpu_stage() -> Iterator[Stage]:
    def never_run(ctx: object) -> object:
        raise AssertionError("not run here")

    stage = Stage(
        name="C8",
        title="C8 four GPUs",
        run=never_run,  # type: ignore[arg-type]
        probe="test_c8_four_gpus",
        gpus=4,
        applies=lambda case: case.spec.research is not None and case.spec.research.supports_cpu,
    )
    STAGES.register(stage)
    try:
        yield stage
    finally:
        STAGES.unregister(stage.name)


def test_a_registered_stage_asks_for_its_gpus(tmp_path: Path, four_gpu_stage: Stage) -> None:
    assert gpus_needed(research_case(tmp_path, "wide", ENTRY)) == 4
    # Its own ``applies`` says no: the built-ins' need is left.
    assert gpus_needed(research_case(tmp_path, "narrow", ENTRY + "supports_cpu = false")) == 1


def test_memory_comes_from_the_task_kind(tmp_path: Path) -> None:
    research = research_case(tmp_path, "tiny", ENTRY)
    assert case_resources(research, 0.0)["memory"] == 4 << 30
    # The same case as another kind (copied, not validated: only its kind is read here).
    aec = research.model_copy(
        update={"spec": research.spec.model_copy(update={"suite": "aec", "research": None})}
    )
    assert case_resources(aec, 0.0) == {"num_cpus": 1.0, "memory": 1 << 30, "num_gpus": 0}
