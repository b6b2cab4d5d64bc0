"""The plugin on the real EnConda-Bench instances in ../shared/data (skipped when absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "enconda-dev"
pytestmark = [
    pytest.mark.shared_data,
    pytest.mark.skipif(not DATA.is_dir(), reason=f"reference data not found at {DATA}"),
]


def _golden_files() -> list[tuple[Path, dict]]:
    out = []
    for path in sorted(DATA.glob("instances/*/*/*.json")):
        if path.name.lower() == "readme.json":
            out.append((path, json.loads(path.read_text(encoding="utf-8"))))
    return out


def _collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line]


def test_k_selects_exactly_the_instances_with_that_type(pytester: pytest.Pytester) -> None:
    from pytest_enconda.cases.enconda_import import load_dataset

    cases = load_dataset(DATA).cases
    result = pytester.runpytest("--cases", str(DATA), "--co", "-q", "-k", "E4 and execution")
    selected = {line.split("::")[1] for line in _collected(result)}
    expected = {case.id for case in cases if "E4" in case.error_types}
    assert selected == expected
    # The ids are checked against the golden files themselves, not only the importer.
    raw = sum(
        any(error.get("error_type") == "E4" for error in golden["errors"])
        for _path, golden in _golden_files()
    )
    assert len(expected) == raw > 600


@pytest.mark.slow
def test_golden_replay_through_the_plugin_scores_one(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """Golden answers written in EnConda-Bench's inference layout, replayed: every score 1.0."""
    results = tmp_path / "results"
    repos = {
        line["repository"].replace("/", "_")
        for line in map(json.loads, (DATA / "repo_info.jsonl").read_text().splitlines())
    }
    written = 0
    for path, golden in _golden_files():
        instance = path.parent.name
        repo = path.parent.parent.name.removeprefix("error_gen_")
        assert repo in repos
        folder = results / f"{repo}_{instance}"
        folder.mkdir(parents=True)
        errors = [
            {
                "error_type": e["error_type"],
                "error_description": e["error_description"],
                "fix_answer": e["golden_answer"],
            }
            for e in golden["errors"]
        ]
        payload = {"repo_name": f"{repo}_{instance}", "readme_name": instance, "errors": errors}
        (folder / f"{instance}_errors.json").write_text(json.dumps(payload))
        (folder / f"{instance}_setup.sh").write_text("true\n")
        written += 1
    run = tmp_path / "run"
    result = pytester.runpytest_subprocess(
        "--cases",
        str(DATA),
        "--agent",
        "replay",
        "--predictions",
        str(results),
        "-k",
        "not execution",
        "--run-dir",
        str(run),
        "-q",
        "-p",
        "no:cacheprovider",
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes.get("errors", 0) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["cases"] == written
    for definition in ("paper", "per_error"):
        for key in ("type_precision", "type_recall", "type_f1", "description_acc", "fix_acc"):
            assert summary[definition][key] == 1.0, (definition, key)
