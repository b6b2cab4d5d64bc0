"""The EnConda-Bench importer, on datasets written to tmp_path and on the shared 2,074 folders."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_enconda.cases.enconda_import import DEFAULT_TEST_COMMAND, load_dataset

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "enconda-dev"
REVISION = "0123456789abcdef0123456789abcdef01234567"


def golden(*types: str, level: object = None, **extra: Any) -> dict[str, Any]:
    errors = [
        {
            "error_type": error_type,
            "error_description": f"description {i} ({error_type})",
            "correction_candidates": [f"fix {i}", f"other {i}"],
            "golden_answer": f"fix {i}",
        }
        for i, error_type in enumerate(types)
    ]
    return {
        "readme": "x",
        "repo_name": "x",
        "level": f"level{len(types)}" if level is None else level,
        "errors": errors,
        **extra,
    }


def write_instance(
    root: Path,
    repo_key: str,
    instance: str,
    data: object,
    *,
    readme: str = "README.md",
    golden_name: str = "README.json",
    text: str = "# Title\n\n```bash\npip install foo\n```\n",
) -> Path:
    folder = root / "instances" / f"error_gen_{repo_key}" / instance
    folder.mkdir(parents=True)
    (folder / readme).write_text(text, encoding="utf-8")
    raw = data if isinstance(data, str) else json.dumps(data)
    (folder / golden_name).write_text(raw, encoding="utf-8")
    return folder


def write_repo_info(root: Path, *repositories: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"repository": r, "revision": REVISION}) for r in repositories]
    (root / "repo_info.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def siblings(tmp_path: Path) -> Path:
    """The folders EnConda-Bench's evaluator confuses: readme_1, readme_1_only_E1, readme_10."""
    root = tmp_path / "enconda"
    write_repo_info(root, "my-org/my_repo")
    write_instance(root, "my-org_my_repo", "my-org_my_repo_error_readme_1", golden("E2", "E7"))
    write_instance(root, "my-org_my_repo", "my-org_my_repo_error_readme_1_only_E1", golden("E1"))
    write_instance(root, "my-org_my_repo", "my-org_my_repo_error_readme_10", golden("E6"))
    write_instance(
        root, "my-org_my_repo", "error_gen_my-org_my_repo_error_readme_merge_k2", golden("E4", "E8")
    )
    return root


# ----------------------------------------------------------------------------- lookup and ids


def test_golden_is_the_file_in_the_instance_folder_itself(siblings: Path) -> None:
    loaded = load_dataset(siblings)
    assert loaded.problems == []
    by_folder = {case.case_dir.name: case for case in loaded.cases}
    assert by_folder["my-org_my_repo_error_readme_1"].error_types == ["E2", "E7"]
    assert by_folder["my-org_my_repo_error_readme_1_only_E1"].error_types == ["E1"]
    assert by_folder["my-org_my_repo_error_readme_10"].error_types == ["E6"]
    assert by_folder["error_gen_my-org_my_repo_error_readme_merge_k2"].error_types == ["E4", "E8"]
    for case in loaded.cases:
        on_disk = json.loads((case.case_dir / "README.json").read_text())
        assert [e.model_dump() for e in case.golden.errors] == on_disk["errors"]


def test_case_fields(siblings: Path) -> None:
    loaded = load_dataset(siblings, test_command="tox -e py")
    assert [case.id for case in loaded.cases] == [
        "my-org/my_repo/error_readme_1",
        "my-org/my_repo/error_readme_1_only_E1",
        "my-org/my_repo/error_readme_10",
        "my-org/my_repo/error_readme_merge_k2",
    ]
    case = loaded.cases[0]
    spec = case.spec
    assert spec.suite == "diagnosis"
    assert spec.repository.kind == "url"
    assert spec.repository.url == "https://github.com/my-org/my_repo"
    assert spec.repository.revision == REVISION
    assert (spec.readme, spec.readme_target, spec.golden) == (
        "README.md",
        "README.md",
        "README.json",
    )
    assert spec.test_command == "tox -e py"
    assert case.readme_text.startswith("# Title")
    assert case.level == 2 and case.golden.level == 2
    assert {"diagnosis", "level2", "E2", "E7", "enconda"} <= case.keywords()
    assert "only_E1" in loaded.cases[1].spec.tags
    assert "merge" in loaded.cases[3].spec.tags
    assert load_dataset(siblings).cases[0].spec.test_command == DEFAULT_TEST_COMMAND


@pytest.mark.parametrize(
    "relative",
    [
        ".",
        "instances",
        "instances/error_gen_my-org_my_repo",
    ],
)
def test_every_level_of_the_layout_can_be_given(siblings: Path, relative: str) -> None:
    loaded = load_dataset(siblings / relative)
    assert loaded.problems == []
    assert len(loaded.cases) == 4


