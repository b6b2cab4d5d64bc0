"""A checkout's git submodules come from the repository mirror at the commits its tree records
(lagolunatic/wwrando's ``gclib/requirements.txt``, ucoproject/uco's three ontologies): without
them the setup failed on a file the submodule holds, in verify and in every graded run."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitutil import git

from pytest_enconda.cases.models import RepoSource
from pytest_enconda.sandbox.repo import materialize
from pytest_enconda.sandbox.submodules import _inside, _submodule_url


def _repo(folder: Path, files: dict[str, str]) -> str:
    """A one-commit repository in ``folder`` (created) holding ``files``; its commit."""
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / ".git").exists():
        git(folder, "init", "--quiet", "--initial-branch=main")
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    git(folder, "add", "-A")
    git(folder, "commit", "--quiet", "-m", "c")
    return git(folder, "rev-parse", "HEAD")


def _link(folder: Path, path: str, commit: str, url: str, modules: str = "") -> str:
    """Record ``path`` as a submodule at ``commit`` (a gitlink, as `git submodule add` makes)."""
    gitmodules = folder / ".gitmodules"
    text = gitmodules.read_text() if gitmodules.exists() else ""
    gitmodules.write_text(
        text + (modules or f'[submodule "{path}"]\n\tpath = {path}\n\turl = {url}\n')
    )
    git(folder, "update-index", "--add", "--cacheinfo", f"160000,{commit},{path}")
    git(folder, "add", ".gitmodules")
    git(folder, "commit", "--quiet", "-m", "link")
    return git(folder, "rev-parse", "HEAD")


def _snapshot(work: Path, mirror: Path, owner_name: str) -> None:
    """A bare clone in the fetch tool's layout: ``mirror/owner+name/repo``."""
    git(work.parent, "clone", "--quiet", "--bare", str(work), str(mirror / owner_name / "repo"))


def _mirrored(tmp_path: Path, name: str, files: dict[str, str]) -> str:
    """A one-commit repository ``o/name`` whose snapshot the mirror holds; its commit."""
    commit = _repo(tmp_path / name, files)
    _snapshot(tmp_path / name, tmp_path / "mirror", f"o+{name}")
    return commit


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, str, str]:
    """A parent whose submodule ``lib`` is pinned at the library's first commit; the library
    has a second commit since. The mirror holds both; returns (mirror, parent commit, pinned)."""
    mirror = tmp_path / "mirror"
    lib = tmp_path / "lib"
    pinned = _repo(lib, {"requirements.txt": "iniconfig\n", "lib/__init__.py": "V = 1\n"})
    _repo(lib, {"lib/__init__.py": "V = 2\n"})
    _snapshot(lib, mirror, "o+lib")
    parent = tmp_path / "parent"
    _repo(parent, {"setup.py": "print('x')\n"})
    commit = _link(parent, "deps/lib", pinned, "https://github.com/o/lib.git")
    _snapshot(parent, mirror, "o+parent")
    return mirror, commit, pinned


def _checkout(tmp_path: Path, mirror: Path, commit: str, url: str = "https://github.com/o/parent"):
    said: list[str] = []
    dest = tmp_path / "out"
    source = RepoSource(kind="url", url=url, revision=commit)
    materialize(
        source, tmp_path, dest, mirror_dir=mirror, cache_dir=tmp_path / "c", submodules=said
    )
    return dest, said


def test_a_submodule_is_checked_out_at_the_commit_the_tree_records(
    tmp_path: Path, project: tuple[Path, str, str]
) -> None:
    mirror, commit, pinned = project
    dest, said = _checkout(tmp_path, mirror, commit)
    assert (dest / "deps/lib/lib/__init__.py").read_text() == "V = 1\n"  # not the branch's V = 2
    assert (dest / "deps/lib/requirements.txt").read_text() == "iniconfig\n"
    assert not (dest / "deps/lib/.git").exists()
    assert said == [f"deps/lib: {pinned[:12]} from the mirror ({mirror / 'o+lib' / 'repo'})"]


