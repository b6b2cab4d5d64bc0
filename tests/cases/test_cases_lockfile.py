"""The reference recipe holds its installs to the versions the repository's lock file pins
(``repo/lockfile.py``): parsing each lock format, and the recipe run for real."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from recipebox import installed_version, set_up

from pytest_enconda.repo.lockfile import lock_constraints
from pytest_enconda.verify.recipes import recipe_script

POETRY_LOCK = """\
[[package]]
name = "Packaging"
version = "23.0"

[[package]]
name = "setuptools"
version = "59.0.0"

[[package]]
name = "minitool"
version = "0.1.0"

[[package]]
name = "law"
version = "0.1.0"
[package.source]
type = "git"
url = "https://github.com/riga/law"
"""
UV_LOCK = """\
version = 1
[[package]]
name = "iniconfig"
version = "2.0.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "minitool"
version = "0.1.0"
source = { editable = "." }
"""
PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "minitool"
version = "0.1.0"
dependencies = ["packaging"]
"""


@pytest.mark.parametrize(
    ("name", "text", "pins"),
    [
        # Build tools, the project itself and a git source are never constrained.
        ("poetry.lock", POETRY_LOCK, ["packaging==23.0"]),
        ("uv.lock", UV_LOCK, ["iniconfig==2.0.0"]),
        ("pdm.lock", '[[package]]\nname = "attrs"\nversion = "23.1.0"\n', ["attrs==23.1.0"]),
        (
            "Pipfile.lock",
            json.dumps(
                {
                    "default": {"Click": {"version": "==8.1.3"}},
                    "develop": {"pytest": {"version": "==7.4.0"}, "x": {"git": "u"}},
                }
            ),
            ["click==8.1.3", "pytest==7.4.0"],
        ),
        ("poetry.lock", "[[package]\nname =", []),  # does not parse: no evidence
    ],
)
def test_each_lock_format_gives_its_index_pins(
    tmp_path: Path, name: str, text: str, pins: list[str]
) -> None:
    (tmp_path / name).write_text(text)
    assert lock_constraints(tmp_path, frozenset({"minitool"})) == (
        (name, pins) if pins else ("", [])
    )


