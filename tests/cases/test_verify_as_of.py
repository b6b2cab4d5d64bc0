"""verify's second recipe, with the dependencies of the revision's day: the commit time read from
the snapshot, the strategy tried after the plain recipe, the test step held to the same day (in
verify and in grading), and pip's upload cutoff working for real in a box."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dataset_factory import one_instance_dataset
from gitutil import git
from recipebox import installed_version, project, set_up
from verifyfake import fake_context

from pytest_enconda.cases.models import RepoSource
from pytest_enconda.cases.sidecar import RepoVerification
from pytest_enconda.probing.junit import run_tests_command
from pytest_enconda.sandbox.repo import materialize
from pytest_enconda.verify import ladder
from pytest_enconda.verify.recipes import AS_OF, as_of_script, recipe_script

WHEN = "2019-05-01T10:00:00Z"


def _snapshot(tmp_path: Path) -> tuple[Path, str]:
    """A bare snapshot (as ``fetch`` leaves one) of a one-commit repository made at WHEN."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "--quiet", "--initial-branch=main")
    (origin / "setup.py").write_text("from setuptools import setup\nsetup(name='mini')\n")
    git(origin, "add", "-A")
    with pytest.MonkeyPatch.context() as patch:  # git() passes the environment on
        patch.setenv("GIT_COMMITTER_DATE", "2019-05-01T12:00:00+02:00")
        git(origin, "commit", "--quiet", "-m", "one")
    snapshot = tmp_path / "o+n" / "repo"
    git(tmp_path, "clone", "--quiet", "--bare", str(origin), str(snapshot))
    return snapshot, git(origin, "rev-parse", "HEAD")


def _committed(source: RepoSource, tmp_path: Path, mirror: Path, dest: str) -> list[str]:
    committed: list[str] = []
    materialize(
        source,
        tmp_path,
        tmp_path / dest,
        mirror_dir=mirror,
        cache_dir=tmp_path / "c",
        committed=committed,
    )
    return committed


def test_the_revision_date_is_the_commit_time_in_utc(tmp_path: Path) -> None:
    snapshot, commit = _snapshot(tmp_path)
    source = RepoSource(kind="url", url="https://github.com/o/n", revision=commit)
    assert _committed(source, tmp_path, snapshot, "one") == [WHEN]
    # A folder of snapshots finds it by owner+name too; a plain folder has no date.
    assert _committed(source, tmp_path, tmp_path, "two") == [WHEN]
    folder = RepoSource(kind="folder", path="one")
    assert _committed(folder, tmp_path, snapshot, "three") == []


def _strategies(
    tmp_path: Path,
    monkeypatch: Any,
    url: str = "",
    named: Callable[[str], list[str]] = lambda _label: [],
    **options: Any,
) -> tuple[list[tuple[str, str, str]], list[str]]:
    """verify's attempts on a fake whose every attempt fails and whose tests name ``named(label)``
    as missing (their packages from the Debian mirror at ``url``): (label, the test step's
    cutoff, script) of each, and the progress lines."""
    snapshot, commit = _snapshot(tmp_path)
    tried: list[tuple[str, str, str]] = []

    def attempt(ctx: Any, record: RepoVerification, image: str, label: str, script: str, *_: Any):
        tried.append((label, record.packages_before, script))
        record.undeclared_programs = named(label)
        record.attempts.append(f"{label}: failed")
        return False

    monkeypatch.setattr(ladder, "attempt", attempt)
    monkeypatch.setattr(ladder, "_agent_script", lambda *_a, **_k: "")
    monkeypatch.setattr(ladder, "_system_packages", lambda *_a: [])
    lines: list[str] = []
    ctx = fake_context(tmp_path, snapshot, lines, debian_mirror=url, **options)
    record = ladder.verify_repository(ctx, "o/n", commit)  # type: ignore[arg-type]
    assert record.revision_date == WHEN
    assert record.packages_before == ""  # no attempt verified it: no cutoff recorded
    return tried, lines


def _verify_strategies(tmp_path: Path, monkeypatch: Any, **options: Any) -> list[tuple]:
    tried, _ = _strategies(tmp_path, monkeypatch, **options)
    return tried