def test_the_tree_hash_covers_the_submodule(tmp_path: Path, project: tuple[Path, str, str]) -> None:
    mirror, commit, _ = project
    source = RepoSource(kind="url", url="https://github.com/o/parent", revision=commit)
    with_it = materialize(source, tmp_path, tmp_path / "a", mirror_dir=mirror)
    import shutil

    shutil.rmtree(mirror / "o+lib")
    without = materialize(source, tmp_path, tmp_path / "b", mirror_dir=mirror)
    assert with_it != without


def test_a_submodule_the_mirror_lacks_stays_empty_and_is_said(
    tmp_path: Path, project: tuple[Path, str, str]
) -> None:
    import shutil

    mirror, commit, pinned = project
    shutil.rmtree(mirror / "o+lib")
    dest, said = _checkout(tmp_path, mirror, commit)
    assert (dest / "setup.py").is_file()
    assert not (dest / "deps/lib/requirements.txt").exists()
    assert said == [
        f"deps/lib: {pinned[:12]} of https://github.com/o/lib.git is not in the mirror; left empty"
    ]


def test_a_mirror_without_the_pinned_commit_does_not_serve_another(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    lib = tmp_path / "lib"
    _repo(lib, {"a.txt": "one\n"})
    _snapshot(lib, mirror, "o+lib")  # the mirror's snapshot predates the pinned commit
    pinned = _repo(lib, {"a.txt": "two\n"})
    parent = tmp_path / "parent"
    _repo(parent, {"x.py": ""})
    commit = _link(parent, "lib", pinned, "https://github.com/o/lib")
    _snapshot(parent, mirror, "o+parent")
    dest, said = _checkout(tmp_path, mirror, commit)
    assert not (dest / "lib/a.txt").exists()
    assert said and said[0].endswith("is not in the mirror; left empty")


def test_relative_urls_and_nested_submodules(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    inner_commit = _mirrored(tmp_path, "inner", {"inner.txt": "deep\n"})
    middle = tmp_path / "middle"
    _repo(middle, {"middle.txt": "mid\n"})
    middle_commit = _link(middle, "in", inner_commit, "../inner.git")
    _snapshot(middle, mirror, "o+middle")
    top = tmp_path / "top"
    _repo(top, {"top.txt": "top\n"})
    commit = _link(top, "vendor/middle", middle_commit, "https://github.com/o/middle")
    _snapshot(top, mirror, "o+top")
    dest, said = _checkout(tmp_path, mirror, commit, "https://github.com/o/top")
    assert (dest / "vendor/middle/middle.txt").read_text() == "mid\n"
    assert (dest / "vendor/middle/in/inner.txt").read_text() == "deep\n"
    assert [line.split(":")[0] for line in said] == ["vendor/middle", "vendor/middle/in"]


def test_a_relative_url_is_read_against_the_parents() -> None:
    parent = "https://github.com/o/top"
    assert _submodule_url("../inner.git", parent) == "https://github.com/o/inner.git"
    assert _submodule_url("./sub", parent) == "https://github.com/o/top/sub"
    assert _submodule_url("https://x.org/a/b", parent) == "https://x.org/a/b"
    assert _submodule_url("../inner.git", "") == ""


def test_a_path_through_a_link_or_out_of_the_checkout_is_refused(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    (dest / "real").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (dest / "link").symlink_to(outside)
    (dest / "file").write_text("")
    assert _inside(dest, "real/sub") == dest / "real/sub"
    assert _inside(dest, "new/sub") == dest / "new/sub"
    for bad in ("link/sub", "link", "../x", "/etc", "a/../../x", "file/sub", ".git/hooks", ""):
        assert _inside(dest, bad) is None, bad


def test_a_gitmodules_naming_a_path_through_a_link_leaves_it_alone(tmp_path: Path) -> None:
    """A tree holding a link ``vendor`` → outside and a submodule path under it: the checkout
    writes nothing through the link."""
    mirror = tmp_path / "mirror"
    pinned = _mirrored(tmp_path, "lib", {"a.txt": "x\n"})
    parent = tmp_path / "parent"
    _repo(parent, {"x.py": ""})
    outside = tmp_path / "outside"
    outside.mkdir()
    (parent / "vendor").symlink_to(outside)
    git(parent, "add", "vendor")
    git(parent, "commit", "--quiet", "-m", "link")
    # The gitlink sits beside the link; .gitmodules claims a path through the link.
    modules = '[submodule "evil"]\n\tpath = vendor/lib\n\turl = https://github.com/o/lib\n'
    commit = _link(parent, "lib", pinned, "", modules=modules)
    _snapshot(parent, mirror, "o+parent")
    _dest, said = _checkout(tmp_path, mirror, commit)
    assert list(outside.iterdir()) == []
    assert said == []  # the declared path is not a gitlink of the tree: nothing to check out


@pytest.mark.docker
def test_a_box_built_from_the_checkout_imports_the_submodules_code(
    tmp_path: Path, project: tuple[Path, str, str], image_builder, base_image, sandbox
) -> None:
    mirror, commit, _ = project
    dest, _said = _checkout(tmp_path, mirror, commit)
    image = image_builder.ensure_task_image(base_image, dest, {}, "t/submodule")
    with sandbox.container(image, case_id="t/submodule", role="test") as box:
        run = box.exec("cd deps/lib && python3 -c 'import lib; print(lib.V)'", timeout=60)
    assert run.exit_code == 0, run.output
    assert run.output.strip().splitlines()[-1] == "1"


@pytest.mark.parametrize("verified_with_it", [True, False])
def test_a_case_whose_reference_had_the_missing_submodule_is_a_harness_error(
    tmp_path: Path, project: tuple[Path, str, str], verified_with_it: bool
) -> None:
    """lagolunatic/wwrando was verified with gclib from the mirror; a run whose mirror lacked
    it failed every agent and the oracle on `cannot import name 'fs_helpers' from 'gclib'`.
    Such a case is the harness's fault; a submodule the reference never had stays a warning."""
    import shutil
    import sys

    from pytest_enconda.backends.fake import FakeBackend
    from pytest_enconda.cases.models import ExecutionReference
    from pytest_enconda.errors import HarnessError
    from pytest_enconda.pipeline import CasePipeline
    from pytest_enconda.settings import EncondaSettings

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backends"))
    from cases_for_tests import make_case  # pyright: ignore[reportMissingImports]

    mirror, commit, pinned = project
    shutil.rmtree(mirror / "o+lib")
    table = (
        f'[repository]\nkind = "url"\nurl = "https://github.com/o/parent"\nrevision = "{commit}"\n'
    )
    case = make_case(tmp_path / "c", repository=table)
    wanted = (
        (f"deps/lib: {pinned[:12]} from the mirror (/m/o+lib/repo)",) if verified_with_it else ()
    )
    case = case.model_copy(
        update={"reference": ExecutionReference(verified=True, submodules=wanted)}
    )
    backend = FakeBackend(tmp_path / "fake")
    said: list[str] = []
    settings = EncondaSettings(run_dir=tmp_path / "run", repo_mirror=mirror)
    pipeline = CasePipeline(settings, progress=said.append, backend=backend)
    try:
        if verified_with_it:
            with pytest.raises(HarnessError, match=r"mirror now lacks: deps/lib: .* not in the"):
                pipeline.task_image(case)
            assert not any(call.op == "task_image" for call in backend.calls)
        else:
            pipeline.task_image(case)
            assert any(call.op == "task_image" for call in backend.calls)
            assert any("one: warning: submodule deps/lib" in line for line in said)
    finally:
        backend.close()
