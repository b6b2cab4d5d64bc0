"""Aspects, stages and task kinds have one source each: the registries every module reads."""

from __future__ import annotations

from pytest_enconda import aspects, items
from pytest_enconda.grading import diagnosis
from pytest_enconda.stages import STAGES


def test_modules_share_the_one_registry() -> None:
    assert items.ASPECTS is aspects.ASPECTS
    assert items.TASK_KINDS is aspects.TASK_KINDS
    assert diagnosis.ITEMS is aspects.DIAGNOSIS_ASPECTS


def test_each_kind_lists_its_items_in_collection_order() -> None:
    kinds = aspects.TASK_KINDS
    assert aspects.aspect_names(kinds.get("diagnosis")) == (
        "execution",
        "error_types",
        "descriptions",
        "fixes",
    )
    assert aspects.aspect_names("research") == ()
    assert aspects.stage_names("research") == ("C0", "C1", "C2", "C3", "C4", "C5")
    assert aspects.DIAGNOSIS_ASPECTS == ("error_types", "descriptions", "fixes")


def test_contract_files_and_gpu_needs() -> None:
    contract = {name: aspects.get_aspect(name).contract_file for name in aspects.ASPECTS.names()}
    assert contract == {
        "execution": "setup.sh",
        "error_types": "diagnosis.json",
        "descriptions": "diagnosis.json",
        "fixes": "diagnosis.json",
        "aec_tests_run": "setup.sh",
        "aec_pass_set": "setup.sh",
        "aec_success": "setup.sh",
    }
    assert [stage.name for stage in STAGES.values() if stage.needs_gpu] == ["C2", "C3", "C4"]
    assert {"execution", "C0", "C5"} <= aspects.all_aspect_names()


def test_stage_budgets_name_fields_of_the_research_spec() -> None:
    from pytest_enconda.cases.models import ResearchSpec

    fields = set(ResearchSpec.model_fields)
    budgets = {stage.name: stage.budget_field for stage in STAGES.values()}
    assert budgets == {
        "C0": "c0_seconds",
        "C1": "c1_seconds",
        "C2": None,
        "C3": "c3_seconds",
        "C4": "c4_seconds",
        "C5": None,
    }
    assert {field for field in budgets.values() if field} <= fields


def test_stages_declare_their_gpus_and_budgets() -> None:
    gpus = {stage.name: stage.gpus for stage in STAGES.values()}
    assert gpus == {"C0": 0, "C1": 0, "C2": 1, "C3": 1, "C4": 2, "C5": 0}
    assert [stage.name for stage in STAGES.values() if stage.has_budget] == ["C0", "C1", "C3", "C4"]
    assert [stage.name for stage in STAGES.values() if stage.cpu_fallback] == ["C4"]


def test_needs_gpu_and_gpus_are_one_fact() -> None:
    from pytest_enconda.stages import Stage

    def run(ctx: object) -> object:
        raise AssertionError("not run here")

    older = Stage("CX", "CX", run, "test_cx", needs_gpu=True)  # type: ignore[arg-type]
    newer = Stage("CY", "CY", run, "test_cy", gpus=2)  # type: ignore[arg-type]
    cpu = Stage("CZ", "CZ", run, "test_cz", budget_seconds=5)  # type: ignore[arg-type]
    assert (older.gpus, older.needs_gpu) == (1, True)
    assert (newer.gpus, newer.needs_gpu) == (2, True)
    assert (cpu.gpus, cpu.needs_gpu, cpu.has_budget) == (0, False, True)


def test_task_kinds_declare_what_their_call_sites_ask() -> None:
    kinds = {kind.name: kind for kind in aspects.TASK_KINDS.values()}
    facts = {
        name: (
            kind.marker,
            kind.writes_self_report,
            kind.asks_test_command,
            kind.readme_has_injected_errors,
            kind.graded_by_probes,
            kind.memory_bytes,
        )
        for name, kind in kinds.items()
    }
    assert facts == {
        "diagnosis": ("diagnosis", False, False, True, False, 1 << 30),
        "research": ("research", True, False, False, True, 4 << 30),
        "aec": ("aec", False, True, False, False, 1 << 30),
    }


def test_a_kind_declares_its_prompt() -> None:
    from pytest_enconda.agents.prompts import instance_prompt, zero_shot_prompt
    from pytest_enconda.kinds import TASK_KINDS, TaskKind, TaskPrompt

    prompt = TaskPrompt(
        "Build `$workdir`",
        "Leave `$output_dir/$setup` and `$output_dir/notes.txt`.",
        zero_shot_answer="A ```bash block, then the notes.",
    )
    TASK_KINDS.register(TaskKind("toy-prompt", outputs=("setup.sh", "notes.txt"), prompt=prompt))
    TASK_KINDS.register(TaskKind("toy-bare", outputs=("setup.sh", "notes.txt")))
    shared = {"case_id": "t", "workdir": "/w", "readme_name": "R.md", "readme_text": "THE-README"}
    try:
        told = instance_prompt(suite="toy-prompt", profile="p", **shared)
        bare = instance_prompt(suite="toy-bare", profile="p", **shared)
        answer = zero_shot_prompt(
            suite="toy-prompt", file_tree="", environment="", profile="", **shared
        )
        bare_answer = zero_shot_prompt(
            suite="toy-bare", file_tree="", environment="", profile="", **shared
        )
    finally:
        TASK_KINDS.unregister("toy-prompt")
        TASK_KINDS.unregister("toy-bare")
    assert (
        "## Build `/w`\n\nLeave `/enconda/output/setup.sh` and `/enconda/output/notes.txt`." in told
    )
    assert "THE-README" not in told  # no ``shows_readme``: the README is not pasted in
    listed = "Write to `/enconda/output/` (create it):\n- `setup.sh`\n- `notes.txt`"
    assert f"## What to leave behind\n\n{listed}" in bare
    assert answer.endswith("## Your answer\n\nA ```bash block, then the notes.\n")
    assert "fenced ```bash block holding the complete setup script" in bare_answer
