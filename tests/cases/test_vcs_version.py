"""The reference recipe gives a checkout without ``.git`` a version for the build tool its
configuration names (cclib: versioningit, which takes none from the environment)."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest
from recipebox import installed_version, project, set_up, source_in_bash

from pytest_enconda.repo.vcs_version import version_setup
from pytest_enconda.verify.recipes import recipe_script

CCLIB = """\
[project]
name = "cclib"
dynamic = ["version"]
[build-system]
requires = ["setuptools >= 61.0", "versioningit>=2.0"]
build-backend = "setuptools.build_meta"
[tool.versioningit.vcs]
method = "git"
match = ["v*"]
[tool.versioningit.write]
file = "cclib/_version.py"
"""


def _exports(script: str) -> set[str]:
    return {
        line.split("=", 1)[0].removeprefix("export ")
        for line in script.splitlines()
        if line.startswith("export ")
    }


@pytest.mark.parametrize(
    ("rel", "text", "variable"),
    [
        (
            "setup.py",
            "from setuptools import setup\nsetup(setup_requires=['pbr'], pbr=True)\n",
            "PBR_VERSION",
        ),
        (
            "pyproject.toml",
            '[build-system]\nrequires = ["pbr>=6.0", "setuptools"]\n',
            "PBR_VERSION",
        ),
        (
            "pyproject.toml",
            '[build-system]\nrequires = ["poetry-core", "poetry-dynamic-versioning"]\n',
            "POETRY_DYNAMIC_VERSIONING_BYPASS",
        ),
        (
            "pyproject.toml",
            '[build-system]\nrequires = ["pdm-backend"]\n[tool.pdm.version]\nsource = "scm"\n',
            "PDM_BUILD_SCM_VERSION PDM_PEP517_SCM_VERSION",
        ),
        (
            "pyproject.toml",
            '[build-system]\nrequires = ["hatchling", "uv-dynamic-versioning"]\n',
            "UV_DYNAMIC_VERSIONING_BYPASS",
        ),
    ],
)
def test_the_tool_the_build_names_is_given_its_variable(
    tmp_path: Path, rel: str, text: str, variable: str
) -> None:
    (tmp_path / rel).write_text(text)
    script = recipe_script(tmp_path)
    named = variable.split()
    # No name declared: setuptools-scm's variables only where it is named too.
    assert _exports(script) == set(named)
    assert f'export {named[0]}="${{{named[0]}:-0.0.0}}"' in script
    assert "git init" not in script


def test_an_unnamed_project_gets_the_global_variables_only_where_a_tool_is_named(
    tmp_path: Path,
) -> None:
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nsetup(name=NAME, use_scm_version=True)\n"
    )
    script = recipe_script(tmp_path)
    assert _exports(script) == {"SETUPTOOLS_SCM_PRETEND_VERSION", "VCS_VERSIONING_PRETEND_VERSION"}
    assert "git init" not in script and "rm -rf .git" not in script
    # llm-random: a requirements file and no package: nothing to version, nothing exported
    # (the global variable made its matplotlib==3.5.1 sdist 0.0.0).
    (tmp_path / "setup.py").unlink()
    (tmp_path / "requirements.txt").write_text("matplotlib==3.5.1\n")
    assert _exports(recipe_script(tmp_path)) == set()


@pytest.mark.parametrize(
    ("rel", "text"),
    [
        ("pyproject.toml", '[project]\nname = "Excalibur_Tests"\ndynamic = ["version"]\n'),
        ("pyproject.toml", '[tool.poetry]\nname = "Excalibur_Tests"\n'),
        ("setup.cfg", "[metadata]\nname = Excalibur_Tests\n"),
        ("setup.py", "from setuptools import setup\nNAME = 'Excalibur_Tests'\nsetup(name=NAME)\n"),
        ("setup.py", "import setuptools\nsetuptools.setup(name='Excalibur_Tests')\n"),
    ],
)
def test_a_named_project_gets_the_version_for_its_distribution_only(
    tmp_path: Path, rel: str, text: str
) -> None:
    """The global variable versions every setuptools-scm sdist the install builds as 0.0.0."""
    (tmp_path / rel).write_text(text)
    exported = _exports(recipe_script(tmp_path))
    assert exported == {
        f"{prefix}_FOR_{suffix}"
        for prefix in ("SETUPTOOLS_SCM_PRETEND_VERSION", "VCS_VERSIONING_PRETEND_VERSION")
        for suffix in ("EXCALIBUR_TESTS",)
    }


def test_a_dotted_name_is_spelled_as_each_setuptools_scm_release_reads_it() -> None:
    before, _ = version_setup("", {}, dist_name="zope.interface")
    exported = {
        line.split("=", 1)[0].removeprefix("export ") for line in before if "export" in line
    }
    # 8+: canonicalised (ZOPE_INTERFACE); 6-7's "ZOPE.INTERFACE" is no shell name, left out.
    assert exported == {
        "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_ZOPE_INTERFACE",
        "VCS_VERSIONING_PRETEND_VERSION_FOR_ZOPE_INTERFACE",
    }


@pytest.mark.slow
@pytest.mark.docker
def test_a_setuptools_scm_dependency_keeps_its_own_version(
    tmp_path: Path, sandbox, base_image
) -> None:
    """excalibur-tests: titlecase 2.4.1 ships an sdist built by setuptools-scm; under the global
    variable its metadata said 0.0.0 and pip refused it ("inconsistent version")."""
    pyproject = (
        '[build-system]\nrequires = ["setuptools>=64", "setuptools-scm>=8"]\n'
        'build-backend = "setuptools.build_meta"\n'
        '[project]\nname = "scmdemo"\ndynamic = ["version"]\n'
        'dependencies = ["titlecase==2.4.1"]\n[tool.setuptools_scm]\n'
    )
    repo = project(tmp_path / "repo", "scmdemo", {"pyproject.toml": pyproject})
    script = "export PIP_NO_BINARY=titlecase\n" + recipe_script(repo)
    with set_up(sandbox, base_image, repo, script, "t/scm-dep") as (box, _):
        assert installed_version(box, "titlecase") == "2.4.1"
        assert installed_version(box, "scmdemo") == "0.0.0"


def test_versioningit_gets_a_throwaway_repository_around_the_installs(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(CCLIB)
    lines = recipe_script(tmp_path).splitlines()
    made = next(i for i, line in enumerate(lines) if "git init" in line)
    install = next(i for i, line in enumerate(lines) if "pip install -e ." in line)
    removed = next(i for i, line in enumerate(lines) if "rm -rf .git" in line)
    assert made < install < removed == len(lines) - 1
    assert "tag -a v0.0.0" in lines[made]


def test_miniver_gets_a_throwaway_repository_around_the_installs(tmp_path: Path) -> None:
    """menpo: miniver's _version.py says "unknown" without git; setuptools 66+ refuses it."""
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n\ndef get_version_and_cmdclass(package_path):\n"
        '    """Template code from miniver"""\n\n'
        "version, cmdclass = get_version_and_cmdclass('menpo')\n"
        "setup(name='menpo', version=version, cmdclass=cmdclass)\n"
    )
    lines = recipe_script(tmp_path).splitlines()
    made = next(i for i, line in enumerate(lines) if "git init" in line)
    install = next(i for i, line in enumerate(lines) if "pip install -e ." in line)
    removed = next(i for i, line in enumerate(lines) if "rm -rf .git" in line)
    assert made < install < removed
    assert "tag -a v0.0.0" in lines[made]


