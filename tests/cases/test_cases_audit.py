"""The label audit: each rule on small made-up datasets, the files it writes, the CLI, and the
shared dev split (skipped when ../shared/data is absent)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_enconda.agents.readme_commands import extract_commands
from pytest_enconda.cases.audit import GRADING_FLAGS, AuditReport, audit_cases
from pytest_enconda.cases.enconda_import import load_dataset
from pytest_enconda.cli import main
from pytest_enconda.report.audit_files import (
    AUDIT_DIR,
    SUBSET_TXT,
    find_subset,
    read_subset,
    write_audit,
)

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "enconda-dev"
REVISION = "0123456789abcdef0123456789abcdef01234567"
REPO = "acme/widget"
KEY = "acme_widget"

INSTALL = "# Widget\n\nInstall it:\n\n```bash\npip install widget-core\n```\n"


def error(
    error_type: str, description: str, answer: str, candidates: list[str] | None = None
) -> dict[str, Any]:
    return {
        "error_type": error_type,
        "error_description": description,
        "correction_candidates": candidates or [answer],
        "golden_answer": answer,
    }


class Dataset:
    """An EnConda-Bench folder in tmp_path: one repository, instances added by name."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True)
        line = json.dumps({"repository": REPO, "revision": REVISION})
        (root / "repo_info.jsonl").write_text(line + "\n", encoding="utf-8")
        self.repo_dir = root / "instances" / f"error_gen_{KEY}"
        self.repo_dir.mkdir(parents=True)

    def add(self, name: str, readme: str, *errors: dict[str, Any]) -> str:
        folder = self.repo_dir / f"{KEY}_error_readme_{name}"
        folder.mkdir()
        (folder / "README.md").write_text(readme, encoding="utf-8")
        golden = {"level": f"level{len(errors)}", "errors": list(errors)}
        (folder / "README.json").write_text(json.dumps(golden), encoding="utf-8")
        return f"{REPO}/error_readme_{name}"

    def original(self, text: str) -> None:
        (self.repo_dir / "README.md").write_text(text, encoding="utf-8")

    def audit(self) -> AuditReport:
        load = load_dataset(self.root)
        assert load.problems == []
        return audit_cases(load.cases, extract_commands, dataset=str(self.root))


def flags(report: AuditReport) -> dict[str, list[str]]:
    return {record.case_id: record.flags for record in report.records}


@pytest.fixture
def data(tmp_path: Path) -> Dataset:
    return Dataset(tmp_path / "enconda")


TYPO = error(
    "E1",
    "The command `pip install widget-cor` misspells the package name.",
    "pip install widget-core",
)


# ----------------------------------------------------------------------------- no errors


def test_an_instance_without_golden_errors_is_flagged_and_left_out_of_the_subset(
    data: Dataset,
) -> None:
    empty = data.add("1", INSTALL)
    good = data.add("2", INSTALL.replace("widget-core", "widget-cor"), TYPO)
    report = data.audit()
    assert flags(report)[empty] == ["no_golden_errors"]
    assert flags(report)[good] == []
    assert report.verified_subset == [good]
    assert report.counts["no_golden_errors"] == 1


# ----------------------------------------------------------------------------- duplicates


def test_identical_readmes_with_different_labels_are_flagged_naming_each_other(
    data: Dataset,
) -> None:
    text = INSTALL.replace("widget-core", "widget-cor")
    order = error(
        "E6",
        "The `pip install` step comes before `git clone`.",
        "Move `git clone https://x/widget` first.",
    )
    base = data.add("1", text, TYPO, order)
    # The same text up to layout (CRLF, trailing spaces, a blank line): labelled with one error.
    variant = data.add("1_only_E1", text.replace("\n", "  \r\n") + "\n\n", TYPO)
    other = data.add("2", INSTALL + "\nMore text.\n", order)
    report = data.audit()
    by_id = {record.case_id: record for record in report.records}
    assert "duplicate_readme" in by_id[base].flags
    assert by_id[base].duplicate_of == [variant]
    assert by_id[variant].duplicate_of == [base]
    assert "duplicate_readme" not in by_id[other].flags
    assert base not in report.verified_subset and variant not in report.verified_subset


def test_a_whitespace_change_inside_a_line_is_content_not_layout(data: Dataset) -> None:
    # `-e.` against `-e .` is exactly the kind of error EnConda-Bench injects.
    broken = error("E2", "`pip install -e.` lacks a space before the dot.", "pip install -e .")
    first = data.add("1", "```bash\npip install -e.\n```\n", broken)
    second = data.add("2", "```bash\npip install -e .\n```\n", TYPO)
    report = data.audit()
    assert "duplicate_readme" not in flags(report)[first]
    assert "duplicate_readme" not in flags(report)[second]


