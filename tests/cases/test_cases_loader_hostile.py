"""Hostile and malformed case folders (issue 8): refused at load, naming file, field and reason.

No Docker, and each test runs in well under a second.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_enconda.artifacts import safe_name
from pytest_enconda.cases.loader import load_case
from pytest_enconda.cases.models import MAX_GOLDEN_ERRORS
from pytest_enconda.errors import CaseFormatError
from pytest_enconda.records import CaseDir

GOLDEN_ERROR = {
    "error_type": "E4",
    "error_description": "requirements file path is wrong",
    "correction_candidates": ["pip install -r requirements.txt"],
    "golden_answer": "pip install -r requirements.txt",
}


def make_case(root: Path, *, toml_extra: str = "", readme: str = "README.md", **files: str) -> Path:
    """A valid case folder under ``root/bench/cases/one``; returns its case.toml."""
    case_dir = root / "bench" / "cases" / "one"
    (case_dir / "repo").mkdir(parents=True)
    (case_dir / "repo" / "x.txt").write_text("x\n")
    (case_dir / "README.md").write_text("# one\n")
    (case_dir / "golden.json").write_text(json.dumps({"level": 1, "errors": [GOLDEN_ERROR]}))
    for name, text in files.items():
        (case_dir / name).write_text(text)
    toml = (
        'id = "one"\nsuite = "diagnosis"\n'
        f"readme = {json.dumps(readme)}\n"
        'golden = "golden.json"\ntest_command = "true"\n'
        f"{toml_extra}\n"
    )
    if "[repository]" not in toml_extra:
        toml += '[repository]\nkind = "folder"\npath = "repo"\n'
    (case_dir / "case.toml").write_text(toml)
    return case_dir / "case.toml"


def problems_of(case_file: Path, roots: list[Path] | None = None) -> str:
    with pytest.raises(CaseFormatError) as info:
        load_case(case_file, roots or [])
    assert str(case_file) in str(info.value)
    return str(info.value)


# ------------------------------------------------------------------ paths outside the case


@pytest.mark.parametrize("readme", ["/etc/passwd", "../../../../../../../../../../etc/passwd"])
def test_readme_outside_the_case_is_refused(tmp_path: Path, readme: str) -> None:
    text = problems_of(make_case(tmp_path, readme=readme))
    assert "readme: resolves to /etc/passwd, outside the case's folder" in text


def test_readme_symlink_to_a_host_file_is_refused(tmp_path: Path) -> None:
    case_file = make_case(tmp_path, readme="link.md")
    (case_file.parent / "link.md").symlink_to("/etc/hostname")
    text = problems_of(case_file)
    assert "readme: resolves to /etc/hostname, outside" in text


def test_golden_and_original_outside_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "secret.json"
    outside.write_text(json.dumps({"errors": []}))
    case_file = make_case(tmp_path)
    toml = case_file.read_text().replace(
        'golden = "golden.json"', 'golden = "../../../secret.json"'
    )
    case_file.write_text(
        toml.replace("[repository]", 'original_readme = "/etc/hostname"\n[repository]')
    )
    text = problems_of(case_file)
    assert f"golden: resolves to {outside}, outside" in text
    assert "original_readme: resolves to /etc/hostname, outside" in text


@pytest.mark.parametrize("path", ["/etc", "/", "../../../.."])
def test_repository_folder_outside_is_refused(tmp_path: Path, path: str) -> None:
    extra = f'[repository]\nkind = "folder"\npath = "{path}"\n'
    text = problems_of(make_case(tmp_path, toml_extra=extra))
    assert "repository.path: resolves to " in text and "outside" in text


def test_a_root_it_was_collected_from_is_allowed(tmp_path: Path) -> None:
    """The shipped layout: cases name ``../../repos/NAME`` inside the benchmark folder."""
    repos = tmp_path / "bench" / "repos" / "widget"
    repos.mkdir(parents=True)
    extra = '[repository]\nkind = "folder"\npath = "../../repos/widget"\n'
    case_file = make_case(tmp_path, toml_extra=extra)
    assert "outside" in problems_of(case_file)  # not without the root
    case = load_case(case_file, [tmp_path / "bench"])
    assert case.spec.repository.path == "../../repos/widget"


@pytest.mark.parametrize("target", ["../../../etc/evil", "/etc/evil", "docs/../../x"])
def test_readme_target_must_stay_in_the_repository(tmp_path: Path, target: str) -> None:
    text = problems_of(make_case(tmp_path, toml_extra=f"readme_target = {json.dumps(target)}"))
    assert "readme_target: Value error, expected a relative path inside the repository" in text


# ------------------------------------------------------------------ encodings and nesting


def test_non_utf8_case_file_is_a_case_error(tmp_path: Path) -> None:
    case_file = make_case(tmp_path)
    case_file.write_bytes(case_file.read_bytes().replace(b'title = ""', b"") + b'title = "\xff"\n')
    text = problems_of(case_file)
    assert "not UTF-8 (byte 0xff" in text


def test_utf16_case_file_is_named_as_such(tmp_path: Path) -> None:
    case_file = make_case(tmp_path)
    case_file.write_bytes(case_file.read_text().encode("utf-16"))
    assert "UTF-16 text; expected UTF-8" in problems_of(case_file)


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    case_file = make_case(tmp_path)
    case_file.write_bytes(b"\xef\xbb\xbf" + case_file.read_bytes())
    assert load_case(case_file).id == "one"


def test_deeply_nested_toml_is_a_case_error(tmp_path: Path) -> None:
    case_file = make_case(tmp_path)
    depth = 5000
    case_file.write_text(case_file.read_text() + "[x]\ny = " + "[" * depth + "]" * depth + "\n")
    assert "nested too deeply" in problems_of(case_file)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (b'{"errors": [], "x": "\xfe"}', "not UTF-8 (byte 0xfe"),
        ('{"errors": [}', "not valid JSON"),
    ],
)
def test_unreadable_golden_is_a_case_error(
    tmp_path: Path, content: str | bytes, expected: str
) -> None:
    case_file = make_case(tmp_path)
    golden = case_file.parent / "golden.json"
    golden.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert expected in problems_of(case_file)


# ------------------------------------------------------------------ values


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("inf", "Input should be a finite number"),
        ("nan", "Input should be a finite number"),
        ("1e308", "Input should be less than or equal to 604800"),
        ('"300"', "Input should be a valid number"),
        ("true", "Input should be a valid number"),
        ("0", "Input should be greater than or equal to 1"),
    ],
)
def test_budget_values_are_refused(tmp_path: Path, value: str, expected: str) -> None:
    case_file = make_case(tmp_path)
    case_file.write_text(case_file.read_text() + f"[budgets]\nsetup_seconds = {value}\n")
    text = problems_of(case_file)
    assert f"budgets.setup_seconds: {expected}" in text


def test_empty_golden_description_is_refused(tmp_path: Path) -> None:
    case_file = make_case(tmp_path)
    error = dict(GOLDEN_ERROR, error_description="   ")
    (case_file.parent / "golden.json").write_text(json.dumps({"errors": [error]}))
    assert "errors.0.error_description: Value error, must not be empty" in problems_of(case_file)


@pytest.mark.parametrize(
    ("golden", "field"),
    [({"errors": None}, "errors"), ({"errors": [dict(GOLDEN_ERROR, error_type=None)]}, "errors.0")],
)
def test_null_is_called_null(tmp_path: Path, golden: dict, field: str) -> None:
    case_file = make_case(tmp_path)
    (case_file.parent / "golden.json").write_text(json.dumps(golden))
    text = problems_of(case_file)
    assert f"{field}" in text and "got null; expected a value" in text
    assert "required field is missing" not in text


def test_golden_with_too_many_errors_is_refused(tmp_path: Path) -> None:
    case_file = make_case(tmp_path)
    golden = {"errors": [GOLDEN_ERROR] * 20_000}
    (case_file.parent / "golden.json").write_text(json.dumps(golden))
    text = problems_of(case_file)
    assert f"errors: List should have at most {MAX_GOLDEN_ERRORS} items" in text


def test_huge_readme_is_refused(tmp_path: Path) -> None:
    case_file = make_case(tmp_path)
    with (case_file.parent / "README.md").open("wb") as handle:
        handle.truncate(9 * 1024 * 1024)
    assert "readme: cannot read" in problems_of(case_file) and "larger than" in problems_of(
        case_file
    )


# ------------------------------------------------------------------ artifact folders


def test_case_folders_are_injective() -> None:
    ids = ["tabkit-e4-e6.", "tabkit-e4-e6", "a/b", "a+2fb", "a__b", "x y", "x+20y", "é", ".x"]
    names = [safe_name(case_id) for case_id in ids]
    assert len(set(names)) == len(ids)
    for name in names:
        assert os.sep not in name and not name.startswith(".")


def test_case_dir_stays_inside_the_run(tmp_path: Path) -> None:
    root = CaseDir(tmp_path, "../../etc").root
    assert root.parent == tmp_path / "cases"
