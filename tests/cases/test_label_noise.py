"""Type-label disagreements (issue 47 item 5): one kind of error under several types, counted
once per repository and description, on a made-up dataset, through the audit command, and on
the shared dev split (skipped when ../shared/data is absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cases_audit import INSTALL, Dataset, error

from pytest_enconda.cases.enconda_import import load_dataset
from pytest_enconda.cli import main
from pytest_enconda.report.audit_files import NOISE_JSON
from pytest_enconda.report.label_noise import label_noise

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "enconda-dev"
TYPO = "The install command has a typo in the package name `widget-cor`"
MISSING = "The config file path `conf/widget.yml` does not exist in the repository"


def _dataset(tmp_path: Path) -> Dataset:
    data = Dataset(tmp_path / "data")
    data.add("1", INSTALL, error("E1", TYPO, "pip install widget-core"))
    # The same error again (an _only_E1 copy): counted once.
    data.add("1_only_E1", INSTALL, error("E1", TYPO, "pip install widget-core"))
    data.add("2", INSTALL, error("E2", "A misspelled package name: `widgit-core` is not on PyPI",
                                 "pip install widget-core"))  # fmt: skip
    data.add("3", INSTALL, error("E4", MISSING, "use conf/widget.yaml"))
    data.add("4", INSTALL, error("E7", "The README claims Python 3.6 is supported", "3.9+"))
    return data


def test_one_kind_under_two_types_is_a_disagreement(tmp_path: Path) -> None:
    load = load_dataset(_dataset(tmp_path).root)
    noise = label_noise(load.cases)
    rules = {rule.rule: rule for rule in noise.rules}
    misspelled = rules["misspelled_package"]
    assert misspelled.by_type == {"E1": 1, "E2": 1} and misspelled.disagrees
    assert misspelled.repositories_by_type == {"E1": 1, "E2": 1}
    assert misspelled.outside_majority == 1
    assert rules["missing_file"].by_type == {"E4": 1} and not rules["missing_file"].disagrees
    assert rules["python_version"].by_type == {"E7": 1}
    assert noise.distinct_errors == 4  # the _only_E1 copy is the same error
    assert any("widget-cor" in text for text in misspelled.examples["E1"])


def test_the_audit_command_writes_and_prints_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _dataset(tmp_path)
    out = tmp_path / "audit"
    assert main(["audit", str(data.root), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "type labels disagree on a misspelled or non-existent package name: E1 1, E2 1" in (
        printed
    )
    saved = json.loads((out / NOISE_JSON).read_text())
    assert saved["rules"][0]["by_type"] == {"E1": 1, "E2": 1}
    assert "## Type-label disagreements" in (out / "audit.md").read_text()


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data/enconda-dev is not here")
def test_the_dev_split_files_misspelled_packages_under_e1_and_e2() -> None:
    noise = label_noise(load_dataset(SHARED).cases)
    misspelled = next(rule for rule in noise.rules if rule.rule == "misspelled_package")
    # The observation: the same kind of error is E2 in some repositories, E1 in others.
    assert misspelled.by_type.get("E1", 0) >= 3 and misspelled.by_type.get("E2", 0) >= 3
