"""A project that depends on pip itself (pip-tools calls pip's internals) is set up as of its
revision's day with that day's pip, not the pip 26 the dated installs need: 518 of pip-tools'
842 tests failed against pip 26 (``'InstallRequirement' object has no attribute
'use_pep517'``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from recipebox import installed_version, project, set_up

from pytest_enconda.repo.test_deps import depends_on_pip
from pytest_enconda.verify.recipes import as_of_script, recipe_script


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {
                "pyproject.toml": '[project]\nname = "t"\n'
                'dependencies = ["click>=8", "pip >= 22.2"]\n'
            },
            True,
        ),
        (
            {
                "setup.py": "from setuptools import setup\n"
                "setup(name='t', install_requires=['pip>=20'])\n"
            },
            True,
        ),
        ({"setup.cfg": "[options]\ninstall_requires =\n    Pip>=21\n"}, True),
        ({"pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.8"\npip = "^23"\n'}, True),
        (
            {"pyproject.toml": '[project]\nname = "t"\ndependencies = ["pipdeptree", "pip-api"]\n'},
            False,
        ),
        (
            {"pyproject.toml": '[project]\nname = "t"\ndependencies = ["not a requirement ~~"]\n'},
            False,
        ),
        ({"requirements.txt": "pip\n"}, False),  # a requirements file installs pip, not the project
        ({}, False),
    ],
)
def test_a_declared_pip_dependency_is_found(
    tmp_path: Path, files: dict[str, str], expected: bool
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert depends_on_pip(tmp_path) is expected


def test_the_dated_recipe_ends_with_the_pip_of_the_day_only_when_asked() -> None:
    plain = as_of_script("#!/bin/bash\necho setup\n", "2024-05-13T05:22:04Z")
    era = as_of_script("#!/bin/bash\necho setup\n", "2024-05-13T05:22:04Z", era_pip=True)
    assert "enconda-era-pip" not in plain
    assert era.startswith(plain)
    assert era.index("echo setup") < era.index("pip download -q --no-deps")


@pytest.mark.slow
@pytest.mark.docker
def test_the_box_ends_with_the_pip_uploaded_before_the_day(
    tmp_path: Path, sandbox, base_image
) -> None:
    pyproject = '[project]\nname = "mini"\nversion = "0.1"\ndependencies = ["pip >= 22.2"]\n'
    repo = project(tmp_path / "repo", "mini", {"pyproject.toml": pyproject})
    assert depends_on_pip(repo)
    day = "2024-05-13T05:22:04Z"  # pip 24.0 came out 2024-02-03, 24.1 on 2024-06-20
    script = as_of_script(recipe_script(repo), day, era_pip=depends_on_pip(repo))
    with set_up(sandbox, base_image, repo, script, "t/era-pip") as (box, _):
        assert installed_version(box, "pip") == "24.0"
        assert installed_version(box, "mini") == "0.1"
