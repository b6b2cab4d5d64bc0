from pathlib import Path

import pytest
from verbump import VersionError, bump, read_version, write_version


@pytest.mark.parametrize(
    ("version", "part", "expected"),
    [
        ("1.4.2", "major", "2.0.0"),
        ("1.4.2", "minor", "1.5.0"),
        ("1.4.2", "patch", "1.4.3"),
        ("1.4", "patch", "1.4.1"),
        ("1.4.0rc2", "patch", "1.4.0"),
        ("1.4.0rc2", "pre", "1.4.0rc3"),
        ("2.0.0.dev3", "patch", "2.0.0"),
    ],
)
def test_bump(version: str, part: str, expected: str) -> None:
    assert bump(version, part) == expected


def test_invalid_versions_are_rejected() -> None:
    with pytest.raises(VersionError, match="not a PEP 440 version"):
        bump("latest", "patch")
    with pytest.raises(VersionError, match="not a pre-release"):
        bump("1.0.0", "pre")


def test_write_keeps_comments_and_other_tables(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(
        '# top comment\n[tool.x]\nversion = "9"\n\n[project]\nname = "p"\n'
        'version = "0.1.0"  # keep me\n'
    )
    write_version(path, "0.2.0")
    assert path.read_text() == (
        '# top comment\n[tool.x]\nversion = "9"\n\n[project]\nname = "p"\n'
        'version = "0.2.0"  # keep me\n'
    )
    assert read_version(path) == "0.2.0"


def test_dynamic_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text('[project]\nname = "p"\ndynamic = ["version"]\n')
    with pytest.raises(VersionError, match="dynamic"):
        read_version(path)
