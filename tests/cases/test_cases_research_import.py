"""ResearchEnvBench's manifest and applicability table as research cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_enconda.cases.research_import import README_FROM_REPOSITORY, load_research_dataset
from pytest_enconda.discovery import is_research_dataset_dir

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "researchenvbench"
HEADER = (
    "repo_slug,repo,git_link,commit,supports_cpu,supports_single_gpu,supports_multi_gpu,"
    "cpu_skip_reason,single_gpu_skip_reason,multi_gpu_skip_reason,category"
)
SHA_A = "4f3cd1504d0afa344fd322df0c4ac3e9eec7a129"
SHA_B = "e5a2732d3ea2cddc081d7bfd708fc0bf09f812f1"


def manifest(*repos: tuple[str, str]) -> dict:
    return {
        "schema_version": 1,
        "generated_at_utc": "2026-01-15T08:15:38Z",
        "source": {},
        "defaults": {},
        "repos": [
            {
                "row_index": index,
                "repo_url": f"https://github.com/{name}",
                "repo_full_name": name,
                "commit_sha": sha,
                "repo_id": name.replace("/", "__"),
                "hardware_bucket": "auto",
            }
            for index, (name, sha) in enumerate(repos)
        ],
    }


def write(root: Path, data: dict, rows: list[str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "manifest.json").write_text(json.dumps(data))
    (root / "scripts_repos_test_categories.csv").write_text("\n".join([HEADER, *rows]) + "\n")
    return root


ROWS = [
    f"a@one,a/one,https://github.com/a/one,{SHA_A},yes,yes,yes,not_applicable,unknown,unknown,"
    "3_single_gpu+multi_gpu",
    f"b@two,b/two,https://github.com/b/two,{SHA_B},no,yes,no,repo_not_supported,unknown,"
    "not_applicable,1_single_gpu_only",
]


def test_cases_at_their_commits_with_applicability(tmp_path: Path) -> None:
    root = write(tmp_path / "reb", manifest(("a/one", SHA_A), ("b/two", SHA_B)), ROWS)
    assert is_research_dataset_dir(root)

    loaded = load_research_dataset(root)

    assert loaded.problems == [] and loaded.notes == []
    one, two = loaded.cases
    assert (one.id, two.id) == ("a/one", "b/two")
    assert one.spec.suite == "research"
    assert one.spec.repository.kind == "url"
    assert one.spec.repository.url == "https://github.com/a/one"
    assert one.spec.repository.revision == SHA_A
    research = one.spec.research
    assert research is not None
    assert (research.supports_cpu, research.supports_single_gpu, research.supports_multi_gpu) == (
        True,
        True,
        True,
    )
    # A supported stage's "unknown" says nothing: no skip reason.
    assert research.skip_reasons == {}
    assert research.entry_point is None and research.ddp_entry_point is None
    assert README_FROM_REPOSITORY in one.spec.tags and one.readme_text == ""
    assert "3_single_gpu+multi_gpu" in one.keywords()

    research = two.spec.research
    assert research is not None
    assert (research.supports_cpu, research.supports_multi_gpu) == (False, False)
    assert research.skip_reasons == {
        "C1": "ResearchEnvBench: the repository does not support it "
        "(cpu_skip_reason=repo_not_supported)",
        "C4": "ResearchEnvBench: not applicable (multi_gpu_skip_reason=not_applicable)",
    }


def test_problems_name_file_and_field(tmp_path: Path) -> None:
    rows = [
        *ROWS,
        f"c@x,c/three,https://github.com/c/three,{SHA_A},maybe,yes,yes,,,,",
        f"d@x,d/four,https://github.com/d/four,{SHA_A},yes,yes,yes,,,,",
    ]
    data = manifest(("a/one", SHA_B), ("b/two", SHA_B), ("c/three", SHA_A), ("e/five", SHA_A))
    data["repos"].append({"repo_full_name": "not a name", "repo_url": "x", "commit_sha": "zz"})
    root = write(tmp_path / "reb", data, rows)

    loaded = load_research_dataset(root)

    assert [case.id for case in loaded.cases] == ["b/two", "d/four"]
    problems = [(Path(p.file.split(":")[0]).name, p.reason) for p in loaded.problems]
    text = "\n".join(f"{file}: {reason}" for file, reason in problems)
    assert "supports_cpu: Input should be 'yes' or 'no' (got 'maybe')" in text
    assert "repo_full_name: String should match pattern" in text
    assert f"a/one: commit {SHA_B} in manifest.json but {SHA_A}" in text
    assert "c/three has no row in scripts_repos_test_categories.csv" in text
    assert "e/five has no row" in text
    assert [n.reason for n in loaded.notes] == ["d/four is not in manifest.json: table's commit"]


def test_missing_files_and_bad_json(tmp_path: Path) -> None:
    assert not is_research_dataset_dir(tmp_path)
    loaded = load_research_dataset(tmp_path)
    assert loaded.cases == []
    assert {Path(p.file).name for p in loaded.problems} == {
        "manifest.json",
        "scripts_repos_test_categories.csv",
    }
    (tmp_path / "manifest.json").write_text("{")
    (tmp_path / "scripts_repos_test_categories.csv").write_text("repo,commit\n")
    reasons = [p.reason for p in load_research_dataset(tmp_path).problems]
    assert any(reason.startswith("expected a JSON object") for reason in reasons)
    assert any("missing ['cpu_skip_reason'" in reason for reason in reasons)


@pytest.mark.shared_data
def test_shared_researchenvbench() -> None:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} absent (shared data not mounted)")
    assert is_research_dataset_dir(SHARED)
    loaded = load_research_dataset(SHARED)
    assert loaded.problems == [] and loaded.notes == []
    assert len(loaded.cases) == 44
    research = [case.spec.research for case in loaded.cases]
    assert sum(r.supports_cpu for r in research if r) == 29
    assert sum(r.supports_single_gpu for r in research if r) == 43
    assert sum(r.supports_multi_gpu for r in research if r) == 32
    assert all(len(case.spec.repository.revision or "") == 40 for case in loaded.cases)
    assert len({case.id for case in loaded.cases}) == 44