def test_identical_readme_and_labels_is_reported_but_stays_in_the_subset(data: Dataset) -> None:
    text = INSTALL.replace("widget-core", "widget-cor")
    one = data.add("merge_k2", text, TYPO)
    two = data.add("merge_k3", text, TYPO)
    report = data.audit()
    record = {r.case_id: r for r in report.records}[one]
    assert record.flags == ["same_readme_same_labels"]
    assert record.same_as == [two]
    assert "same_readme_same_labels" not in GRADING_FLAGS
    assert report.verified_subset == [one, two]


# ----------------------------------------------------------------------------- unchanged


def test_a_readme_equal_to_the_original_with_errors_listed_is_flagged(data: Dataset) -> None:
    data.original(INSTALL)
    unchanged = data.add("1", INSTALL + "\n", TYPO)
    injected = data.add("2", INSTALL.replace("widget-core", "widget-cor"), TYPO)
    report = data.audit()
    assert "readme_unchanged" in flags(report)[unchanged]
    assert "readme_unchanged" not in flags(report)[injected]
    # The injected token is absent from the unchanged README, so that rule fires too.
    assert "error_text_absent" in flags(report)[unchanged]
    assert report.verified_subset == [injected]


# ----------------------------------------------------------------------------- absent text


def test_an_error_whose_quoted_erroneous_command_is_not_in_the_readme_is_flagged(
    data: Dataset,
) -> None:
    present = data.add("1", INSTALL.replace("widget-core", "widget-cor"), TYPO)
    absent = data.add("2", INSTALL, TYPO)  # the README still has the correct command
    report = data.audit()
    assert "error_text_absent" not in flags(report)[present]
    assert "error_text_absent" in flags(report)[absent]
    record = {r.case_id: r for r in report.records}[absent]
    assert record.errors[0].evidence == "absent"
    assert record.errors[0].error_tokens == ["pip install widget-cor"]


def test_a_token_inside_a_longer_word_does_not_count_as_present(data: Dataset) -> None:
    typo = error(
        "E2", "The command has `instal` instead of `install`.", "Change `instal` to `install`."
    )
    case = data.add("1", INSTALL.replace("widget-core", "widget-core extras"), typo)
    report = data.audit()
    assert "error_text_absent" in flags(report)[case]


def test_an_omission_quotes_only_the_fix_and_is_not_flagged(data: Dataset) -> None:
    missing = error(
        "E2",
        "The command `pip install requirements.txt` is missing the `-r` flag.",
        "Add `-r`: `pip install -r requirements.txt`.",
    )
    only_fix = error(
        "E1",
        "The apt-get command is missing 'libxml2-dev', needed to build lxml.",
        "Add 'libxml2-dev' to the apt-get install command.",
    )
    text = "```bash\npip install requirements.txt\napt-get install -y gcc\n```\n"
    case = data.add("1", text, missing, only_fix)
    report = data.audit()
    record = {r.case_id: r for r in report.records}[case]
    assert [e.evidence for e in record.errors] == ["present", "fix_only"]
    assert record.errors[0].error_tokens == ["pip install requirements.txt"]
    assert "-r" not in record.errors[0].error_tokens
    assert record.errors[1].fix_tokens == ["libxml2-dev"]
    assert record.flags == []


def test_a_token_the_description_says_is_missing_is_the_fix_side(data: Dataset) -> None:
    omitted = error(
        "E1",
        "The instructions are missing a required dependency, `widget-extras`, and "
        "`widget-plugins` is missing.",
        "Install everything with one command.",
    )
    invalid = error(
        "E2", "`pip install --develop .` is not a valid pip command.", "pip install -e ."
    )
    case = data.add("1", "```bash\npip install --develop .\n```\n", omitted, invalid)
    record = {r.case_id: r for r in data.audit().records}[case]
    assert record.errors[0].evidence == "fix_only"
    assert record.errors[0].fix_tokens == ["widget-extras", "widget-plugins"]
    # "is not a valid" says nothing is missing: the quoted command is the erroneous one.
    assert record.errors[1].error_tokens == ["pip install --develop"]  # trailing "." dropped
    assert record.errors[1].evidence == "present"
    assert record.flags == []