def test_a_single_instance_folder_loads_only_that_instance(siblings: Path) -> None:
    folder = siblings / "instances/error_gen_my-org_my_repo/my-org_my_repo_error_readme_1"
    loaded = load_dataset(folder)
    assert [case.id for case in loaded.cases] == ["my-org/my_repo/error_readme_1"]


def test_underscored_names_map_through_repo_info(tmp_path: Path) -> None:
    root = tmp_path / "d"
    write_repo_info(root, "a_b/c_d", "x/y")
    write_instance(root, "a_b_c_d", "a_b_c_d_error_readme_1", golden("E1"))
    loaded = load_dataset(root)
    assert loaded.problems == []
    assert loaded.cases[0].id == "a_b/c_d/error_readme_1"
    assert loaded.cases[0].spec.repository.url == "https://github.com/a_b/c_d"


def test_ambiguous_folder_names_are_problems(tmp_path: Path) -> None:
    root = tmp_path / "d"
    write_repo_info(root, "a_b/c", "a/b_c")
    folder = write_instance(root, "a_b_c", "a_b_c_error_readme_1", golden("E1"))
    loaded = load_dataset(root)
    assert loaded.cases == []
    reasons = {problem.file: problem.reason for problem in loaded.problems}
    assert "both map to folder error_gen_a_b_c" in reasons[f"{root / 'repo_info.jsonl'}:2"]
    assert str(folder) in reasons


def test_instance_without_revision_is_a_problem_and_others_load(tmp_path: Path) -> None:
    root = tmp_path / "d"
    write_repo_info(root, "o/known")
    write_instance(root, "o_known", "o_known_error_readme_1", golden("E1"))
    missing = write_instance(root, "o_unknown", "o_unknown_error_readme_1", golden("E2"))
    loaded = load_dataset(root)
    assert [case.id for case in loaded.cases] == ["o/known/error_readme_1"]
    assert [(p.file, "no revision" in p.reason) for p in loaded.problems] == [(str(missing), True)]


def test_no_repo_info_at_all(tmp_path: Path) -> None:
    write_instance(tmp_path / "d", "o_r", "o_r_error_readme_1", golden("E1"))
    loaded = load_dataset(tmp_path / "d" / "instances")
    assert loaded.cases == []
    assert any("repo_info.jsonl" in problem.reason for problem in loaded.problems)


def test_not_a_dataset(tmp_path: Path) -> None:
    loaded = load_dataset(tmp_path)
    assert loaded.cases == []
    assert "no EnConda-Bench layout" in loaded.problems[0].reason
    assert load_dataset(tmp_path / "missing").problems[0].reason == "not a directory"


def test_bad_repo_info_lines_are_reported_by_line(tmp_path: Path) -> None:
    root = tmp_path / "d"
    root.mkdir()
    (root / "repo_info.jsonl").write_text(
        '{"repository": "o/r", "revision": "abc"}\nnot json\n{"repository": "noslash"}\n'
        '{"repository": "o/s", "revision": ""}\n'
    )
    write_instance(root, "o_r", "o_r_error_readme_1", golden("E1"))
    loaded = load_dataset(root)
    assert len(loaded.cases) == 1
    files = [problem.file for problem in loaded.problems]
    assert files == [f"{root / 'repo_info.jsonl'}:{n}" for n in (2, 3, 4)]


# ----------------------------------------------------------------------------- golden variants


def test_malformed_goldens_are_reported_file_by_file_and_the_rest_load(tmp_path: Path) -> None:
    root = tmp_path / "d"
    write_repo_info(root, "o/r")
    good = write_instance(root, "o_r", "o_r_error_readme_1", golden("E1"))
    bad = {
        "o_r_error_readme_2": "{not json",
        "o_r_error_readme_3": {"level": "level1"},
        "o_r_error_readme_4": golden("E3"),
        "o_r_error_readme_5": {"errors": [{"error_type": "E1", "error_description": "d"}]},
        "o_r_error_readme_6": {
            "errors": [
                {
                    "error_type": "E1",
                    "error_description": "d",
                    "golden_answer": "g",
                    "correction_candidates": {"a": 1},
                }
            ]
        },
        "o_r_error_readme_7": ["not", "an", "object"],
        "o_r_error_readme_8": {"errors": "E1"},
    }
    folders = {name: write_instance(root, "o_r", name, data) for name, data in bad.items()}
    loaded = load_dataset(root)
    assert [case.case_dir for case in loaded.cases] == [good]
    reasons = {Path(problem.file).parent.name: problem.reason for problem in loaded.problems}
    assert set(reasons) == set(folders)
    assert reasons["o_r_error_readme_2"].startswith("not valid JSON")
    assert reasons["o_r_error_readme_3"] == "errors: required field is missing"
    expected_type = "errors[0].error_type: expected one of E1, E2, E4, E6, E7, E8, got 'E3'"
    assert reasons["o_r_error_readme_4"] == expected_type
    assert reasons["o_r_error_readme_5"] == "errors[0].golden_answer: required field is missing"
    assert "correction_candidates: expected a list of text" in reasons["o_r_error_readme_6"]
    assert "expected a JSON object" in reasons["o_r_error_readme_7"]
    assert reasons["o_r_error_readme_8"] == "errors: expected a list, got str"
    for problem in loaded.problems:
        assert problem.file.endswith("README.json")


