"""GitHub dependencies served from the repository mirror: found in dependency files, looked up
in the mirror, and (real engine) cloned and pip-installed inside a box without a network."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
from gitutil import git

from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.loader import load_case
from pytest_enconda.pipeline import CasePipeline
from pytest_enconda.sandbox.containers import Sandbox
from pytest_enconda.sandbox.git_deps import (
    GIT_DEPS_DIR,
    add_to_tar,
    from_mirror,
    gitconfig,
    github_dependencies,
    mirrored_dependencies,
)
from pytest_enconda.sandbox.images import ImageBuilder
from pytest_enconda.settings import EncondaSettings


def _project(root: Path) -> Path:
    (root / "requirements").mkdir(parents=True)
    (root / "requirements.txt").write_text(
        "requests==2.0\n"
        "-e git+https://github.com/Acme/Dep.git@0123abc#egg=dep\n"
        "# -e git+https://github.com/acme/old.git@feed#egg=old\n"
        "docs see https://github.com/acme/not-a-dependency\n"
    )
    (root / "requirements" / "dev.txt").write_text("git+https://github.com/acme/two@main\n")
    (root / "pyproject.toml").write_text(
        '[tool.poetry.dependencies]\nopps = {git = "https://github.com/open-pulse/opps"}\n'
    )
    (root / "setup.py").write_text(
        'install_requires=["three @ git+https://github.com/acme/three.git"]\n'
    )
    # Not a dependency file: a git URL here is not read.
    (root / "notes.txt").write_text("git+https://github.com/acme/ignored\n")
    return root


def test_git_dependencies_are_read_from_requirements_poetry_and_setup(tmp_path: Path) -> None:
    assert github_dependencies(_project(tmp_path / "p")) == [
        "https://github.com/Acme/Dep",
        "https://github.com/acme/three",
        "https://github.com/acme/two",
        "https://github.com/open-pulse/opps",
    ]


def _bare_snapshot(mirror: Path, entry: str) -> str:
    """A fetched-snapshot layout (``owner+name/repo`` bare) holding one installable package."""
    work = mirror.parent / f"work-{entry}"
    (work / "dep").mkdir(parents=True)
    (work / "dep" / "__init__.py").write_text("VALUE = 'from the mirror'\n")
    (work / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "dep"\nversion = "1.0"\n[tool.setuptools]\npackages = ["dep"]\n'
    )
    git(work, "init", "-q", "-b", "main")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "dep")
    commit = git(work, "rev-parse", "HEAD")
    (mirror / entry).mkdir(parents=True)
    git(mirror / entry, "clone", "-q", "--bare", str(work), "repo")
    return commit


def test_the_mirror_serves_what_it_holds_under_any_case(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    _bare_snapshot(mirror, "acme+dep")
    (mirror / "acme+two").mkdir()  # a plain folder is no git repository: not served
    deps = from_mirror(
        ["https://github.com/Acme/Dep", "https://github.com/acme/two", "https://github.com/x/y"],
        mirror,
    )
    assert [(dep.url, dep.git_dir) for dep in deps] == [
        ("https://github.com/Acme/Dep", mirror / "acme+dep" / "repo")
    ]
    assert deps[0].slot == "Acme+Dep.git"
    assert from_mirror(["https://github.com/Acme/Dep"], None) == []
    assert mirrored_dependencies(_project(tmp_path / "p"), mirror) == deps
    # The longest matching insteadOf wins in git: the .git spelling maps to the copy itself.
    assert gitconfig(deps).decode().splitlines() == [
        f'[url "file:///{GIT_DEPS_DIR}/Acme+Dep.git"]',
        "\tinsteadOf = https://github.com/Acme/Dep.git",
        "\tinsteadOf = https://github.com/Acme/Dep",
    ]


def test_links_in_a_mirrored_repository_are_not_copied(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    _bare_snapshot(mirror, "acme+dep")
    secret = tmp_path / "secret.txt"
    secret.write_text("host file\n")
    (mirror / "acme+dep" / "repo" / "hooks" / "leak").symlink_to(secret)
    deps = from_mirror(["https://github.com/acme/dep"], mirror)
    with tarfile.open(tmp_path / "t.tar", "w") as tar:
        add_to_tar(tar, deps)
    with tarfile.open(tmp_path / "t.tar") as tar:
        names = tar.getnames()
        config = tar.extractfile("etc/gitconfig")
        assert config is not None and b"acme+dep.git" in config.read()
    assert f"{GIT_DEPS_DIR}/acme+dep.git/HEAD" in names
    assert not any(name.endswith("hooks/leak") for name in names)


def test_the_pipeline_hands_the_mirrored_dependencies_to_the_backend(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    _bare_snapshot(mirror, "acme+dep")
    case_dir = tmp_path / "bench" / "cases" / "toy"
    _project(case_dir / "repo")
    (case_dir / "README.md").write_text("# toy\n")
    (case_dir / "golden.json").write_text(json.dumps({"level": 0, "errors": []}))
    (case_dir / "case.toml").write_text(
        'id = "toy"\nsuite = "diagnosis"\nreadme = "README.md"\ngolden = "golden.json"\n'
        'test_command = "true"\n'
        '[repository]\nkind = "folder"\npath = "repo"\n'
    )
    case = load_case(case_dir / "case.toml", [tmp_path / "bench"])
    backend = FakeBackend(tmp_path / "fake")
    messages: list[str] = []
    settings = EncondaSettings(run_dir=tmp_path / "run", repo_mirror=mirror)
    try:
        CasePipeline(settings, progress=messages.append, backend=backend).task_image(case)
    finally:
        backend.close()
    [call] = [call for call in backend.calls if call.op == "task_image"]
    assert call.detail["git_deps"] == ["https://github.com/Acme/Dep"]
    assert "toy: 1 GitHub dependencies served from the mirror: Acme/Dep" in messages


@pytest.mark.docker
def test_a_box_without_network_clones_and_installs_the_dependency_from_the_mirror(
    base_image: str, image_builder: ImageBuilder, sandbox: Sandbox, tmp_path: Path
) -> None:
    mirror = tmp_path / "mirror"
    commit = _bare_snapshot(mirror, "acme+dep")
    project = tmp_path / "project"
    project.mkdir()
    (project / "requirements.txt").write_text(
        f"dep @ git+https://github.com/Acme/Dep.git@{commit}\n"
    )
    deps = mirrored_dependencies(project, mirror)
    assert len(deps) == 1
    plain = image_builder.task_hash(base_image, project, {})
    assert image_builder.task_hash(base_image, project, {}, git_deps=()) == plain
    assert image_builder.task_hash(base_image, project, {}, git_deps=deps) != plain
    tag = image_builder.ensure_task_image(
        base_image, project, {}, "t/git-deps", lambda line: None, git_deps=deps
    )
    try:
        with sandbox.container(tag, case_id="t/git-deps", role="test", network=False) as box:
            result = box.exec(
                "git clone -q https://github.com/Acme/Dep /tmp/a"
                " && git -C /tmp/a rev-parse HEAD"
                " && python -m pip install -q --no-build-isolation --no-deps"
                " --disable-pip-version-check -r requirements.txt"
                " && cd / && python -c 'import dep; print(dep.VALUE)'"
                " && echo $POETRY_SYSTEM_GIT_CLIENT",
                timeout=120,
            )
        assert result.exit_code == 0, result.output
        lines = result.output.strip().splitlines()
        assert lines[0] == commit
        assert lines[-2:] == ["from the mirror", "true"]
    finally:
        image_builder.client.api.remove_image(tag)
