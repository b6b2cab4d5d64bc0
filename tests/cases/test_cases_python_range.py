"""The Python range a repository declares, and the base image verify picks from it: the dev
split's hknweb (``<3.10,>=3.9``) and columnflow (``<=3.11,>=3.7``) failed on bookworm's 3.11.2."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_enconda.repo.python_range import DeclaredPython, declared_python
from pytest_enconda.sandbox.recipes import BASE_RECIPES, DEFAULT_BASE, choose_base, pick_base


def repo(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("files", "source", "text", "allows_3_9", "allows_3_11"),
    [
        (
            {"pyproject.toml": '[project]\nname = "x"\nrequires-python = "<3.10,>=3.9"\n'},
            "pyproject.toml [project] requires-python",
            "<3.10,>=3.9",
            True,
            False,
        ),
        (
            {"pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.9"\nrequests = "*"\n'},
            "pyproject.toml [tool.poetry.dependencies] python",
            "^3.9",
            True,
            True,
        ),
        # Poetry's bare version is its series (python_version == "3.9"), not 3.9.0.
        (
            {"pyproject.toml": '[tool.poetry.dependencies]\npython = "3.9"\n'},
            "pyproject.toml [tool.poetry.dependencies] python",
            "3.9",
            True,
            False,
        ),
        (
            {"pyproject.toml": '[tool.poetry.dependencies]\npython = ">=3.7,<3.10 || ^3.12"\n'},
            "pyproject.toml [tool.poetry.dependencies] python",
            ">=3.7,<3.10 || ^3.12",
            True,
            False,
        ),
        (
            {"setup.cfg": "[metadata]\nname = x\n[options]\npython_requires = <=3.11,>=3.7\n"},
            "setup.cfg [options] python_requires",
            "<=3.11,>=3.7",
            True,
            False,
        ),
        (
            {
                "setup.py": "from setuptools import setup\n"
                'setup(name="x", python_requires="~=3.9.0")\n'
            },
            "setup.py python_requires",
            "~=3.9.0",
            True,
            False,
        ),
        (
            {
                "setup.py": 'from setuptools import setup\nPY = ">=3.10"\n'
                'if True:\n    setup(name="x", python_requires=PY)\n'
            },
            "setup.py python_requires",
            ">=3.10",
            False,
            True,
        ),
    ],
)
def test_each_file_kind_is_read(
    tmp_path: Path,
    files: dict[str, str],
    source: str,
    text: str,
    allows_3_9: bool,
    allows_3_11: bool,
) -> None:
    declared = declared_python(repo(tmp_path, files))
    assert declared is not None and declared.readable
    assert (declared.source, declared.text) == (source, text)
    assert (declared.allows("3.9.2"), declared.allows("3.11.2")) == (allows_3_9, allows_3_11)


def test_pyproject_project_wins_over_the_older_files(tmp_path: Path) -> None:
    declared = declared_python(
        repo(
            tmp_path,
            {
                "pyproject.toml": '[project]\nrequires-python = ">=3.12"\n',
                "setup.cfg": "[options]\npython_requires = <3.10\n",
                "setup.py": 'setup(python_requires="<3.8")\n',
            },
        )
    )
    assert declared is not None and declared.source.startswith("pyproject.toml [project]")


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"pyproject.toml": '[project]\nname = "x"\n[tool.poetry.dependencies]\npython = "*"\n'},
        {"setup.py": "import setuptools\nsetuptools.setup(python_requires=compute())\n"},
        {"pyproject.toml": "not toml [", "setup.py": "def broken(:\n"},
    ],
)
def test_nothing_declared_is_none(tmp_path: Path, files: dict[str, str]) -> None:
    assert declared_python(repo(tmp_path, files)) is None


def test_an_unreadable_range_says_why(tmp_path: Path) -> None:
    pep = declared_python(repo(tmp_path, {"setup.cfg": "[options]\npython_requires = 3.8+\n"}))
    assert pep is not None and pep.problem == "not a PEP 440 version specifier"
    assert not pep.allows("3.11.2")
    poetry = declared_python(
        repo(tmp_path, {"pyproject.toml": '[tool.poetry.dependencies]\npython = "latest"\n'})
    )
    assert poetry is not None and "not read" in poetry.problem


def declared(text: str) -> DeclaredPython:
    return DeclaredPython(text, "setup.cfg [options] python_requires", alternatives=(text,))


@pytest.mark.parametrize(
    ("text", "base"),
    [
        ("<3.10,>=3.9", "bullseye-py3.9"),  # compserv/hknweb
        ("<=3.11,>=3.7", "bullseye-py3.9"),  # columnflow/columnflow: 3.11.2 > 3.11
        (">=3.12", "trixie-py3.13"),
        (">=3.8", DEFAULT_BASE),
        ("<=3.11.2", DEFAULT_BASE),
        # 3.9.2 and 3.13.5 are both two minors away from 3.11: the older one.
        ("!=3.11.*", "bullseye-py3.9"),
    ],
)
def test_the_closest_base_whose_python_the_range_allows(text: str, base: str) -> None:
    assert pick_base(declared(text)).name == base


def test_the_reason_names_the_range_and_the_versions() -> None:
    choice = pick_base(declared("<=3.11,>=3.7"))
    assert choice.reason == (
        "setup.cfg [options] python_requires '<=3.11,>=3.7' excludes 3.11.2, allows 3.9.2"
    )
    kept = pick_base(declared(">=3.8"))
    assert kept.reason == "setup.cfg [options] python_requires '>=3.8' allows 3.11.2"


def test_the_default_is_kept_when_nothing_declared_unreadable_or_nothing_fits() -> None:
    assert pick_base(None) == (DEFAULT_BASE, "no Python range declared")
    bad = DeclaredPython("3.8+", "setup.cfg [options] python_requires", problem="not PEP 440")
    assert pick_base(bad) == (
        DEFAULT_BASE,
        "setup.cfg [options] python_requires '3.8+' cannot be read (not PEP 440)",
    )
    old = pick_base(declared("<3.8"))
    assert old.name == DEFAULT_BASE
    assert old.reason.endswith("allows none of the bases' Pythons (3.9.2, 3.11.2, 3.13.5)")


def test_another_default_is_honoured() -> None:
    assert pick_base(declared(">=3.9"), "trixie-py3.13").name == "trixie-py3.13"
    assert pick_base(declared("<3.13"), "trixie-py3.13").name == DEFAULT_BASE


def test_choose_base_reads_the_checkout(tmp_path: Path) -> None:
    checkout = repo(tmp_path, {"pyproject.toml": '[project]\nrequires-python = "<3.10,>=3.9"\n'})
    assert choose_base(checkout).name == "bullseye-py3.9"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert choose_base(empty).name == DEFAULT_BASE


def test_recipes_record_their_full_python_outside_the_image_hash() -> None:
    for recipe in BASE_RECIPES.values():
        # Debian's python3 of the release; the build checks the major.minor.
        assert recipe.python_release.startswith(recipe.python + ".")
        # A fact about the release, not a build input: adding it rebuilt no base.
        assert "python_release" not in recipe.fingerprint()
