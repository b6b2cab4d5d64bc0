"""verify builds a repository's reference on the base whose Python its declared range allows
(compserv/hknweb's ``<3.10,>=3.9`` failed on bookworm's 3.11.2), records it, and says why."""

from __future__ import annotations

from pathlib import Path

from gitutil import git
from verifyfake import NoImage, fake_context

from pytest_enconda.backends.fake import FakeBackend, canned
from pytest_enconda.cases.sidecar import RepoVerification
from pytest_enconda.verify import VerifyContext, verify_repository
from pytest_enconda.verify.attempt import attempt

NARROW = '[project]\nname = "x"\nrequires-python = "<3.10,>=3.9"\n'


def snapshot(tmp_path: Path, pyproject: str, **files: str) -> tuple[Path, str]:
    """A bare clone in the fetch tool's layout, and its commit."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "--quiet", "--initial-branch=main")
    (origin / "pyproject.toml").write_text(pyproject)
    # A package for the checkout proof to look for: without one no attempt is made.
    (origin / "n").mkdir()
    (origin / "n" / "__init__.py").write_text("")
    for name, text in files.items():
        (origin / name.replace("_", ".")).write_text(text)
    git(origin, "add", "-A")
    git(origin, "commit", "--quiet", "-m", "one")
    bare = tmp_path / "o+n" / "repo"
    git(tmp_path, "clone", "--quiet", "--bare", str(origin), str(bare))
    return bare, git(origin, "rev-parse", "HEAD")


def context(
    tmp_path: Path, mirror: Path, pull_base: str | None = None
) -> tuple[VerifyContext, NoImage, list[str]]:
    """verify's context up to the image: the backend notes the base and stops there; the
    context, its backend and the progress lines."""
    backend = NoImage(tmp_path / "fake")
    lines: list[str] = []
    ctx = fake_context(
        tmp_path, mirror, lines, backend=backend, pull_base=pull_base, logs=tmp_path / "logs"
    )
    return ctx, backend, lines


def test_a_narrow_range_builds_and_records_the_older_base(tmp_path: Path) -> None:
    tox = "[testenv]\ndeps =\n    py39: backports.zoneinfo\n    py311: tomli-w\n"
    mirror, commit = snapshot(tmp_path, NARROW, tox_ini=tox)
    ctx, backend, lines = context(tmp_path, mirror)
    record = verify_repository(ctx, "o/n", commit)
    assert backend.bases() == ["bullseye-py3.9"] and record.base_image == "bullseye-py3.9"
    # The test requirements are those of tox's environment on that Python.
    assert record.test_requirements == ["backports.zoneinfo"]
    assert (
        "o/n: base bullseye-py3.9: pyproject.toml [project] requires-python '<3.10,>=3.9' "
        "excludes 3.11.2, allows 3.9.2" in lines
    )
    # The choice comes before the build it decides: the line precedes the image's.
    assert lines.index("o/n: building its image") > lines.index(
        next(line for line in lines if line.startswith("o/n: base "))
    )


def test_a_range_the_default_fits_keeps_the_default(tmp_path: Path) -> None:
    mirror, commit = snapshot(tmp_path, '[project]\nrequires-python = ">=3.8"\n')
    ctx, backend, _ = context(tmp_path, mirror)
    record = verify_repository(ctx, "o/n", commit)
    assert backend.bases() == ["bookworm-py3.11"] and record.base_image == "bookworm-py3.11"


def test_a_pulled_base_is_not_chosen(tmp_path: Path) -> None:
    """``pull_base`` replaces every recipe's Debian tree: another recipe would not change the
    interpreter, only fail its version check."""
    mirror, commit = snapshot(tmp_path, NARROW)
    ctx, backend, lines = context(tmp_path, mirror, pull_base="registry.example/base:1")
    record = verify_repository(ctx, "o/n", commit)
    assert backend.bases() == ["bookworm-py3.11"] and record.base_image == "bookworm-py3.11"
    assert (
        "o/n: base bookworm-py3.11: the base is pulled (registry.example/base:1), not chosen"
        in lines
    )


def test_the_setup_shares_the_download_cache_of_its_own_base(tmp_path: Path) -> None:
    """Wheels built for 3.9 are no use to 3.11: the boxes get the chosen base's cache."""
    backend = FakeBackend(tmp_path / "fake", responder=lambda *_a: canned("boom", 1))
    image = backend.add_image("img")
    ctx = fake_context(tmp_path, None, [], backend=backend)
    record = RepoVerification(
        repository="o/n", revision="r", status="unverified", base_image="bullseye-py3.9"
    )
    assert not attempt(ctx, record, image, "recipe", "pip install .\n", tmp_path, [])
    assert [call.detail["download_cache"] for call in backend.ops("start")] == [
        "base:bullseye-py3.9"
    ]
