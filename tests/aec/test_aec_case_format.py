"""The AEC case format (``suite = "aec"`` with an ``[aec]`` table): loaded, defaulted, and
refused with the file and the field named."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_enconda.aspects import TASK_KINDS, aspect_names
from pytest_enconda.cases.loader import load_case
from pytest_enconda.cases.models import AEC_TASK, README_FROM_REPOSITORY
from pytest_enconda.errors import CaseFormatError


def aec_case(root: Path, body: str) -> Path:
    case_dir = root / "cases" / "one"
    (case_dir / "repo").mkdir(parents=True)
    (case_dir / "repo" / "README.md").write_text("# one\n\n```bash\nmake test\n```\n")
    (case_dir / "setup.sh").write_text("true\n")
    case_file = case_dir / "case.toml"
    case_file.write_text(
        'id = "one"\nsuite = "aec"\ngolden_setup = "setup.sh"\n'
        '[repository]\nkind = "folder"\npath = "repo"\n' + body
    )
    return case_file


def refused(case_file: Path) -> str:
    with pytest.raises(CaseFormatError) as info:
        load_case(case_file)
    text = str(info.value)
    assert str(case_file) in text
    return text


def test_minimal_aec_case_needs_no_readme_and_no_table(tmp_path: Path) -> None:
    case = load_case(aec_case(tmp_path, ""))
    assert case.spec.suite == "aec"
    assert case.spec.readme is None
    assert case.spec.aec is not None and case.spec.aec.task == AEC_TASK
    assert case.spec.aec.reference is None and case.spec.aec.language is None
    # The agent that reads a README reads the repository's own.
    assert README_FROM_REPOSITORY in case.spec.tags
    assert case.readme_text == ""
    assert "aec" in case.keywords()


def test_full_aec_table(tmp_path: Path) -> None:
    body = (
        '[aec]\ntask = "set it up"\nlanguage = "Rust"\n'
        '[aec.reference]\ntest_command = "cargo test"\npass_set = ["a::b", "c"]\n'
    )
    case = load_case(aec_case(tmp_path, body))
    spec = case.spec.aec
    assert spec is not None and spec.task == "set it up" and spec.language == "rust"
    assert spec.reference is not None and spec.reference.test_command == "cargo test"
    assert spec.reference.pass_set == ["a::b", "c"]
    assert "rust" in case.keywords()


@pytest.mark.parametrize(
    ("body", "field", "expected"),
    [
        ('[aec]\nlanguage = "cobol"\n', "aec.language", "expected one of python"),
        ('[aec]\ntask = "  "\n', "aec.task", "must not be empty"),
        ('[aec.reference]\npass_set = ["x"]\n', "aec.reference.test_command", "missing"),
        ('[aec.reference]\ntest_command = ""\n', "aec.reference.test_command", "empty"),
        (
            '[aec.reference]\ntest_command = "go test"\npass_set = ["x", "x"]\n',
            "aec.reference.pass_set",
            "listed twice",
        ),
        ("[aec]\nfoo = 1\n", "aec.foo", "unknown field"),
        ('[research]\nentry_point = "x"\n', "<root>", "belongs to suite = 'research'"),
    ],
)
def test_bad_aec_fields_are_named(tmp_path: Path, body: str, field: str, expected: str) -> None:
    text = refused(aec_case(tmp_path, body))
    assert field in text and expected in text, text


def test_unknown_suite_names_the_registered_kinds(tmp_path: Path) -> None:
    case_file = aec_case(tmp_path, "")
    case_file.write_text(case_file.read_text().replace('suite = "aec"', 'suite = "aecx"'))
    text = refused(case_file)
    assert "suite" in text and "diagnosis, research, aec" in text


def test_aec_table_on_a_diagnosis_case_is_refused(tmp_path: Path) -> None:
    case_file = aec_case(tmp_path, '[aec]\nlanguage = "go"\n')
    text = case_file.read_text().replace('suite = "aec"', 'suite = "diagnosis"')
    (case_file.parent / "README.md").write_text("# r\n")
    case_file.write_text('readme = "README.md"\ntest_command = "true"\n' + text)
    assert "a [aec] table belongs to suite = 'aec'" in refused(case_file)


def test_diagnosis_still_needs_its_readme(tmp_path: Path) -> None:
    case_file = aec_case(tmp_path, "")
    case_file.write_text(
        case_file.read_text().replace('suite = "aec"', 'suite = "diagnosis"\ntest_command = "t"')
    )
    assert "needs 'readme'" in refused(case_file)


def test_the_aec_kind_is_registered_like_the_others() -> None:
    kind = TASK_KINDS.get("aec")
    assert aspect_names(kind) == ("aec_tests_run", "aec_pass_set", "aec_success")
    assert kind.outputs == ("setup.sh", "test_command")
    assert not kind.needs_readme and kind.graded_by_environment