def test_unambiguous_variants_are_normalised_with_notes(tmp_path: Path) -> None:
    root = tmp_path / "d"
    write_repo_info(root, "o/r")
    variants = {
        "e1": "E1",
        " E-2 ": "E2",
        "E04": "E4",
        "Dependency Installation Error": "E1",
        "E7: Version Compatibility Error": "E7",
    }
    data = {
        "level": 3,
        "errors": [
            {
                "type": spelled,
                # Distinct: one error listed twice is refused as a labelling fault.
                "description": f"d{number}",
                "correction_candidates": "only one",
                "golden_answer": "g",
                "severity": "high",
            }
            for number, spelled in enumerate(variants)
        ],
    }
    folder = write_instance(root, "o_r", "o_r_error_readme_1", data)
    loaded = load_dataset(root)
    assert loaded.problems == []
    (case,) = loaded.cases
    assert case.error_types == list(variants.values())
    assert case.golden.errors[0].correction_candidates == ["only one"]
    assert case.level == 5 and case.golden.level == 5
    reasons = [note.reason for note in loaded.notes if note.file == str(folder / "README.json")]
    assert "errors[0].error_type: 'e1' read as E1" in reasons
    assert "errors[0].type: read as error_type" in reasons
    assert "errors[0].severity: unknown field dropped" in reasons
    assert "errors[0].correction_candidates: a single string read as a list of one" in reasons
    assert "level: file says 3 but lists 5 errors; using 5" in reasons


def test_capped_level_lowercase_files_and_empty_errors(tmp_path: Path) -> None:
    root = tmp_path / "d"
    write_repo_info(root, "o/r")
    capped = write_instance(
        root, "o_r", "o_r_error_readme_1", golden(*["E2"] * 12, level="level10")
    )
    lower = write_instance(
        root,
        "o_r",
        "o_r_error_readme_2",
        golden("E1"),
        readme="readme.md",
        golden_name="readme.json",
    )
    empty = write_instance(root, "o_r", "o_r_error_readme_3", golden(level="level0"))
    loaded = load_dataset(root)
    assert loaded.problems == []
    levels = {case.case_dir: case.level for case in loaded.cases}
    assert levels == {capped: 12, lower: 1, empty: 0}
    lower_case = next(case for case in loaded.cases if case.case_dir == lower)
    assert (lower_case.spec.readme, lower_case.spec.readme_target) == ("readme.md", "README.md")
    assert lower_case.spec.golden == "readme.json"
    assert "level0" in next(c for c in loaded.cases if c.case_dir == empty).keywords()
    notes = {(Path(n.file).parent, n.reason.split(":")[0]) for n in loaded.notes}
    assert (capped, "level") in notes
    assert (lower, "golden file spelled 'readme.json'; read as README.json") in notes
    assert (empty, "no injected errors") in notes


def test_missing_files_in_an_instance(tmp_path: Path) -> None:
    root = tmp_path / "d"
    write_repo_info(root, "o/r")
    no_readme = root / "instances/error_gen_o_r/o_r_error_readme_1"
    no_readme.mkdir(parents=True)
    (no_readme / "README.json").write_text(json.dumps(golden("E1")))
    no_golden = root / "instances/error_gen_o_r/o_r_error_readme_2"
    no_golden.mkdir(parents=True)
    (no_golden / "README.md").write_text("x")
    loaded = load_dataset(root)
    assert loaded.cases == []
    assert [(p.file, p.reason) for p in loaded.problems] == [
        (str(no_readme), "no README file (README.md, README.rst, ...) in the folder"),
        (str(no_golden / "README.json"), "golden file not found in the folder"),
    ]


def test_rst_readme_and_undecodable_bytes(tmp_path: Path) -> None:
    root = tmp_path / "d"
    write_repo_info(root, "o/r")
    folder = write_instance(root, "o_r", "o_r_error_readme_1", golden("E1"), readme="README.rst")
    (folder / "README.rst").write_bytes(b"Title\n=====\n\ncaf\xe9 ::\n\n    pip install x\n")
    loaded = load_dataset(root)
    (case,) = loaded.cases
    assert case.spec.readme_target == "README.rst"
    assert "caf\ufffd" in case.readme_text
    assert any("not UTF-8" in note.reason for note in loaded.notes)