def test_what_the_golden_answer_says_to_replace_is_the_erroneous_side(data: Dataset) -> None:
    # The description quotes nothing; the golden answer names the wrong package and the fix.
    rename = error(
        "E1",
        "The package name is wrong.",
        "Replace `widget-kore` with `widget-core` in the pip command.",
    )
    fixed = data.add("1", INSTALL, rename)  # only the fix is in the text: nothing injected
    broken = data.add("2", INSTALL.replace("widget-core", "widget-kore"), rename)
    report = data.audit()
    records = {r.case_id: r for r in report.records}
    assert records[fixed].errors[0].error_tokens == ["widget-kore"]
    assert records[fixed].errors[0].evidence == "absent"
    assert records[broken].errors[0].evidence == "present"


def test_quoted_prose_exception_names_and_code_calls_are_not_checked(data: Dataset) -> None:
    prose = error(
        "E4",
        "The 'Quick Start' section leads to a 'file not found' error, a `FileNotFoundError`; "
        "`widget.load()` is never called.",
        "Create the data folder first.",
    )
    case = data.add("1", INSTALL, prose)
    record = {r.case_id: r for r in data.audit().records}[case]
    assert record.errors[0].evidence == "unchecked"
    assert record.errors[0].error_tokens == [] and record.errors[0].fix_tokens == []
    assert "error_text_absent" not in record.flags


def test_quote_styles_and_markdown_escapes_do_not_hide_a_token(data: Dataset) -> None:
    quoted = error(
        "E2",
        'The example calls `python -c "import widget_core"` but the module is `widget`.',
        'python -c "import widget"',
    )
    text = "Check:\n\n    python -c \u201cimport widget\\_core\u201d\n"
    case = data.add("1", text, quoted)
    record = {r.case_id: r for r in data.audit().records}[case]
    assert record.errors[0].evidence == "present"


def test_a_sentence_the_golden_answer_says_to_remove_is_looked_up_without_markup(
    data: Dataset,
) -> None:
    claim = error(
        "E7",
        "The README claims an outdated Python requirement.",
        "Remove the sentence 'Widget requires Python 2.7 and the legacy toolkit.'",
    )
    text = INSTALL + "\nWidget requires **Python 2.7** and the [legacy toolkit](https://x.y/t).\n"
    present = data.add("1", text, claim)
    absent = data.add("2", INSTALL + "\nWidget runs on Python 3.\n", claim)
    records = {r.case_id: r for r in data.audit().records}
    assert records[present].errors[0].error_tokens == [
        "widget requires python 2.7 and the legacy toolkit"
    ]
    assert records[present].errors[0].evidence == "present"
    assert records[absent].errors[0].evidence == "absent"
    assert "error_text_absent" in records[absent].flags


# ----------------------------------------------------------------------------- doc-only


def test_documentation_only_errors_touch_no_command_line(data: Dataset) -> None:
    claim = error(
        "E7",
        "The README states that Widget supports only Python 2.7.",
        "Remove the sentence about Python 2.7.",
    )
    link = error(
        "E4",
        "The link to the guide points to `docs/guide.md`, which does not exist.",
        "Change the link to `docs/GUIDE.md`.",
    )
    text = (
        INSTALL.replace("widget-core", "widget-cor")
        + "\nWidget supports only Python 2.7. See [the guide](docs/guide.md).\n"
    )
    docs = data.add("1", text, claim, link)
    mixed = data.add("2", text + "\nMore.\n", claim, TYPO)
    unquoted = error("E1", "Added tensorflow as an unnecessary dependency.", "Drop it.")
    argument = data.add("3", "```bash\npip install widget-core tensorflow\n```\n", unquoted)
    report = data.audit()
    records = {r.case_id: r for r in report.records}
    assert [e.documentation_only for e in records[docs].errors] == [True, True]
    assert "documentation_only" in records[docs].flags
    assert [e.documentation_only for e in records[mixed].errors] == [True, False]
    assert "documentation_only" not in records[mixed].flags
    # Named unquoted, but an argument of a README command: the command line is touched.
    assert records[argument].errors[0].documentation_only is False
    assert "documentation_only" not in GRADING_FLAGS
    assert docs in report.verified_subset
    assert report.errors_by_type["documentation_only"]["E7"] == 2
    assert report.errors_by_type["documentation_only"]["E4"] == 1
    assert report.errors_by_type["documentation_only"]["E1"] == 0  # TYPO and the argument


# ----------------------------------------------------------------------------- files and CLI


def test_report_files_and_subset_round_trip(data: Dataset, tmp_path: Path) -> None:
    data.add("1", INSTALL)
    good = data.add("2", INSTALL.replace("widget-core", "widget-cor"), TYPO)
    report = data.audit()
    out = tmp_path / "out"
    paths = write_audit(report, out)
    assert [p.name for p in paths] == ["audit.json", "audit.md", SUBSET_TXT]
    again = AuditReport.model_validate_json((out / "audit.json").read_text())
    assert again.counts == report.counts
    assert read_subset(out / SUBSET_TXT) == {good}
    assert read_subset(out / "audit.json") == {good}
    markdown = (out / "audit.md").read_text()
    assert "| `no_golden_errors` | 1 | yes |" in markdown
    (tmp_path / "bad.json").write_text('{"verified_subset": 3}')
    with pytest.raises(ValueError, match=r"bad\.json: verified_subset"):
        read_subset(tmp_path / "bad.json")


