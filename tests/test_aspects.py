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
