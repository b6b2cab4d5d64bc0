"""Repository materialization: folder, local git, git URL, mirror; tree hashes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from gitutil import git

from pytest_enconda.cases.models import RepoSource
from pytest_enconda.errors import HarnessError, RepositoryUnavailable
from pytest_enconda.sandbox.repo import materialize, mirror_candidates, tree_hash

UNREACHABLE = "https://github.com/nonexistent-owner/nonexistent-repo"


@pytest.fixture
def git_repo(tmp_path: Path) -> tuple[Path, str, str]:
    """A repository with two commits; returns (path, first sha, second sha)."""
    repo = tmp_path / "origin"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    (repo / "app.py").write_text("VERSION = 1\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_app.py").write_text("def test(): pass\n")
    # export-ignore must not drop files from the agent's checkout (git archive would).
    (repo / ".gitattributes").write_text("tests/ export-ignore\n")
    run = repo / "run.sh"
    run.write_text("#!/bin/sh\necho run\n")
    run.chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "one")
    first = git(repo, "rev-parse", "HEAD")
    (repo / "app.py").write_text("VERSION = 2\n")
    git(repo, "commit", "--quiet", "-am", "two")
    second = git(repo, "rev-parse", "HEAD")
    return repo, first, second


def test_folder_copy_skips_vcs_and_caches_and_keeps_links(tmp_path: Path) -> None:
    case_dir = tmp_path / "case"
    src = case_dir / "repo"
    (src / ".git").mkdir(parents=True)
    (src / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (src / "pkg" / "__pycache__").mkdir(parents=True)
    (src / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    (src / ".venv" / "bin").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("x = 1\n")
    (src / "link.py").symlink_to("pkg/mod.py")
    dest = tmp_path / "dest"

    digest = materialize(RepoSource(kind="folder", path="repo"), case_dir, dest)

    assert (dest / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert (dest / "link.py").is_symlink()
    assert os.readlink(dest / "link.py") == "pkg/mod.py"
    assert not (dest / ".git").exists()
    assert not (dest / ".venv").exists()
    assert not (dest / "pkg" / "__pycache__").exists()
    # The hash ignores what the copy skips, so source and copy agree.
    assert digest == tree_hash(src) == tree_hash(dest)


def test_tree_hash_follows_content_and_exec_bit_not_mtime(tmp_path: Path) -> None:
    root = tmp_path / "t"
    root.mkdir()
    script = root / "s.sh"
    script.write_text("echo hi\n")
    first = tree_hash(root)
    os.utime(script, (1, 1))
    assert tree_hash(root) == first
    script.chmod(0o755)
    executable = tree_hash(root)
    assert executable != first
    script.write_text("echo bye\n")
    assert tree_hash(root) != executable
    (root / "empty").mkdir()
    assert tree_hash(root) != executable


def test_local_git_at_revision_leaves_origin_untouched(
    tmp_path: Path, git_repo: tuple[Path, str, str]
) -> None:
    repo, first, second = git_repo
    dest = tmp_path / "checkout"
    digest = materialize(
        RepoSource(kind="git", path=str(repo), revision=first[:10]), tmp_path, dest
    )
    assert (dest / "app.py").read_text() == "VERSION = 1\n"
    assert (dest / "tests" / "test_app.py").is_file()
    assert os.access(dest / "run.sh", os.X_OK)
    assert not (dest / ".git").exists()
    assert digest == tree_hash(dest)
    assert git(repo, "rev-parse", "HEAD") == second
    assert git(repo, "status", "--porcelain") == ""


def test_local_git_unknown_revision_is_unavailable(
    tmp_path: Path, git_repo: tuple[Path, str, str]
) -> None:
    repo, _, _ = git_repo
    dest = tmp_path / "checkout"
    with pytest.raises(RepositoryUnavailable, match="revision not found"):
        materialize(RepoSource(kind="git", path=str(repo), revision="no-such-tag"), tmp_path, dest)
    assert not dest.exists()


def test_unreachable_url_is_repository_unavailable(tmp_path: Path) -> None:
    source = RepoSource(kind="url", url=UNREACHABLE, revision="0123456789abcdef")
    dest = tmp_path / "checkout"
    with pytest.raises(RepositoryUnavailable) as info:
        materialize(source, tmp_path, dest, timeout=60, cache_dir=tmp_path / "cache")
    message = str(info.value)
    assert message.startswith(
        f"repository unavailable: {UNREACHABLE}@0123456789abcdef (use --repo-mirror DIR): "
    )
    assert info.value.reason
    assert not dest.exists()


@pytest.mark.parametrize("layout", ["owner/name", "owner_name", "name.git", "owner+name/repo"])
def test_mirror_hit_needs_no_network(
    tmp_path: Path, git_repo: tuple[Path, str, str], layout: str
) -> None:
    repo, first, _ = git_repo
    mirror = tmp_path / "mirror"
    target = mirror / layout.replace("owner", "nonexistent-owner").replace(
        "name", "nonexistent-repo"
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    if layout.endswith((".git", "/repo")):
        # name.git: a bare clone; owner+name/repo: the fetch tool's bare snapshot layout.
        git(tmp_path, "clone", "--quiet", "--bare", str(repo), str(target))
    else:
        shutil.copytree(repo, target, symlinks=True)
    source = RepoSource(kind="url", url=UNREACHABLE, revision=first)
    dest = tmp_path / "checkout"
    digest = materialize(source, tmp_path, dest, mirror_dir=mirror, cache_dir=tmp_path / "cache")
    assert (dest / "app.py").read_text() == "VERSION = 1\n"
    assert digest == tree_hash(dest)
    assert not (tmp_path / "cache" / "repos").exists()


def test_mirror_without_the_revision_says_so(
    tmp_path: Path, git_repo: tuple[Path, str, str]
) -> None:
    repo, _, _ = git_repo
    mirror = tmp_path / "mirror"
    shutil.copytree(repo, mirror / "nonexistent-repo", symlinks=True)
    source = RepoSource(kind="url", url=UNREACHABLE, revision="f" * 40)
    with pytest.raises(RepositoryUnavailable, match=r"mirror .*nonexistent-repo has no revision"):
        materialize(
            source,
            tmp_path,
            tmp_path / "checkout",
            mirror_dir=mirror,
            timeout=60,
            cache_dir=tmp_path / "cache",
        )


def test_snapshot_without_the_revision_is_not_copied_as_a_folder(
    tmp_path: Path, git_repo: tuple[Path, str, str]
) -> None:
    """The fetch tool's owner+name/repo lacking the revision: the owner+name folder around it is
    a later candidate, but it holds the bare repository, not a checkout (mov-cli's snapshot)."""
    repo, _, _ = git_repo
    mirror = tmp_path / "mirror"
    git(
        tmp_path,
        "clone",
        "--quiet",
        "--bare",
        str(repo),
        str(mirror / "nonexistent-owner+nonexistent-repo" / "repo"),
    )
    source = RepoSource(kind="url", url=UNREACHABLE, revision="f" * 40)
    dest = tmp_path / "checkout"
    with pytest.raises(RepositoryUnavailable, match=r"repo has no revision f{40}"):
        materialize(
            source, tmp_path, dest, mirror_dir=mirror, timeout=60, cache_dir=tmp_path / "cache"
        )
    assert not dest.exists()


def test_mirror_candidate_order(tmp_path: Path) -> None:
    names = [p.relative_to(tmp_path).as_posix() for p in mirror_candidates(tmp_path, UNREACHABLE)]
    assert names == [
        "nonexistent-owner/nonexistent-repo",
        "nonexistent-owner/nonexistent-repo.git",
        "nonexistent-owner_nonexistent-repo",
        "nonexistent-owner_nonexistent-repo.git",
        "nonexistent-repo",
        "nonexistent-repo.git",
        "nonexistent-owner+nonexistent-repo/repo",
        "nonexistent-owner+nonexistent-repo",
    ]


@pytest.mark.parametrize(
    "layout",
    [
        "Nonexistent-Owner+Nonexistent-Repo/repo",  # the fetch tool keeps GitHub's spelling
        "NONEXISTENT-OWNER/Nonexistent-Repo.git",
        "Nonexistent-Repo.git",
        "moved-owner+nonexistent-repo/repo",  # the repository changed owner since the dataset
    ],
)
def test_mirror_finds_other_spellings_by_their_revision(
    tmp_path: Path, git_repo: tuple[Path, str, str], layout: str
) -> None:
    """EnConda-Bench names repositories in lower case (hips/autograd, HIPS+autograd fetched)."""
    repo, first, _ = git_repo
    mirror = tmp_path / "mirror"
    git(tmp_path, "clone", "--quiet", "--bare", str(repo), str(mirror / layout))
    source = RepoSource(kind="url", url=UNREACHABLE, revision=first)
    dest = tmp_path / "checkout"
    materialize(source, tmp_path, dest, mirror_dir=mirror, cache_dir=tmp_path / "cache")
    assert (dest / "app.py").read_text() == "VERSION = 1\n"
    assert mirror / layout in mirror_candidates(mirror, UNREACHABLE)


def test_another_owners_plain_folder_is_not_taken_for_the_repository(
    tmp_path: Path, git_repo: tuple[Path, str, str]
) -> None:
    """A plain folder cannot prove its revision: under another owner's name it is not used."""
    repo, first, _ = git_repo
    mirror = tmp_path / "mirror"
    shutil.copytree(repo, mirror / "moved-owner+nonexistent-repo" / "repo", symlinks=True)
    shutil.rmtree(mirror / "moved-owner+nonexistent-repo" / "repo" / ".git")
    assert not [p for p in mirror_candidates(mirror, UNREACHABLE) if "moved-owner" in str(p)]
    source = RepoSource(kind="url", url=UNREACHABLE, revision=first)
    with pytest.raises(RepositoryUnavailable):
        materialize(
            source,
            tmp_path,
            tmp_path / "checkout",
            mirror_dir=mirror,
            timeout=30,
            cache_dir=tmp_path / "cache",
        )


def test_mirror_that_is_itself_a_bare_snapshot(
    tmp_path: Path, git_repo: tuple[Path, str, str]
) -> None:
    """``--repo-mirror /work/.mirror/owner+name/repo``: the revision decides, not the name."""
    repo, first, _ = git_repo
    snapshot = tmp_path / "owner+name" / "repo"
    git(tmp_path, "clone", "--quiet", "--bare", str(repo), str(snapshot))
    source = RepoSource(kind="url", url=UNREACHABLE, revision=first)
    dest = tmp_path / "checkout"
    materialize(source, tmp_path, dest, mirror_dir=snapshot, cache_dir=tmp_path / "cache")
    assert (dest / "app.py").read_text() == "VERSION = 1\n"
    missing = RepoSource(kind="url", url=UNREACHABLE, revision="f" * 40)
    with pytest.raises(RepositoryUnavailable, match=r"mirror .*owner\+name/repo has no revision"):
        materialize(
            missing,
            tmp_path,
            tmp_path / "other",
            mirror_dir=snapshot,
            timeout=60,
            cache_dir=tmp_path / "cache",
        )


def test_url_clone_is_cached_for_the_next_run(
    tmp_path: Path, git_repo: tuple[Path, str, str]
) -> None:
    repo, first, second = git_repo
    bare = tmp_path / "served.git"
    git(tmp_path, "clone", "--quiet", "--bare", str(repo), str(bare))
    url = bare.as_uri()
    cache = tmp_path / "cache"
    digest = materialize(
        RepoSource(kind="url", url=url, revision=second), tmp_path, tmp_path / "a", cache_dir=cache
    )
    assert (tmp_path / "a" / "app.py").read_text() == "VERSION = 2\n"
    # With the remote gone, the same revision still comes from the cache: no second fetch.
    shutil.rmtree(bare)
    again = materialize(
        RepoSource(kind="url", url=url, revision=second), tmp_path, tmp_path / "b", cache_dir=cache
    )
    assert again == digest
    with pytest.raises(RepositoryUnavailable, match=first[:12]):
        materialize(
            RepoSource(kind="url", url=url, revision=first[:12]),
            tmp_path,
            tmp_path / "c",
            cache_dir=cache,
        )


def test_non_empty_destination_is_refused(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "keep.txt").write_text("mine")
    with pytest.raises(HarnessError, match="absent or empty"):
        materialize(RepoSource(kind="folder", path="repo"), tmp_path, dest)
    assert (dest / "keep.txt").read_text() == "mine"


def _snapshot_lacking_blobs(tmp_path: Path) -> tuple[Path, str]:
    """A bare snapshot whose commit names blobs its object store lacks, as fetched snapshots of
    repositories often do for their largest files: two paths share one missing blob, a symlink's
    blob is missing too, and a gitlink (submodule) is present that was never a blob."""
    repo = tmp_path / "origin"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    (repo / "app.py").write_text("VERSION = 1\n")
    (repo / "data").mkdir()
    (repo / "data" / "big file.bin").write_bytes(b"\1" * 4096)
    (repo / "data" / "copy.bin").write_bytes(b"\1" * 4096)
    (repo / "data" / "small.txt").write_text("kept\n")
    (repo / "latest").symlink_to("data/big file.bin")
    git(repo, "add", "-A")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{'a' * 40},vendor/sub")
    git(repo, "commit", "--quiet", "-m", "one")
    commit = git(repo, "rev-parse", "HEAD")
    snapshot = tmp_path / "owner+name" / "repo"
    # A local clone hard-links the loose objects, so deleting the clone's copy leaves the origin's.
    git(tmp_path, "clone", "--quiet", "--bare", str(repo), str(snapshot))
    for path in ("data/big file.bin", "latest"):
        sha = git(snapshot, "rev-parse", f"{commit}:{path}")
        loose = snapshot / "objects" / sha[:2] / sha[2:]
        assert loose.is_file(), f"{path}'s blob is not a loose object"
        loose.unlink()
    return snapshot, commit


def test_missing_blobs_fail_a_strict_checkout(tmp_path: Path) -> None:
    snapshot, commit = _snapshot_lacking_blobs(tmp_path)
    dest = tmp_path / "checkout"
    with pytest.raises(HarnessError, match=r"checkout-index .* unable to read sha1 file"):
        materialize(
            RepoSource(kind="url", url=UNREACHABLE, revision=commit),
            tmp_path,
            dest,
            mirror_dir=snapshot,
            cache_dir=tmp_path / "cache",
        )
    assert not dest.exists()


@pytest.mark.parametrize("kind", ["url", "git"])
def test_missing_blobs_are_left_out_and_named(tmp_path: Path, kind: str) -> None:
    snapshot, commit = _snapshot_lacking_blobs(tmp_path)
    dest = tmp_path / "checkout"
    absent: list[str] = ["kept"]
    if kind == "url":
        source = RepoSource(kind="url", url=UNREACHABLE, revision=commit)
        mirror: Path | None = snapshot
    else:
        source = RepoSource(kind="git", path=str(snapshot), revision=commit)
        mirror = None
    digest = materialize(
        source, tmp_path, dest, mirror_dir=mirror, cache_dir=tmp_path / "cache", absent=absent
    )
    assert absent == ["kept", "data/big file.bin", "data/copy.bin", "latest"]
    assert (dest / "app.py").read_text() == "VERSION = 1\n"
    assert [p.name for p in (dest / "data").iterdir()] == ["small.txt"]
    assert (dest / "data" / "small.txt").read_text() == "kept\n"
    assert not (dest / "latest").exists() and not (dest / "latest").is_symlink()
    assert digest == tree_hash(dest)


def test_complete_checkout_names_nothing_absent(
    tmp_path: Path, git_repo: tuple[Path, str, str]
) -> None:
    repo, _, second = git_repo
    absent: list[str] = []
    materialize(
        RepoSource(kind="git", path=str(repo), revision=second),
        tmp_path,
        tmp_path / "dest",
        absent=absent,
    )
    assert absent == []
    assert (tmp_path / "dest" / "app.py").read_text() == "VERSION = 2\n"
