"""The aspect names have one source: every module that needs them reads ``aspects``."""

from __future__ import annotations

from pytest_enconda import aspects, items, session
from pytest_enconda.grading import diagnosis


def test_modules_share_the_one_list() -> None:
    assert items.ASPECTS is aspects.ASPECTS
    assert session.DIAGNOSIS_ASPECTS is aspects.DIAGNOSIS_ASPECTS
    assert diagnosis.ITEMS is aspects.DIAGNOSIS_ASPECTS


def test_each_suite_lists_its_items() -> None:
    assert aspects.ASPECTS["diagnosis"] == ("execution", "error_types", "descriptions", "fixes")
    assert aspects.ASPECTS["research"] == ("C0", "C1", "C2", "C3", "C4", "C5")
    assert aspects.GPU_ASPECTS < aspects.ALL_ASPECTS
