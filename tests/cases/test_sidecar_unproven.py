"""An old sidecar record whose checkout proof says ``no-packages`` never loads as verified (issue 47
item 3): it is unverified with that reason, its instances' execution is not graded, and the audit
lists them with the reason."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_enconda.agents.readme_commands import extract_commands
from pytest_enconda.cases.audit import GRADING_FLAGS, UNVERIFIED, audit_cases
from pytest_enconda.cases.enconda_import import load_dataset
from pytest_enconda.cases.sidecar import SIDECAR_NAME, read_sidecar
from pytest_enconda.report.audit_files import render_markdown

REPO = Path(__file__).resolve().parents[2]
NO_PACKAGES = "no top-level package or module found in the checkout"


def _record(name: str, revision: str, verdict: str) -> dict[str, object]:
    """A record as verify wrote them before ``no-packages`` was refused: status verified."""
    return {
        "repository": name,
        "revision": revision,
        "status": "verified",
        "test_command": "python -m pytest tests",
        "test_tools": ["pytest<9"],
        "checkout_proof": {"verdict": verdict, "detail": NO_PACKAGES, "modules": []},
        "pass_share": 1.0,
        "pass_set": ["tests.test_bot::test_send"],
    }


def _dataset(root: Path) -> Path:
    revisions = {"o/bot": "a" * 40, "o/lib": "b" * 40}
    (root / "instances").mkdir(parents=True)
    lines = [{"repository": name, "revision": rev} for name, rev in revisions.items()]
    (root / "repo_info.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    error = {
        "error_type": "E1",
        "error_description": "misspelled `requets`",
        "correction_candidates": [],
        "golden_answer": "pip install requests",
    }
    for name in revisions:
        key = name.replace("/", "_")
        folder = root / "instances" / f"error_gen_{key}" / f"{key}_error_readme_1"
        folder.mkdir(parents=True)
        (folder / "README.md").write_text(f"# {name}\n\n```bash\npip install requets\n```\n")
        (folder / "README.json").write_text(json.dumps({"level": "level1", "errors": [error]}))
    sidecar = {
        "format": 1,
        "repositories": {
            "o/bot": _record("o/bot", revisions["o/bot"], "no-packages"),
            "o/lib": _record("o/lib", revisions["o/lib"], "checkout"),
        },
    }
    (root / SIDECAR_NAME).write_text(json.dumps(sidecar))
    return root


def test_a_no_packages_record_reads_as_unverified_with_the_reason(tmp_path: Path) -> None:
    sidecar = read_sidecar(_dataset(tmp_path) / SIDECAR_NAME)
    bot, lib = sidecar.repositories["o/bot"], sidecar.repositories["o/lib"]
    assert not bot.verified
    assert bot.why_unverified == f"checkout proof 'no-packages' proves nothing: {NO_PACKAGES}"
    assert lib.verified and lib.why_unverified == ""
    assert sidecar.counts() == {"repositories": 2, "verified": 1, "unverified": 1}


def test_its_instances_are_not_graded_and_the_audit_says_why(tmp_path: Path) -> None:
    cases = {case.id: case for case in load_dataset(_dataset(tmp_path)).cases}
    bot, lib = cases["o/bot/error_readme_1"], cases["o/lib/error_readme_1"]
    assert bot.reference is not None and not bot.reference.verified
    assert (
        bot.reference.reason == f"o/bot: checkout proof 'no-packages' proves nothing: {NO_PACKAGES}"
    )
    assert lib.reference is not None and lib.reference.verified
    report = audit_cases([bot, lib], extract_commands)
    flagged = {record.case_id: record for record in report.records if UNVERIFIED in record.flags}
    assert list(flagged) == [bot.id]
    assert flagged[bot.id].reference_reason == bot.reference.reason
    # The label is not at fault: the instance stays in the verified subset.
    assert UNVERIFIED not in GRADING_FLAGS and bot.id in report.verified_subset
    assert report.counts[UNVERIFIED] == 1
    text = render_markdown(report)
    assert f"- `{bot.id}`" in text and f"  - {bot.reference.reason}" in text


def test_without_a_sidecar_no_instance_is_flagged(tmp_path: Path) -> None:
    data = _dataset(tmp_path)
    (data / SIDECAR_NAME).unlink()
    report = audit_cases(load_dataset(data).cases, extract_commands)
    assert all(UNVERIFIED not in record.flags for record in report.records)


def test_the_dev_splits_sidecar_verifies_no_no_packages_record() -> None:
    sidecar = read_sidecar(REPO / "benchmark_cases" / "enconda-dev.verification.json")
    unproven = [
        name
        for name, record in sidecar.repositories.items()
        if record.checkout_proof is not None and record.checkout_proof.verdict == "no-packages"
    ]
    assert unproven, "the sidecar no longer holds a no-packages record: the check reads nothing"
    assert not [name for name in unproven if sidecar.repositories[name].verified]
    assert all(
        "no-packages" in sidecar.repositories[n].why_unverified
        for n in unproven
        if sidecar.repositories[n].status == "verified"
    )
