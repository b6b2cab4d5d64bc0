"""ResearchEnvBench's released metadata given with ``--cases``: one case per repository, at its
pinned commit from ``--repo-mirror``, the agent reading the repository's own README.

Real Docker: the readme agent's script runs in the task image, C0 scans the frozen result.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.gitutil import git

pytest_plugins = ["pytester"]

HEADER = (
    "repo_slug,repo,git_link,commit,supports_cpu,supports_single_gpu,supports_multi_gpu,"
    "cpu_skip_reason,single_gpu_skip_reason,multi_gpu_skip_reason,category"
)
README = """# Tiny research code

Install it:

```bash
pip install -e .
```
"""


def make_repository(path: Path) -> str:
    """A one-module repository whose README installs it; returns the pinned commit."""
    (path / "tiny").mkdir(parents=True)
    (path / "tiny" / "__init__.py").write_text("import json\nimport tomllib\n")
    (path / "tiny" / "train.py").write_text("import numpy_is_not_installed\n")
    (path / "pyproject.toml").write_text(
        '[project]\nname = "tiny"\nversion = "0.1"\n[build-system]\n'
        'requires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
    )
    (path / "README.md").write_text(README)
    git(path, "init", "-q")
    git(path, "add", ".")
    git(path, "commit", "-qm", "one")
    return git(path, "rev-parse", "HEAD")


def make_dataset(root: Path, commits: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    repos = [
        {"repo_url": f"https://github.com/{name}", "repo_full_name": name, "commit_sha": sha}
        for name, sha in commits.items()
    ]
    (root / "manifest.json").write_text(json.dumps({"schema_version": 1, "repos": repos}))
    rows = [
        f"{name.replace('/', '@')},{name},https://github.com/{name},{sha},yes,no,no,"
        "not_applicable,repo_not_supported,repo_not_supported,1_cpu_only"
        for name, sha in commits.items()
    ]
    (root / "scripts_repos_test_categories.csv").write_text("\n".join([HEADER, *rows]) + "\n")
    return root


def rows(run: Path) -> dict[tuple[str, str], dict]:
    lines = (run / "results.jsonl").read_text().splitlines()
    return {(row["case"], row["stage"]): row for row in map(json.loads, lines)}


def test_unavailable_revision_is_a_short_harness_error(pytester: pytest.Pytester) -> None:
    mirror = pytester.path / "mirror"
    make_repository(mirror / "lab_tiny")
    data = make_dataset(pytester.path / "reb", {"lab/tiny": "f" * 40})
    run = pytester.path / "run"
    result = pytester.runpytest(
        "--cases", str(data), "--agent=readme", "--repo-mirror", str(mirror),
        "--run-dir", str(run), "-k", "C0 or C1",
    )  # fmt: skip
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*repository unavailable*lab/tiny@ffff*--repo-mirror DIR*"])
    # The harness's message stands alone: no traceback through the session's internals.
    result.stdout.no_fnmatch_line("*session.py:*")
    pyramid = json.loads((run / "summary.json").read_text())["pyramid"]
    # Harness errors leave the denominator: the agent is not blamed for a missing repository.
    assert (pyramid["C1"]["error"], pyramid["C1"]["applicable"]) == (1, 0)
    assert pyramid["C0"]["errors"] == 1


@pytest.mark.slow
def test_research_dataset_runs_on_the_repositorys_own_readme(pytester: pytest.Pytester) -> None:
    mirror = pytester.path / "mirror"
    commit = make_repository(mirror / "lab_tiny")
    data = make_dataset(pytester.path / "reb", {"lab/tiny": commit})
    run = pytester.path / "run"
    result = pytester.runpytest(
        "--cases", str(data), "--agent=readme", "--repo-mirror", str(mirror),
        "--run-dir", str(run), "-k", "C0 or C2 or C3",
    )  # fmt: skip
    # C0 fails (train.py imports a module nothing installs); no GPU stage applies.
    result.assert_outcomes(failed=1, skipped=2)
    script = (run / "cases" / "lab+2ftiny" / "agent" / "setup.sh").read_text()
    assert "pip install -e ." in script  # the repository's README reached the agent
    found = rows(run)
    c0 = found[("lab/tiny", "C0")]
    assert c0["outcome"] == "failed"
    assert "numpy_is_not_installed" in c0["message"]
    assert "not applicable" in found[("lab/tiny", "C3")]["message"]
    efficiency = json.loads((run / "summary.json").read_text())["pyramid"]["efficiency"]
    # The readme agent answers at once; the environment is ready only after its script ran.
    assert efficiency["time_to_ready_s"]["mean"] > 1.0
