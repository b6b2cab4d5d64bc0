"""``python -m pytest_enconda.bench dispatch``: its toy cases load as cases, and bad options are
refused before anything runs (the measurement itself starts Ray: run it by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_enconda.bench.dispatch import main, write_toy_cases
from pytest_enconda.cases.loader import load_case


def test_toy_cases_are_valid_diagnosis_cases(tmp_path: Path) -> None:
    (root,) = write_toy_cases(tmp_path / "cases", 2)
    cases = [load_case(path, [Path(root)]) for path in sorted(Path(root).glob("*/case.toml"))]
    assert [case.id for case in cases] == ["toy0", "toy1"]
    assert {case.spec.suite for case in cases} == {"diagnosis"}
    assert all(case.golden_setup_text == "echo built > built.txt\n" for case in cases)


@pytest.mark.parametrize("bad", [["--runs", "0"], ["--cases", "0"], ["--nodes", "-1"]])
def test_bad_counts_are_refused(bad: list[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main(bad)
    assert raised.value.code == 2
