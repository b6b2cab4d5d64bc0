"""verify declares as test requirements only what the project's runtime requirements do not name
(issue 47 item 1): the record keeps those names, and the progress says what was left out."""

from __future__ import annotations

from pathlib import Path

from gitutil import git
from verifyfake import NoImage, fake_context

from pytest_enconda.verify import verify_repository

PYPROJECT = '[project]\nname = "hooks"\ndependencies = ["Requests>=2", "attrs"]\n'
TOX = (
    "[testenv]\ndeps =\n    -r requirements.txt\n    requests[socks]\n    requests-mock\n"
    "    .[test]\n"
)


def test_the_record_lists_no_runtime_requirement_as_a_test_one(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    (origin / "hooks").mkdir(parents=True)
    git(origin, "init", "--quiet", "--initial-branch=main")
    (origin / "pyproject.toml").write_text(PYPROJECT)
    (origin / "tox.ini").write_text(TOX)
    (origin / "requirements.txt").write_text("attrs\nurllib3<2\n")
    (origin / "hooks" / "__init__.py").write_text("")
    git(origin, "add", "-A")
    git(origin, "commit", "--quiet", "-m", "one")
    mirror = tmp_path / "mirror"
    git(tmp_path, "clone", "--quiet", "--bare", str(origin), str(mirror / "o+hooks" / "repo"))
    lines: list[str] = []
    backend = NoImage(tmp_path / "fake")
    ctx = fake_context(tmp_path, mirror, lines, backend=backend, logs=tmp_path / "logs")
    record = verify_repository(ctx, "o/hooks", git(origin, "rev-parse", "HEAD"))
    assert record.runtime_requirements == ["attrs", "requests", "urllib3"]
    assert record.test_requirements == ["requests-mock"]
    assert list(record.test_requirement_sources) == ["requests-mock"]
    said = next(line for line in lines if "left to the setup" in line)
    assert "requests[socks]" in said and "urllib3<2" in said
