"""The verification sidecar: its format, where it is found, and what the importer makes of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_enconda.cases.enconda_import import load_dataset
from pytest_enconda.cases.sidecar import (
    SIDECAR_NAME,
    RepoVerification,
    Sidecar,
    SidecarError,
    find_sidecar,
    read_sidecar,
)
from pytest_enconda.sandbox.recipes import BASE_RECIPES
from pytest_enconda.verify.sidecar_writer import write_sidecar

REV_A = "a" * 40
REV_B = "b" * 40
ERROR = {
    "error_type": "E1",
    "error_description": "the package does not exist",
    "correction_candidates": [],
    "golden_answer": "pip install good",
}


def make_dataset(root: Path) -> Path:
    lines = [{"repository": "o/a", "revision": REV_A}, {"repository": "o/b", "revision": REV_B}]
    root.mkdir(parents=True)
    (root / "repo_info.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    for key in ("o_a", "o_b"):
        folder = root / "instances" / f"error_gen_{key}" / f"{key}_error_readme_1"
        folder.mkdir(parents=True)
        (folder / "README.md").write_text("# x\n\n```bash\npip install bad\n```\n")
        (folder / "README.json").write_text(json.dumps({"level": "level1", "errors": [ERROR]}))
    return root


def verified(name: str, revision: str) -> RepoVerification:
    return RepoVerification(
        repository=name,
        revision=revision,
        status="verified",
        test_command="python -m pytest tests",
        test_command_source="ci",
        test_tools=["pytest>=7", "pytest-mock"],
        reference_setup="#!/bin/bash\npip install -e .\n",
        reference_source="agent:readme",
        pass_set=["tests.test_a::test_one", "tests.test_a::test_two"],
    )


def test_round_trip_is_sorted_and_counts(tmp_path: Path) -> None:
    sidecar = Sidecar(dataset="d")
    sidecar.repositories["z/z"] = verified("z/z", REV_A)
    sidecar.repositories["a/a"] = RepoVerification(
        repository="a/a", revision=REV_B, status="unverified", reason="setup exited with 1"
    )
    path = tmp_path / "side.json"
    write_sidecar(path, sidecar)
    assert list(json.loads(path.read_text())["repositories"]) == ["a/a", "z/z"]
    back = read_sidecar(path)
    assert back.repositories["z/z"].pass_set == verified("z/z", REV_A).pass_set
    assert back.counts() == {"repositories": 2, "verified": 1, "unverified": 1}
    # A record made at another revision is not this repository's reference.
    assert back.record("z/z", REV_A) is not None
    assert back.record("z/z", REV_B) is None


def test_absent_files_round_trip_capped_and_old_records_read(tmp_path: Path) -> None:
    from pytest_enconda.cases.sidecar import ABSENT_FILES_KEPT

    record = verified("o/a", REV_A)
    many = [f"data/{index:04d}.bin" for index in range(ABSENT_FILES_KEPT + 50)]
    record.record_absent(list(reversed(many)))
    assert record.absent_count == ABSENT_FILES_KEPT + 50
    assert record.absent_files == many[:ABSENT_FILES_KEPT]
    path = tmp_path / "side.json"
    write_sidecar(path, Sidecar(repositories={"o/a": record}))
    back = read_sidecar(path).repositories["o/a"]
    assert back.absent_files == many[:ABSENT_FILES_KEPT]
    assert back.absent_count == ABSENT_FILES_KEPT + 50
    # A record written before the fields existed reads as lacking nothing.
    data = json.loads(path.read_text())
    del data["repositories"]["o/a"]["absent_files"], data["repositories"]["o/a"]["absent_count"]
    path.write_text(json.dumps(data))
    old = read_sidecar(path).repositories["o/a"]
    assert old.absent_files == [] and old.absent_count == 0 and old.verified
    data["repositories"]["o/a"]["absent_count"] = -1
    path.write_text(json.dumps(data))
    with pytest.raises(SidecarError, match=r"repositories\.o/a\.absent_count"):
        read_sidecar(path)


def test_verified_needs_a_pass_set() -> None:
    record = verified("o/a", REV_A).model_copy(update={"pass_set": []})
    assert not record.verified


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{", "not valid JSON"),
        ('{"format": 1, "repositories": {"o/a": {"repository": "o/a"}}}', "repositories.o/a"),
        ('{"format": 9}', "format: expected 1, got 9"),
        ('{"format": 1, "surprise": 1}', "surprise"),
    ],
)
def test_bad_files_name_file_and_field(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "side.json"
    path.write_text(text)
    with pytest.raises(SidecarError) as info:
        read_sidecar(path)
    assert str(info.value).startswith(str(path))
    assert expected in str(info.value)


def test_key_must_match_the_record(tmp_path: Path) -> None:
    path = tmp_path / "side.json"
    sidecar = Sidecar(repositories={"x/y": verified("o/a", REV_A)})
    path.write_text(sidecar.model_dump_json())
    with pytest.raises(SidecarError, match=r"repositories\.x/y\.repository"):
        read_sidecar(path)


def test_found_beside_the_dataset_from_any_level(tmp_path: Path) -> None:
    data = make_dataset(tmp_path / "DATA")
    assert find_sidecar(data) is None
    write_sidecar(data / SIDECAR_NAME, Sidecar())
    for level in (data, data / "instances", data / "instances" / "error_gen_o_a"):
        assert find_sidecar(level) == data / SIDECAR_NAME


def test_importer_applies_records(tmp_path: Path) -> None:
    data = make_dataset(tmp_path / "DATA")
    sidecar = Sidecar(repositories={"o/a": verified("o/a", REV_A)})
    write_sidecar(data / SIDECAR_NAME, sidecar)
    cases = {case.id: case for case in load_dataset(data).cases}
    a, b = cases["o/a/error_readme_1"], cases["o/b/error_readme_1"]
    assert a.reference is not None and a.reference.verified
    assert a.reference.pass_set == {"tests.test_a::test_one", "tests.test_a::test_two"}
    assert a.reference.test_tools == ("pytest>=7", "pytest-mock")
    assert a.spec.test_command == "python -m pytest tests"
    # The oracle returns the golden setup: for imported data, the reference setup.
    assert a.golden_setup_text == "#!/bin/bash\npip install -e .\n"
    assert b.reference is not None and not b.reference.verified
    assert b.reference.reason == f"o/b@{REV_B[:12]} has no record in {data / SIDECAR_NAME}"
    assert b.golden_setup_text is None


def test_importer_without_sidecar_and_with_unverified_record(tmp_path: Path) -> None:
    data = make_dataset(tmp_path / "DATA")
    case = load_dataset(data).cases[0]
    assert case.reference is not None and not case.reference.verified
    assert "no verification sidecar" in case.reference.reason
    elsewhere = tmp_path / "elsewhere.json"
    record = RepoVerification(
        repository="o/a", revision=REV_A, status="unverified", reason="setup exited with 1"
    )
    write_sidecar(elsewhere, Sidecar(repositories={"o/a": record}))
    loaded = load_dataset(data, verification=elsewhere)
    first = loaded.cases[0]
    assert first.reference is not None
    assert first.reference.reason == "o/a: setup exited with 1"
    assert first.spec.test_command == "python -m pytest -q"


def test_unreadable_sidecar_is_a_problem_and_nothing_is_verified(tmp_path: Path) -> None:
    data = make_dataset(tmp_path / "DATA")
    (data / SIDECAR_NAME).write_text("[]")
    loaded = load_dataset(data)
    assert [problem.file for problem in loaded.problems] == [str(data / SIDECAR_NAME)]
    assert all(case.reference and not case.reference.verified for case in loaded.cases)
    assert all("cannot be used" in case.reference.reason for case in loaded.cases if case.reference)


def test_a_reference_below_the_pass_share_is_unverified_also_from_older_records(
    tmp_path: Path,
) -> None:
    from pytest_enconda.cases.sidecar import TestRun

    # An older record: no share recorded, 2 of 9 tests that ran passed (the skips do not count).
    old = verified("o/a", REV_A).model_copy(
        update={"runs": [TestRun(exit_code=1, passed=2, failed=6, errors=1, skipped=30)]}
    )
    assert old.share == 2 / 9 and not old.verified
    assert old.why_unverified == "the reference passes 22% of the tests that ran, below 50%"
    # A record verified with a lower threshold keeps it.
    lenient = old.model_copy(update={"pass_share": 0.22, "min_pass_share": 0.2})
    assert lenient.verified
    full = verified("o/b", REV_B).model_copy(
        update={"runs": [TestRun(exit_code=0, passed=2, skipped=5)]}
    )
    assert full.verified and full.share == 1.0
    data = make_dataset(tmp_path / "DATA")
    side = tmp_path / "side.json"
    write_sidecar(side, Sidecar(repositories={"o/a": old, "o/b": full}))
    cases = {case.id: case for case in load_dataset(data, verification=side).cases}
    assert cases["o/b/error_readme_1"].reference.verified
    reference = cases["o/a/error_readme_1"].reference
    assert not reference.verified
    assert "22% of the tests that ran, below 50%" in reference.reason


def test_the_base_image_round_trips_and_old_records_read_as_bookworm(tmp_path: Path) -> None:
    record = verified("o/a", REV_A).model_copy(update={"base_image": "bullseye-py3.9"})
    path = tmp_path / "side.json"
    write_sidecar(path, Sidecar(repositories={"o/a": record}))
    assert read_sidecar(path).repositories["o/a"].base_image == "bullseye-py3.9"
    # A record written before the choice was built on the one base there was.
    data = json.loads(path.read_text())
    del data["repositories"]["o/a"]["base_image"]
    path.write_text(json.dumps(data))
    assert read_sidecar(path).repositories["o/a"].base_image == "bookworm-py3.11"


def test_the_committed_dev_sidecar_still_reads() -> None:
    path = Path(__file__).resolve().parents[2] / "benchmark_cases" / "enconda-dev.verification.json"
    sidecar = read_sidecar(path)
    assert sidecar.repositories
    # Every record names a base the recipes know; the Python-range choice moved hknweb (Poetry
    # `~3.9`) to bullseye, and the records made before the choice read as bookworm.
    bases = {record.repository: record.base_image for record in sidecar.repositories.values()}
    assert set(bases.values()) <= set(BASE_RECIPES)
    assert bases["compserv/hknweb"] == "bullseye-py3.9"
    assert bases["amperser/proselint"] == "bookworm-py3.11"


def test_importer_gives_every_case_its_repositorys_base(tmp_path: Path) -> None:
    """The agent, the oracle and Pass@1 run on the Python the reference was built on; an
    unverified record's base is kept too (the repository's range excludes the default's)."""
    data = make_dataset(tmp_path / "DATA")
    chosen = verified("o/a", REV_A).model_copy(update={"base_image": "bullseye-py3.9"})
    failed = RepoVerification(
        repository="o/b",
        revision=REV_B,
        status="unverified",
        reason="setup exited with 1",
        base_image="trixie-py3.13",
    )
    write_sidecar(data / SIDECAR_NAME, Sidecar(repositories={"o/a": chosen, "o/b": failed}))
    cases = {case.id: case for case in load_dataset(data).cases}
    a, b = cases["o/a/error_readme_1"], cases["o/b/error_readme_1"]
    assert a.spec.base_image == "bullseye-py3.9"
    assert a.reference is not None and a.reference.verified
    assert b.spec.base_image == "trixie-py3.13"
    # A record made at another revision says nothing of this checkout's Python.
    stale = failed.model_copy(update={"revision": REV_A})
    write_sidecar(data / SIDECAR_NAME, Sidecar(repositories={"o/b": stale}))
    again = {case.id: case for case in load_dataset(data).cases}
    assert again["o/b/error_readme_1"].spec.base_image == "bookworm-py3.11"
    # Without a sidecar the default.
    assert all(
        case.spec.base_image == "bookworm-py3.11"
        for case in load_dataset(data, verification=tmp_path / "missing.json").cases
    )


def test_verify_lists_every_repository_folder_also_one_without_instances(tmp_path: Path) -> None:
    from pytest_enconda.verify import repositories_of

    root = make_dataset(tmp_path / "d")
    # EnConda-Bench's dev split has such a folder: its own README, no error_readme_N instance.
    with (root / "repo_info.jsonl").open("a") as info:
        info.write(json.dumps({"repository": "o/bare", "revision": "c" * 40}) + "\n")
        info.write(json.dumps({"repository": "o/nofolder", "revision": "d" * 40}) + "\n")
    (root / "instances" / "error_gen_o_bare").mkdir()
    (root / "instances" / "error_gen_o_bare" / "README.rst").write_text("bare\n")
    load = load_dataset(root)
    assert {case.spec.repository.url.rsplit("/", 1)[-1] for case in load.cases} == {"a", "b"}
    assert load.repositories == {"o/a": REV_A, "o/b": REV_B, "o/bare": "c" * 40}
    assert repositories_of(root) == [("o/a", REV_A), ("o/b", REV_B), ("o/bare", "c" * 40)]
    # Given one repository folder, only that one is listed (repo_info.jsonl above names others).
    assert repositories_of(root / "instances" / "error_gen_o_bare") == [("o/bare", "c" * 40)]
