"""Datasets given to ``--cases``: EnConda-Bench's instances and ResearchEnvBench's metadata, with
FIFOs, devices, links out of the dataset, oversized and deeply nested files. Each is refused
naming the file, costs only its own instance, never hangs and never reads the host file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_enconda.cases.enconda_import import load_dataset
from pytest_enconda.cases.research_import import (
    CATEGORIES_FILE,
    MANIFEST_FILE,
    load_research_dataset,
)
from pytest_enconda.discovery import is_research_dataset_dir

REVISION = "0123456789abcdef0123456789abcdef01234567"
GOLDEN = {
    "level": "level1",
    "errors": [
        {
            "error_type": "E1",
            "error_description": "d",
            "correction_candidates": [],
            "golden_answer": "g",
        }
    ],
}
SPECIALS = ["fifo", "link to /dev/zero", "link to a host file", "huge", "deep"]


def make_special(path: Path, kind: str, canary: Path) -> None:
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif kind == "link to a host file":
        path.symlink_to(canary)
    elif kind == "huge":
        with path.open("wb") as handle:
            handle.truncate(9 * 1024 * 1024)  # sparse, past the 8 MiB bound
    else:
        path.write_bytes(b"[" * 200_000 + b"]" * 200_000)


def enconda(root: Path) -> Path:
    """Two instances of o/r: ``..._1`` is the one made hostile, ``..._2`` stays good."""
    (root / "instances").mkdir(parents=True)
    (root / "repo_info.jsonl").write_text(json.dumps({"repository": "o/r", "revision": REVISION}))
    for number in (1, 2):
        folder = root / "instances" / "error_gen_o_r" / f"o_r_error_readme_{number}"
        folder.mkdir(parents=True)
        (folder / "README.md").write_text("# T\n\n```bash\npip install x\n```\n")
        (folder / "README.json").write_text(json.dumps(GOLDEN))
    return root


@pytest.mark.parametrize("special", SPECIALS)
@pytest.mark.parametrize("name", ["README.md", "README.json"])
def test_a_hostile_instance_file_costs_only_its_instance(
    attempt, tmp_path: Path, canary: Path, name: str, special: str
) -> None:
    root = enconda(tmp_path / "d")
    bad = root / "instances" / "error_gen_o_r" / "o_r_error_readme_1" / name
    make_special(bad, special, canary)
    load, _ = attempt("EnConda-Bench dataset", lambda: load_dataset(root), ())
    if special == "deep" and name == "README.md":  # brackets are a README's text: accepted
        assert len(load.cases) == 2
        return
    assert [case.case_dir.name for case in load.cases] == ["o_r_error_readme_2"]
    assert any(str(bad) in problem.file for problem in load.problems), load.problems


@pytest.mark.parametrize("special", SPECIALS)
def test_a_hostile_repo_info_is_named(attempt, tmp_path: Path, canary: Path, special: str) -> None:
    root = enconda(tmp_path / "d")
    make_special(root / "repo_info.jsonl", special, canary)
    load, _ = attempt("EnConda-Bench dataset", lambda: load_dataset(root), ())
    assert load.cases == [] or special == "deep"
    assert any("repo_info.jsonl" in problem.file for problem in load.problems), load.problems


HEADER = (
    "repo_slug,repo,git_link,commit,supports_cpu,supports_single_gpu,supports_multi_gpu,"
    "cpu_skip_reason,single_gpu_skip_reason,multi_gpu_skip_reason,category"
)
SHA = "4f3cd1504d0afa344fd322df0c4ac3e9eec7a129"


def research(root: Path) -> Path:
    root.mkdir(parents=True)
    repo = {"repo_url": "https://github.com/a/one", "repo_full_name": "a/one", "commit_sha": SHA}
    (root / MANIFEST_FILE).write_text(json.dumps({"schema_version": 1, "repos": [repo]}))
    row = f"a@one,a/one,https://github.com/a/one,{SHA},yes,yes,no,,,unknown,x"
    (root / CATEGORIES_FILE).write_text(f"{HEADER}\n{row}\n")
    return root


@pytest.mark.parametrize("special", [*SPECIALS, "huge field", "link inside"])
@pytest.mark.parametrize("name", [MANIFEST_FILE, CATEGORIES_FILE])
def test_hostile_research_metadata_is_named(
    attempt, tmp_path: Path, canary: Path, name: str, special: str
) -> None:
    root = research(tmp_path / "reb")
    path = root / name
    if special == "huge field":
        path.write_text(f"{HEADER}\n" + '"' + "x" * 200_000 + '"\n')
    elif special == "link inside":
        path.rename(root / f"real-{name}")
        path.symlink_to(f"real-{name}")
    else:
        make_special(path, special, canary)
    assert is_research_dataset_dir(root)
    load, _ = attempt("ResearchEnvBench dataset", lambda: load_research_dataset(root), ())
    if special == "link inside":
        assert [case.id for case in load.cases] == ["a/one"]
        return
    assert load.cases == []
    assert any(str(path) in problem.file for problem in load.problems), load.problems


def test_an_instance_folder_of_240_characters_gets_a_short_artifact_folder(
    attempt, tmp_path: Path
) -> None:
    from pytest_enconda.records import CaseDir

    root = enconda(tmp_path / "d")
    long = root / "instances" / "error_gen_o_r" / ("o_r_error_readme_" + "9" * 223)
    (root / "instances" / "error_gen_o_r" / "o_r_error_readme_2").rename(long)
    assert len(long.name) == 240
    load, _ = attempt("EnConda-Bench dataset", lambda: load_dataset(root), ())
    assert len(load.cases) == 2
    for case in load.cases:
        folder = CaseDir(tmp_path / "run", case.id).root
        folder.mkdir(parents=True)  # the file system takes the name
        assert len(folder.name.encode()) <= 255