def test_the_dated_recipe_follows_the_plain_one_with_its_test_step_held_to_the_day(
    tmp_path: Path, monkeypatch: Any
) -> None:
    tried = _verify_strategies(tmp_path, monkeypatch)
    assert [(label, before) for label, before, _ in tried] == [("recipe", ""), (AS_OF, WHEN)]
    plain, dated = tried[0][2], tried[1][2]
    assert "PIP_UPLOADED_PRIOR_TO" not in plain
    assert f"export PIP_UPLOADED_PRIOR_TO={WHEN}" in dated
    assert dated.endswith(plain.removeprefix("#!/bin/bash\n"))  # the same recipe after it


def test_no_as_of_keeps_the_plain_recipe_only(tmp_path: Path, monkeypatch: Any) -> None:
    tried = _verify_strategies(tmp_path, monkeypatch, recipe_as_of=False)
    assert [label for label, _, _ in tried] == ["recipe"]


def test_the_test_step_exports_the_cutoff_before_its_installs() -> None:
    plain = run_tests_command("python -m pytest", ["pytest"], ["packaging"])
    assert "PIP_UPLOADED_PRIOR_TO" not in plain
    lines = run_tests_command(
        "python -m pytest", ["pytest"], ["packaging"], packages_before=WHEN
    ).splitlines()
    export = lines.index(f"export PIP_UPLOADED_PRIOR_TO={WHEN}")
    assert export < min(i for i, line in enumerate(lines) if "pip install" in line)


def test_an_imported_case_carries_the_cutoff_into_grading(tmp_path: Path) -> None:
    from pytest_enconda.cases.enconda_import import load_dataset

    record = RepoVerification(
        repository="o/a",
        revision="abc",
        status="verified",
        test_command="pytest",
        reference_source=AS_OF,
        revision_date=WHEN,
        packages_before=WHEN,
        pass_set=["t::a"],
    )
    (case,) = load_dataset(one_instance_dataset(tmp_path, record)).cases
    assert case.reference is not None and case.reference.packages_before == WHEN


@pytest.mark.slow
@pytest.mark.docker
def test_the_dated_recipe_installs_what_pip_offered_that_day(
    tmp_path: Path, sandbox, base_image
) -> None:
    # A project of that day: setup.py (the setuptools of 2021 reads no [project] table and has
    # no editable hook, so the recipe's `pip install .` after `-e .` is what installs it).
    setup_py = (
        "from setuptools import setup\n"
        "setup(name='mini', version='0.1', packages=['mini'], install_requires=['iniconfig'])\n"
    )
    repo = project(tmp_path / "repo", "mini", {"setup.py": setup_py})
    day = "2021-01-01T00:00:00Z"  # iniconfig 1.1.1 (2020-10); 2.0.0 came in 2023
    script = as_of_script(recipe_script(repo), day)
    with set_up(sandbox, base_image, repo, script, "t/as-of") as (box, _):
        assert installed_version(box, "iniconfig") == "1.1.1"
        # The test step of a reference made so installs its requirements as of that day too.
        # A runtime requirement listed among them is the setup's: the step does not ask pip for
        # it (iniconfig>=2 did not exist that day; asked for, its install would fail).
        step = run_tests_command(
            "true", [], ["packaging", "iniconfig>=2"], packages_before=day, runtime=["iniconfig"]
        )
        ran = box.exec(step, timeout=300, workdir="/")
        assert installed_version(box, "packaging") == "20.8"
        assert "left to the setup" in ran.output and "did not install" not in ran.output
        assert installed_version(box, "iniconfig") == "1.1.1"


@pytest.mark.parametrize("value", ["yesterday", "2019-05-01", "2019-05-01T10:00:00Z; rm -rf /"])
def test_a_sidecar_with_a_malformed_cutoff_is_refused_naming_the_field(
    tmp_path: Path, value: str
) -> None:
    from pytest_enconda.cases.sidecar import SidecarError, read_sidecar

    record = RepoVerification(repository="o/a", revision="abc", status="verified")
    data = one_instance_dataset(tmp_path, record)
    path = next(data.glob("*.json"))
    text = json.loads(path.read_text())
    text["repositories"]["o/a"]["packages_before"] = value
    path.write_text(json.dumps(text))
    with pytest.raises(SidecarError) as caught:
        read_sidecar(path)
    assert str(path) in str(caught.value)
    assert "repositories.o/a.packages_before" in str(caught.value)