LHOTSE_SETUP = """\
from subprocess import DEVNULL, PIPE, run
from setuptools import setup

def version():
    try:
        commit = run(
            ["git", "rev-parse", "--short", "HEAD"], check=True, stdout=PIPE, stderr=DEVNULL
        ).stdout.decode().strip()
        return "1.25.0.dev+git." + commit
    except Exception:
        return "1.25.0.dev.unknownsource"

setup(name="gitver", version=version(), packages=["gitver"])
"""


def test_a_setup_py_that_runs_git_for_its_version_gets_a_throwaway_repository(
    tmp_path: Path,
) -> None:
    """lhotse: without git its version is ``1.25.0.dev.unknownsource``, which setuptools
    refuses; a setup.py that does not call git gets no repository."""
    (tmp_path / "setup.py").write_text(LHOTSE_SETUP)
    lines = recipe_script(tmp_path).splitlines()
    made = next(i for i, line in enumerate(lines) if "git init" in line)
    install = next(i for i, line in enumerate(lines) if "pip install -e ." in line)
    removed = next(i for i, line in enumerate(lines) if "rm -rf .git" in line)
    assert made < install < removed
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='x')\n")
    assert "git init" not in recipe_script(tmp_path)


@pytest.mark.docker
def test_a_setup_py_that_runs_git_for_its_version_builds_in_a_real_box(
    tmp_path: Path, sandbox, base_image
) -> None:
    repo = project(tmp_path / "repo", "gitver", {"setup.py": LHOTSE_SETUP})
    with set_up(sandbox, base_image, repo, recipe_script(repo), "t/git-setup-py") as (box, _):
        version = installed_version(box, "gitver")
        gone = box.exec(
            "test -e .git && echo left || echo gone", timeout=60, workdir="/data/project"
        )
    assert version.startswith("1.25.0.dev0+git."), version
    assert gone.output.strip() == "gone"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize(
    ("match", "tag", "describe"),
    [
        ('["v*"]', "v0.0.0", "git describe --tags --long --dirty --match v*"),
        ('["release-*"]', "release-0.0.0", "git describe --tags --long --dirty --match release-*"),
        # miniver's own call: no --tags, so a lightweight tag is passed over (menpo).
        ('["v*"]', "v0.0.0", "git describe --long --always"),
    ],
)
def test_the_throwaway_repository_is_what_versioningit_and_miniver_describe_then_gone(
    tmp_path: Path, match: str, tag: str, describe: str
) -> None:
    """The lines run as the recipe runs them (sourced under ``set -eo pipefail``), with
    the tool's own ``git describe`` in place of the install."""
    (tmp_path / "pyproject.toml").write_text(CCLIB.replace('["v*"]', match))
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "cclib").mkdir()
    (tmp_path / "cclib" / "__init__.py").write_text("")
    text = (tmp_path / "pyproject.toml").read_text()
    before, after = version_setup(text, tomllib.loads(text))
    probe = f"{describe} > described"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    run = source_in_bash("\n".join([*before, probe, *after]) + "\n", tmp_path, env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "described").read_text().startswith(f"{tag}-0-g")
    assert not (tmp_path / ".git").exists()