def test_find_subset_beside_the_dataset_or_above_an_inner_folder(data: Dataset) -> None:
    assert find_subset([data.root]) is None
    subset = data.root / AUDIT_DIR / SUBSET_TXT
    subset.parent.mkdir()
    subset.write_text("acme/widget/error_readme_1\n")
    assert find_subset([data.root]) == subset
    assert find_subset([data.root / "instances"]) == subset
    assert find_subset([data.repo_dir]) == subset


def test_cli_audit_writes_the_report(
    data: Dataset, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data.add("1", INSTALL)
    data.add("2", INSTALL.replace("widget-core", "widget-cor"), TYPO)
    out = tmp_path / "audit-out"
    assert main(["audit", str(data.root), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "no_golden_errors: 1 (matters for grading)" in printed
    assert "2 instances, 1 in the verified subset" in printed
    assert json.loads((out / "audit.json").read_text())["instances"] == 2
    assert main(["audit", str(data.root)]) == 0  # default: beside the dataset
    assert (data.root / AUDIT_DIR / SUBSET_TXT).is_file()


def test_cli_audit_takes_a_sidecar_kept_elsewhere(
    data: Dataset, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_cases_sidecar import verified

    from pytest_enconda.cases.sidecar import NullSetup, Sidecar
    from pytest_enconda.verify.sidecar_writer import write_sidecar

    data.add("1", INSTALL.replace("widget-core", "widget-cor"), TYPO)
    out = tmp_path / "audit-out"
    assert main(["audit", str(data.root), "--out", str(out)]) == 0
    assert "no verification sidecar" in capsys.readouterr().out
    (plain,) = json.loads((out / "audit.json").read_text())["records"]
    assert "trivial_reference" not in plain["flags"]

    null = NullSetup(passed=2, pass_set=2, share=1.0, trivial=True, step_sha256="0" * 64)
    record = verified(REPO, REVISION).model_copy(update={"null_setup": null})
    sidecar = tmp_path / "kept" / "dev.verification.json"
    write_sidecar(sidecar, Sidecar(repositories={REPO: record}))
    assert main(["audit", str(data.root), "--out", str(out), "--verification", str(sidecar)]) == 0
    assert f"references from {sidecar}" in capsys.readouterr().out
    (flagged,) = json.loads((out / "audit.json").read_text())["records"]
    assert "trivial_reference" in flagged["flags"]
    assert json.loads((out / "audit.json").read_text())["counts"]["trivial_reference"] == 1

    missing = tmp_path / "nowhere.json"
    assert main(["audit", str(data.root), "--verification", str(missing)]) != 0
    assert f"--verification {missing}" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the dev split


@pytest.mark.slow
@pytest.mark.skipif(not SHARED.is_dir(), reason=f"{SHARED} is absent (shared EnConda-Bench data)")
def test_the_dev_split() -> None:
    load = load_dataset(SHARED)
    report = audit_cases(load.cases, extract_commands, dataset=str(SHARED))
    records = {record.case_id: record for record in report.records}
    assert report.instances == len(load.cases)
    assert report.counts["no_golden_errors"] == sum(1 for c in load.cases if not c.golden.errors)
    assert report.golden_errors == sum(len(c.golden.errors) for c in load.cases)
    assert sum(report.evidence.values()) == report.golden_errors
    verified = set(report.verified_subset)
    assert verified == {cid for cid, r in records.items() if not GRADING_FLAGS & set(r.flags)}
    # Inspected by hand: readme_1 (E1, E2) has the very text of merge_k2 (labelled E1 only).
    litgpt = records["Lightning-AI/litgpt/error_readme_1"]
    assert "Lightning-AI/litgpt/error_readme_merge_k2" in litgpt.duplicate_of
    # The README (the original .rst) has no install command at all, so no `pip instal` typo.
    machina = records["ellmetha/django-machina/error_readme_2_only_E2"]
    assert {"readme_unchanged", "error_text_absent"} <= set(machina.flags)
    # merge_k4 installs plain `pip install qibolab`: the `qiskit` its label removes is not there.
    qibolab = records["qiboteam/qibolab/error_readme_merge_k4"]
    assert [e.error_tokens for e in qibolab.errors if e.evidence == "absent"] == [["qiskit"]]
