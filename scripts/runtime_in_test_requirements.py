"""Which verified references' test requirements name the project's own runtime requirements.

    PYTHONPATH=$PWD python scripts/runtime_in_test_requirements.py SIDECAR --repo-mirror MIRROR

For each verified record of a verification sidecar whose repository has a bare mirror
(``MIRROR/OWNER+NAME/repo``, as the ``fetch`` tool lays them out), the packaging files at the
record's revision are read (``repo.runtime_requirements``, nothing run) and the record's test
requirements are filtered as the graded test step filters them. Prints, as Markdown, how many
records the step now installs less for, and what it leaves to the setup in each.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from pytest_enconda.cases.sidecar import RepoVerification, read_sidecar
from pytest_enconda.repo.runtime_requirements import (
    graded_requirements,
    runtime_names,
    runtime_requirements,
)
from pytest_enconda.sandbox.recipes import BASE_RECIPES

# The files runtime_requirements reads: packaging metadata and requirement files, anywhere.
_PACKAGING = re.compile(r"^(?:[^/]+\.py|.+\.(?:txt|in|toml|cfg))$")


def left_to_setup(record: RepoVerification, git_dir: Path) -> list[str] | None:
    """The record's test requirements the graded step leaves to the setup; None when the mirror
    lacks the revision."""
    git = ["git", "--git-dir", str(git_dir)]
    listed = subprocess.run(
        [*git, "ls-tree", "-r", "--name-only", "--", record.revision],
        capture_output=True,
        text=True,
        check=False,
    )
    if listed.returncode != 0:
        return None
    paths = [path for path in listed.stdout.splitlines() if _PACKAGING.match(path)]
    recipe = BASE_RECIPES.get(record.base_image)
    python = recipe.python if recipe is not None else "3.11"
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            [*git, "archive", record.revision, "--", *paths], capture_output=True, check=False
        )
        if paths and archive.returncode == 0:
            subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        else:
            # A snapshot lacking some files' contents: each file that is there, one by one.
            for path in paths:
                shown = subprocess.run(
                    [*git, "show", f"{record.revision}:{path}"], capture_output=True, check=False
                )
                if shown.returncode == 0:
                    (Path(tmp) / path).parent.mkdir(parents=True, exist_ok=True)
                    (Path(tmp) / path).write_bytes(shown.stdout)
        names = runtime_names(runtime_requirements(Path(tmp)), python)
    return graded_requirements(record.test_requirements, names)[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="runtime requirements among test requirements")
    parser.add_argument("sidecar", type=Path)
    parser.add_argument("--repo-mirror", type=Path, required=True)
    args = parser.parse_args(argv)
    sidecar = read_sidecar(args.sidecar)
    measured: dict[str, tuple[int, list[str]]] = {}
    missing = 0
    for name, record in sorted(sidecar.repositories.items()):
        git_dir = args.repo_mirror / name.replace("/", "+") / "repo"
        if not record.verified:
            continue
        left = left_to_setup(record, git_dir) if git_dir.is_dir() else None
        if left is None:
            missing += 1
            continue
        measured[name] = (len(record.test_requirements), left)
    changed = {name: row for name, row in measured.items() if row[1]}
    print(
        f"{len(changed)} of {len(measured)} verified records list a runtime requirement of the "
        f"project (or the checkout) among their test requirements; {missing} verified records "
        "had no mirror at their revision\n"
    )
    print("| repository | left to the setup | of |\n| --- | --- | ---: |")
    for name, (total, left) in changed.items():
        print(f"| {name} | {', '.join(f'`{spec}`' for spec in left)} | {total} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
