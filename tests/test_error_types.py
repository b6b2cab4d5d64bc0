"""The one table of error types: codes, names and the dataset's spellings agree."""

from __future__ import annotations

from pytest_enconda.agents.prompts import ERROR_TYPES as PROMPT_TYPES
from pytest_enconda.error_types import ERROR_TYPES, TABLE, code_of_dataset_name


def test_codes_are_the_papers_six() -> None:
    assert ERROR_TYPES == ("E1", "E2", "E4", "E6", "E7", "E8")
    assert [row.name for row in TABLE][:2] == ["dependency installation", "command usage or syntax"]


def test_dataset_spellings_map_to_codes_ignoring_case_and_spacing() -> None:
    assert code_of_dataset_name("Dependency  Installation Error") == "E1"
    assert code_of_dataset_name("other miscellaneous errors") == "E8"
    assert code_of_dataset_name("other miscellaneous error") == "E8"
    assert code_of_dataset_name("cosmic rays") is None


def test_the_prompt_lists_every_type_from_the_table() -> None:
    lines = PROMPT_TYPES.splitlines()
    assert [line.split()[1] for line in lines] == list(ERROR_TYPES)
    assert lines[3] == (
        "- E6 logical order: steps are in an order that cannot work (e.g. use before install)."
    )