DATAMOL = (
    '[build-system]\nrequires = ["setuptools", "setuptools-scm"]\n'
    'build-backend = "setuptools.build_meta"\n'
    '[project]\nname = "scmdemo"\ndynamic = ["version"]\n'
    '[tool.setuptools_scm]\nfallback_version = "{fallback}"\n'
)


@pytest.mark.parametrize(
    ("fallback", "name", "expected"),
    [
        ("dev", "scmdemo", {"SETUPTOOLS_SCM_OVERRIDES_FOR_SCMDEMO"}),
        ("0.1.dev0", "scmdemo", set()),  # a version already: nothing to replace
        ("dev", "", set()),  # no name, no variable for the project alone
    ],
)
def test_a_fallback_that_is_no_version_is_overridden_for_the_project_alone(
    fallback: str, name: str, expected: set[str]
) -> None:
    text = DATAMOL.format(fallback=fallback).replace('name = "scmdemo"', f'name = "{name}"')
    before, _ = version_setup(text, tomllib.loads(text), dist_name=name)
    overrides = {
        line.split("=", 1)[0].removeprefix("export ")
        for line in before
        if line.startswith("export SETUPTOOLS_SCM_OVERRIDES")
    }
    assert overrides == expected
    if expected:
        line = next(line for line in before if "OVERRIDES" in line)
        assert line.endswith("""='{fallback_version = "0.0.0"}'""")


@pytest.mark.slow
@pytest.mark.docker
def test_the_newest_setuptools_scm_builds_a_checkout_whose_fallback_is_no_version(
    tmp_path: Path, sandbox, base_image
) -> None:
    """datamol's ``fallback_version = "dev"``: setuptools-scm 10 reads it while listing the files
    of a checkout without .git, and refused it ("Invalid version: 'dev'") until overridden."""
    repo = project(tmp_path / "repo", "scmdemo", {"pyproject.toml": DATAMOL.format(fallback="dev")})
    with set_up(sandbox, base_image, repo, recipe_script(repo), "t/scm-fallback") as (box, _):
        assert installed_version(box, "scmdemo") == "0.0.0"
