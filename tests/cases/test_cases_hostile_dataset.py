"""Hostile and malformed EnConda-Bench datasets: each bad instance costs only itself.

A dataset is data people download and run; nothing in it may put a host file into a README the
agent sees, or a folder outside the mirror into an image. Everything here runs without Docker.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_enconda.cases.enconda_import import load_dataset
from pytest_enconda.sandbox.repo import mirror_candidates

REVISION = "0123456789abcdef0123456789abcdef01234567"
GOLDEN = {
    "level": "level1",
    "errors": [
        {
            "error_type": "E1",
            "error_description": "d",
            "correction_candidates": ["g"],
            "golden_answer": "g",
        }
    ],
}
SECRET = "root:x:0:0:secret host file\n"


def dataset(tmp_path: Path, *repositories: str, instances: int = 2) -> Path:
    """``tmp_path/d``: each repository with ``instances`` good instances; a host file beside."""
    root = tmp_path / "d"
    root.mkdir()
    lines = [json.dumps({"repository": r, "revision": REVISION}) for r in repositories]
    (root / "repo_info.jsonl").write_text("\n".join(lines) + "\n")
    for repository in repositories:
        key = repository.replace("/", "_")
        for number in range(1, instances + 1):
            folder = root / "instances" / f"error_gen_{key}" / f"{key}_error_readme_{number}"
            folder.mkdir(parents=True)
            (folder / "README.md").write_text("# T\n\n```bash\npip install x\n```\n")
            (folder / "README.json").write_text(json.dumps(GOLDEN))
    (tmp_path / "host").mkdir()
    (tmp_path / "host" / "passwd").write_text(SECRET)
    return root


def instance(root: Path, key: str, number: int) -> Path:
    return root / "instances" / f"error_gen_{key}" / f"{key}_error_readme_{number}"


def loaded_folders(root: Path) -> set[str]:
    return {case.case_dir.name for case in load_dataset(root).cases}


# ----------------------------------------------------------------------------- 8.2: paths


def test_readme_symlink_to_a_host_file_is_refused(tmp_path: Path) -> None:
    root = dataset(tmp_path, "o/r")
    bad = instance(root, "o_r", 1)
    (bad / "README.md").unlink()
    (bad / "README.md").symlink_to(tmp_path / "host" / "passwd")
    loaded = load_dataset(root)
    assert [case.case_dir for case in loaded.cases] == [instance(root, "o_r", 2)]
    assert all(SECRET not in case.readme_text for case in loaded.cases)
    (problem,) = loaded.problems
    assert problem.file == str(bad / "README.md")
    assert problem.reason.startswith(f"README: resolves to {tmp_path / 'host' / 'passwd'}, ")
    assert "outside the dataset" in problem.reason


def test_golden_symlink_out_of_the_dataset_is_refused(tmp_path: Path) -> None:
    root = dataset(tmp_path, "o/r")
    bad = instance(root, "o_r", 2)
    (tmp_path / "host" / "g.json").write_text(json.dumps(GOLDEN))
    (bad / "README.json").unlink()
    (bad / "README.json").symlink_to(tmp_path / "host" / "g.json")
    loaded = load_dataset(root)
    assert [case.case_dir for case in loaded.cases] == [instance(root, "o_r", 1)]
    (problem,) = loaded.problems
    assert problem.file == str(bad / "README.json")
    assert problem.reason.startswith(f"golden file: resolves to {tmp_path / 'host' / 'g.json'}")


def test_instance_folder_symlinked_out_of_the_dataset_is_refused(tmp_path: Path) -> None:
    root = dataset(tmp_path, "o/r")
    outside = tmp_path / "host" / "inst"
    outside.mkdir()
    (outside / "README.md").symlink_to(tmp_path / "host" / "passwd")
    (outside / "README.json").write_text(json.dumps(GOLDEN))
    link = root / "instances" / "error_gen_o_r" / "o_r_error_readme_3"
    link.symlink_to(outside, target_is_directory=True)
    loaded = load_dataset(root)
    assert {case.case_dir.name for case in loaded.cases} == {
        "o_r_error_readme_1",
        "o_r_error_readme_2",
    }
    (problem,) = loaded.problems
    assert (problem.file, problem.reason.split(",")[0]) == (
        str(link),
        f"instance folder: resolves to {outside}",
    )


def test_symlinks_that_stay_inside_the_dataset_load(tmp_path: Path) -> None:
    root = dataset(tmp_path, "o/r")
    first = instance(root, "o_r", 1)
    (root / "shared.md").write_text("# shared\n")
    (first / "README.md").unlink()
    (first / "README.md").symlink_to(root / "shared.md")
    loaded = load_dataset(root)
    assert loaded.problems == []
    assert next(case.readme_text for case in loaded.cases) == "# shared\n"


def test_repository_folder_symlinked_out_of_the_dataset_is_refused(tmp_path: Path) -> None:
    root = dataset(tmp_path, "o/r", "p/q")
    outside = tmp_path / "host" / "error_gen_p_q"
    (root / "instances" / "error_gen_p_q").rename(outside)
    (root / "instances" / "error_gen_p_q").symlink_to(outside, target_is_directory=True)
    loaded = load_dataset(root)
    assert {case.case_dir.name for case in loaded.cases} == {
        "o_r_error_readme_1",
        "o_r_error_readme_2",
    }
    (problem,) = loaded.problems
    assert problem.reason.startswith(f"repository folder: resolves to {outside}")


@pytest.mark.parametrize(
    "repository",
    ["../..", "./x", "o/..", "o/r/s", "/etc", "o/r name", "o/r;rm", "", None, 3],
)
def test_repository_names_must_be_owner_and_name(tmp_path: Path, repository: object) -> None:
    root = dataset(tmp_path, "o/r")
    with (root / "repo_info.jsonl").open("a") as handle:
        handle.write(json.dumps({"repository": repository, "revision": REVISION}) + "\n")
    loaded = load_dataset(root)
    assert len(loaded.cases) == 2
    (problem,) = loaded.problems
    assert problem.file == f"{root / 'repo_info.jsonl'}:2"
    assert problem.reason.startswith("repository: expected 'owner/name'")
    assert problem.reason.endswith(f"got {repository!r}")


def test_dot_dot_repository_folder_is_never_matched(tmp_path: Path) -> None:
    """``{"repository": "../.."}`` and a folder ``error_gen_.._..``: a problem, no case."""
    root = dataset(tmp_path, "o/r")
    with (root / "repo_info.jsonl").open("a") as handle:
        handle.write(json.dumps({"repository": "../..", "revision": REVISION}) + "\n")
    folder = root / "instances" / "error_gen_.._.." / ".._.._error_readme_1"
    folder.mkdir(parents=True)
    (folder / "README.md").write_text("x")
    (folder / "README.json").write_text(json.dumps(GOLDEN))
    loaded = load_dataset(root)
    assert {case.id for case in loaded.cases} == {"o/r/error_readme_1", "o/r/error_readme_2"}
    reasons = {problem.reason.split(":")[0] for problem in loaded.problems}
    assert reasons == {"repository", "no revision"}


@pytest.mark.parametrize("revision", ["--upload-pack=touch /tmp/x", "-x", "a b", "", 7])
def test_revisions_that_git_would_read_as_options_are_refused(
    tmp_path: Path, revision: object
) -> None:
    root = dataset(tmp_path, "o/r")
    (root / "repo_info.jsonl").write_text(
        json.dumps({"repository": "o/r", "revision": revision}) + "\n"
    )
    loaded = load_dataset(root)
    assert loaded.cases == []
    assert loaded.problems[0].reason.startswith("revision: expected a commit")


def test_repo_info_symlinked_to_a_host_file_is_not_read(tmp_path: Path) -> None:
    root = dataset(tmp_path, "o/r")
    (tmp_path / "host" / "repo_info.jsonl").write_text(
        json.dumps({"repository": "o/r", "revision": REVISION}) + "\n"
    )
    (root / "repo_info.jsonl").unlink()
    (root / "repo_info.jsonl").symlink_to(tmp_path / "host" / "repo_info.jsonl")
    loaded = load_dataset(root)
    assert loaded.cases == []
    assert loaded.problems[0].reason.startswith("repo_info.jsonl: resolves to ")


def test_original_readme_symlink_is_refused_and_not_used(tmp_path: Path) -> None:
    root = dataset(tmp_path, "o/r")
    link = root / "instances" / "error_gen_o_r" / "README.rst"
    link.symlink_to(tmp_path / "host" / "passwd")
    loaded = load_dataset(root)
    assert [case.original_readme_text for case in loaded.cases] == [None, None]
    (problem,) = loaded.problems
    assert (problem.file, problem.reason.split(",")[0]) == (
        str(link),
        f"original README: resolves to {tmp_path / 'host' / 'passwd'}",
    )


@pytest.mark.parametrize(
    "repository", ["../..", "../../etc", "https://github.com/../..", "o/../../..", ".."]
)
def test_mirror_candidates_stay_inside_the_mirror(tmp_path: Path, repository: str) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    url = repository if "://" in repository else f"https://github.com/{repository}"
    for candidate in mirror_candidates(mirror, url):
        normal = Path(os.path.normpath(candidate))
        assert mirror in normal.parents, candidate


def test_mirror_candidates_of_a_good_name_are_unchanged(tmp_path: Path) -> None:
    names = [
        p.relative_to(tmp_path).as_posix()
        for p in mirror_candidates(tmp_path, "https://github.com/o-1/r.x")
    ]
    assert names == [
        "o-1/r.x",
        "o-1/r.x.git",
        "o-1_r.x",
        "o-1_r.x.git",
        "r.x",
        "r.x.git",
        # The fetch tool's snapshot layout: a bare git directory under owner+name/.
        "o-1+r.x/repo",
        "o-1+r.x",
    ]


# ----------------------------------------------------------------------------- 8.3: bytes


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'{"level": "caf\xe9", "errors": []}', "not UTF-8 (byte 0xe9 at offset 14)"),
        (json.dumps(GOLDEN).encode("utf-16"), "UTF-16 text"),
        (b"[" * 100_000 + b"]" * 100_000, "not valid JSON: nested too deeply"),
        (b'{"errors": ' + b"[" * 100_000, "not valid JSON: nested too deeply"),
        (b"\x00\x01binary\xff", "not UTF-8"),
    ],
    ids=["stray-byte", "utf-16", "deep", "deep-truncated", "binary"],
)
def test_unreadable_golden_costs_only_its_instance(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    root = dataset(tmp_path, "o/r", instances=3)
    bad = instance(root, "o_r", 2) / "README.json"
    bad.write_bytes(content)
    loaded = load_dataset(root)
    assert {case.case_dir.name for case in loaded.cases} == {
        "o_r_error_readme_1",
        "o_r_error_readme_3",
    }
    (problem,) = loaded.problems
    assert problem.file == str(bad)
    assert problem.reason.startswith(reason), problem.reason


def test_utf8_bom_is_accepted_in_every_file(tmp_path: Path) -> None:
    root = dataset(tmp_path, "o/r")
    bom = b"\xef\xbb\xbf"
    info = root / "repo_info.jsonl"
    info.write_bytes(bom + info.read_bytes())
    first = instance(root, "o_r", 1)
    (first / "README.json").write_bytes(bom + json.dumps(GOLDEN).encode())
    (first / "README.md").write_bytes(bom + b"# T\n")
    (root / "instances" / "error_gen_o_r" / "README.md").write_bytes(bom + b"# original\n")
    loaded = load_dataset(root)
    assert loaded.problems == []
    case = next(case for case in loaded.cases if case.case_dir == first)
    assert (case.readme_text, case.original_readme_text) == ("# T\n", "# original\n")
    assert case.level == 1


def test_utf16_readme_is_a_problem_a_stray_byte_a_note(tmp_path: Path) -> None:
    root = dataset(tmp_path, "o/r", instances=3)
    (instance(root, "o_r", 1) / "README.md").write_bytes("# T\n".encode("utf-16"))
    (instance(root, "o_r", 2) / "README.md").write_bytes(b"# caf\xe9\n")
    loaded = load_dataset(root)
    assert {case.case_dir.name: case.readme_text for case in loaded.cases} == {
        "o_r_error_readme_2": "# caf\ufffd\n",
        "o_r_error_readme_3": "# T\n\n```bash\npip install x\n```\n",
    }
    (problem,) = loaded.problems
    assert problem.file == str(instance(root, "o_r", 1) / "README.md")
    assert problem.reason.startswith("UTF-16 text")
    assert any(note.reason.startswith("not UTF-8 (byte 0xe9") for note in loaded.notes)


def test_deep_repo_info_line_costs_only_that_line(tmp_path: Path) -> None:
    root = dataset(tmp_path, "o/r")
    with (root / "repo_info.jsonl").open("a") as handle:
        handle.write("[" * 100_000 + "\n")
    loaded = load_dataset(root)
    assert len(loaded.cases) == 2
    (problem,) = loaded.problems
    assert (problem.file, problem.reason) == (
        f"{root / 'repo_info.jsonl'}:2",
        "not valid JSON: nested too deeply",
    )