# ----------------------------------------------------------------------------- shared data


def _shared_instances() -> Path:
    instances = SHARED / "instances"
    if not instances.is_dir():
        pytest.skip(f"EnConda-Bench reference data not found at {instances}")
    return instances


@pytest.mark.shared_data
def test_full_shared_dataset(record_property: pytest.RecordProperty) -> None:
    instances = _shared_instances()
    loaded = load_dataset(SHARED)

    # Direct count from the files, independent of the importer.
    folders = [path for path in instances.glob("*/*") if path.is_dir()]
    direct_types: Counter[str] = Counter()
    exact_name = 0
    for folder in folders:
        goldens = [p for p in folder.iterdir() if p.name.lower() == "readme.json"]
        assert len(goldens) == 1, folder
        exact_name += goldens[0].name == "README.json"
        errors = json.loads(goldens[0].read_text(encoding="utf-8"))["errors"]
        direct_types.update(error["error_type"] for error in errors)

    print(
        f"\n{len(loaded.cases)} cases from {len(folders)} instance folders "
        f"({exact_name} with README.json, {len(folders) - exact_name} with readme.json); "
        f"{len(loaded.problems)} problems, {len(loaded.notes)} notes"
    )
    print("by type:", loaded.counts_by_type())
    print("by level:", loaded.counts_by_level())
    record_property("cases", len(loaded.cases))
    record_property("problems", len(loaded.problems))

    assert exact_name == 2064  # the figure EnConda-Bench's README-finder sees (case-sensitive)
    assert len(loaded.cases) == len(folders) == 2074
    assert loaded.problems == []
    assert loaded.counts_by_type() == {t: direct_types[t] for t in loaded.counts_by_type()}
    assert sum(direct_types.values()) == sum(case.level for case in loaded.cases)
    ids = [case.id for case in loaded.cases]
    assert len(set(ids)) == len(ids)
    assert {case.case_dir for case in loaded.cases} == set(folders)
    for case in loaded.cases:
        on_disk = json.loads((case.case_dir / str(case.spec.golden)).read_text(encoding="utf-8"))
        assert [e.error_type for e in case.golden.errors] == [
            e["error_type"] for e in on_disk["errors"]
        ], case.case_dir


def test_original_readme_is_the_repository_folders_own(tmp_path: Path) -> None:
    """``--readme-variant=original`` needs it: ``error_gen_<owner>_<name>/README.*``."""
    root = tmp_path / "d"
    write_repo_info(root, "o/r", "p/q")
    with_original = write_instance(root, "o_r", "o_r_error_readme_1", golden("E1"))
    write_instance(root, "o_r", "o_r_error_readme_1_only_E1", golden("E1"))
    without = write_instance(root, "p_q", "p_q_error_readme_1", golden("E1"))
    repo_folder = with_original.parent
    (repo_folder / "README.rst").write_text("Title\n=====\n\n    pip install r\n")
    (repo_folder / "notes.txt").write_text("stray")
    loaded = load_dataset(root)
    assert loaded.problems == []
    originals = {case.case_dir.name: case.original_readme_text for case in loaded.cases}
    assert originals == {
        "o_r_error_readme_1": "Title\n=====\n\n    pip install r\n",
        "o_r_error_readme_1_only_E1": "Title\n=====\n\n    pip install r\n",
        "p_q_error_readme_1": None,
    }
    case = next(case for case in loaded.cases if case.case_dir == with_original)
    assert case.with_original_readme().readme_text.endswith("pip install r\n")
    # The README is an original, not a stray file; the stray one is still noted.
    stray = [n.reason for n in loaded.notes if n.file == str(repo_folder)]
    assert stray == ["ignored files outside instance folders: notes.txt"]
    assert without.parent.name == "error_gen_p_q"
    # A single instance folder given alone finds its repository folder's README too.
    (alone,) = load_dataset(with_original).cases
    assert alone.original_readme_text == originals["o_r_error_readme_1"]


@pytest.mark.shared_data
def test_shared_dataset_originals() -> None:
    instances = _shared_instances()
    loaded = load_dataset(SHARED)
    with_readme = {
        folder.name
        for folder in instances.iterdir()
        if any(p.is_file() and p.stem.lower() == "readme" for p in folder.iterdir())
    }
    assert len(with_readme) == 37
    for case in loaded.cases:
        repo_folder = case.case_dir.parent
        if repo_folder.name in with_readme:
            original = (repo_folder / "README.rst").read_text(encoding="utf-8")
            assert case.original_readme_text == original, case.id
            assert case.original_readme_text != case.readme_text, case.id
        else:
            assert case.original_readme_text is None, case.id