def test_no_lock_file_leaves_the_recipe_unconstrained(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    assert "PIP_CONSTRAINT" not in recipe_script(tmp_path)


def test_installs_that_fail_under_the_lock_are_tried_without_it(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "requirements.txt").write_text("packaging>=24\n")  # contradicts the lock
    (tmp_path / "poetry.lock").write_text(POETRY_LOCK)
    lines = recipe_script(tmp_path).splitlines()
    for install in ("python -m pip install -r requirements.txt", "python -m pip install -e ."):
        (line,) = [line for line in lines if line.startswith(install)]
        assert "unset PIP_CONSTRAINT;" in line, line


@pytest.mark.docker
def test_the_recipe_installs_the_locked_version(tmp_path: Path, sandbox, base_image) -> None:
    repo = tmp_path / "repo"
    (repo / "minitool").mkdir(parents=True)
    (repo / "minitool" / "__init__.py").write_text("")
    (repo / "pyproject.toml").write_text(PYPROJECT)
    (repo / "poetry.lock").write_text(POETRY_LOCK)
    script = recipe_script(repo)
    assert "export PIP_CONSTRAINT=" in script
    with set_up(sandbox, base_image, repo, script, "t/lock") as (box, _):
        # Unconstrained, pip would take today's packaging, far past 23.0.
        assert installed_version(box, "packaging") == "23.0"


def test_a_poetry_application_gets_its_dependencies_not_a_build(tmp_path: Path) -> None:
    # peering-manager (dev split): `[tool.poetry]` with no `[build-system]`; pip cannot build it.
    (tmp_path / "pyproject.toml").write_text(
        '[tool.poetry]\nname = "Peering Manager"\nversion = "1.9.0-dev"\n\n'
        '[tool.poetry.dependencies]\npython = ">=3.10,<3.13"\nDjango = ">=5.0,<5.1"\n'
        'channels = {extras = ["daphne"], version = "^4.0"}\nlocal = {path = "../x"}\n\n'
        '[tool.poetry.group.dev.dependencies]\npytest-django = {version = "^4.5"}\n'
    )
    script = recipe_script(tmp_path)
    assert "python -m pip install -e . || echo 'recipe: the checkout is no package" in script
    assert "python -m pip install 'Django>=5.0,<5.1' 'channels[daphne]>=4.0,<5'\n" in script
    assert "'pytest-django>=4.5,<5'" in script  # a group's table with a version


# A Poetry library whose build pip cannot run: the backend module does not exist. pip fails
# before any network use, as it failed on django-machina's metadata (an `||` constraint).
UNBUILDABLE = """\
[build-system]
requires = []
build-backend = "no_such_backend.api"

[tool.poetry]
name = "machinette"
version = "0.1.0"

[tool.poetry.dependencies]
python = ">=3.9"
iniconfig = "^2.0"
local = {path = "../x"}
"""


def test_a_checkout_pip_cannot_build_falls_back_to_its_poetry_dependencies(
    tmp_path: Path,
) -> None:
    (tmp_path / "pyproject.toml").write_text(UNBUILDABLE)
    (line,) = [line for line in recipe_script(tmp_path).splitlines() if "install -e" in line]
    assert line.startswith("{ python -m pip install -e . || python -m pip install .; } || {")
    assert "python -m pip install 'iniconfig>=2.0,<3' || echo" in line  # no path source
    # Then the checkout without its dependencies: its distribution is there for pkg_resources.
    assert line.endswith(
        "{ python -m pip install --no-deps -e . || python -m pip install --no-deps . "
        "|| echo 'recipe: the checkout did not install without its dependencies either'; }; }"
    )
    # A git source (OpenPulse's opps) is installed alone, at its ref, after the index ones.
    (tmp_path / "pyproject.toml").write_text(
        UNBUILDABLE + 'opps = {git = "https://github.com/open-pulse/opps", rev = "1a2b3c"}\n'
        'bad = {git = "file:///etc"}\n'
    )
    (line,) = [line for line in recipe_script(tmp_path).splitlines() if "install -e" in line]
    word = "'opps @ git+https://github.com/open-pulse/opps@1a2b3c'"
    assert (
        f"{{ python -m pip install {word} || python -m pip install --no-deps {word} "
        "|| echo 'recipe: opps did not install'; }" in line
    )
    assert "file:///etc" not in line
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)  # not Poetry: no fallback
    assert "Poetry dependencies" not in recipe_script(tmp_path)


@pytest.mark.docker
def test_the_fallback_installs_the_poetry_dependencies(tmp_path: Path, sandbox, base_image) -> None:
    repo = tmp_path / "repo"
    (repo / "machinette").mkdir(parents=True)
    (repo / "machinette" / "__init__.py").write_text("")
    (repo / "pyproject.toml").write_text(UNBUILDABLE)
    with set_up(sandbox, base_image, repo, recipe_script(repo), "t/poetry") as (box, output):
        assert "no_such_backend" in output  # the build really failed first
        assert installed_version(box, "iniconfig").startswith("2.")


# A Poetry library whose declared dependency no index has: neither the checkout nor its
# dependencies install, and the checkout without them still gives its distribution.
UNRESOLVABLE = """\
[build-system]
requires = ["poetry-core"]
build-backend = "poetry.core.masonry.api"

[tool.poetry]
name = "machinette"
version = "0.1.0"
description = ""
authors = []

[tool.poetry.dependencies]
python = ">=3.9"
enconda-no-such-package-4711 = "^1.0"
"""


@pytest.mark.slow
@pytest.mark.docker
def test_the_fallback_installs_the_checkout_without_its_dependencies(
    tmp_path: Path, sandbox, base_image
) -> None:
    repo = tmp_path / "repo"
    (repo / "machinette").mkdir(parents=True)
    (repo / "machinette" / "__init__.py").write_text("")
    (repo / "pyproject.toml").write_text(UNRESOLVABLE)
    with set_up(sandbox, base_image, repo, recipe_script(repo), "t/poetry-nodeps") as (box, out):
        assert "its Poetry dependencies instead" in out
        assert installed_version(box, "machinette") == "0.1.0"
