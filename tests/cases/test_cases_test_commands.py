"""Test command discovery: each source in its order of trust, normalisation, test tools, recipe."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_enconda.repo.command_normalise import normalise, normalise_django, normalise_unittest
from pytest_enconda.repo.project import flat_requirements, release_for_url, root_requirements
from pytest_enconda.repo.test_commands import (
    ci_setup_lines,
    discover_test_command,
    django_settings,
)
from pytest_enconda.repo.test_tools import test_tools
from pytest_enconda.verify.recipes import ci_file_steps, recipe_script, with_file_steps


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


WORKFLOW = """\
    name: tests
    on: [push]
    jobs:
      test:
        runs-on: ubuntu-latest
        steps:
          - uses: actions/checkout@v4
          - name: Run pytest with coverage
            run: |
              pip install -e .[test]
              python -m pytest tests/unit -x -n auto --cov=pkg --cov-report xml -m "not slow"
"""


def test_ci_workflow_wins_and_is_normalised(tmp_path: Path) -> None:
    write(tmp_path, ".github/workflows/ci.yml", WORKFLOW)
    write(tmp_path, "tox.ini", "[testenv]\ncommands = pytest other\n")
    write(tmp_path, "tests/unit/test_a.py", "def test_a(): pass\n")
    found = discover_test_command(tmp_path)
    assert found.source == "ci"
    assert found.detail == ".github/workflows/ci.yml"
    # Early stops, workers and coverage are dropped; paths and markers stay.
    assert found.command == "python -m pytest tests/unit -m 'not slow'"
    assert "python -m pytest tests/unit -x" in found.raw


def test_ci_step_working_directory_is_kept(tmp_path: Path) -> None:
    # pretalx: `pytest tests` runs in ./src; from the root it finds no tests at all.
    write(
        tmp_path,
        ".github/workflows/tests.yml",
        "jobs:\n  test:\n    steps:\n      - run: python manage.py check\n"
        "      - working-directory: ./src\n        run: |\n"
        "          python -m pytest \\\n            -n 3 -p no:sugar \\\n            tests\n",
    )
    assert discover_test_command(tmp_path).command == "cd src && python -m pytest -p no:sugar tests"
    # The job's defaults apply too; an expression or the root itself means no cd.
    write(
        tmp_path,
        ".github/workflows/tests.yml",
        "jobs:\n  test:\n    defaults:\n      run:\n        working-directory: pkg/\n"
        "    steps:\n      - run: pytest\n",
    )
    assert discover_test_command(tmp_path).command == "cd pkg && python -m pytest"
    for folder in (".", "${{ matrix.dir }}"):
        write(
            tmp_path,
            ".github/workflows/tests.yml",
            f"jobs:\n  t:\n    steps:\n      - working-directory: '{folder}'\n"
            "        run: pytest\n",
        )
        assert discover_test_command(tmp_path).command == "python -m pytest"


def test_a_step_testing_another_repository_is_passed_over(tmp_path: Path) -> None:
    """roiextractors' dev-testing clones neuroconv and runs its tests: none of those paths is in
    the checkout, so its own workflow's step (tests/test_internals) is the command."""
    write(
        tmp_path,
        ".github/workflows/dev-testing.yaml",
        "jobs:\n  run:\n    steps:\n      - run: pip install .[test]\n"
        "      - run: git clone https://github.com/catalystneuro/neuroconv.git\n"
        "      - run: pytest -n auto neuroconv/tests/test_ophys neuroconv/tests/test_x.py::t\n",
    )
    write(
        tmp_path,
        ".github/workflows/run-tests.yml",
        "jobs:\n  t:\n    steps:\n      - run: pip install .[test]\n"
        "      - run: pytest tests/test_internals -n auto\n",
    )
    write(tmp_path, "tests/test_internals/test_a.py", "def test_a(): pass\n")
    found = discover_test_command(tmp_path)
    assert (found.command, found.detail) == (
        "python -m pytest tests/test_internals",
        ".github/workflows/run-tests.yml",
    )
    assert ci_setup_lines(tmp_path, found) == ["pip install .[test]"]
    # A path that is there (one of several, a test id, a folder given with its slash) keeps it.
    write(tmp_path, "neuroconv/tests/test_x.py", "def test_t(): pass\n")
    assert discover_test_command(tmp_path).detail == ".github/workflows/dev-testing.yaml"


def test_step_names_and_install_lines_are_not_commands(tmp_path: Path) -> None:
    write(
        tmp_path,
        ".github/workflows/test.yml",
        "steps:\n  - name: Test with pytest\n  - run: pip install pytest\n",
    )
    found = discover_test_command(tmp_path)
    assert found.source == "default"


def test_ci_delegating_to_tox_reads_the_tox_commands(tmp_path: Path) -> None:
    write(tmp_path, ".github/workflows/ci.yml", "steps:\n  - run: tox -e py\n")
    write(
        tmp_path,
        "tox.ini",
        """\
        [tox]
        envlist = py
        [testenv:lint]
        commands = flake8
        [testenv]
        deps = pytest-mock
        commands =
            pytest {posargs:tests} --durations=10
        """,
    )
    found = discover_test_command(tmp_path)
    assert (found.source, found.detail) == ("tox", "tox.ini [testenv] commands")
    assert found.command == "python -m pytest"
    assert found.raw == "pytest {posargs:tests} --durations=10"


def test_nox_session_run(tmp_path: Path) -> None:
    write(
        tmp_path,
        "noxfile.py",
        """\
        import nox

        @nox.session
        def tests(session):
            session.install(".[test]")
            session.run("pytest", "-q", "src/tests", *session.posargs)
        """,
    )
    found = discover_test_command(tmp_path)
    assert found.source == "nox"
    assert found.command == "python -m pytest -q src/tests"


@pytest.mark.parametrize(
    ("rel", "text", "detail"),
    [
        ("pytest.ini", "[pytest]\naddopts = -ra\n", "pytest.ini"),
        (
            "pyproject.toml",
            "[tool.pytest.ini_options]\ntestpaths = ['t']\n",
            "pyproject.toml [tool.pytest.ini_options]",
        ),
        ("setup.cfg", "[tool:pytest]\ntestpaths = t\n", "setup.cfg [tool:pytest]"),
    ],
)
def test_pytest_configuration(tmp_path: Path, rel: str, text: str, detail: str) -> None:
    write(tmp_path, rel, text)
    found = discover_test_command(tmp_path)
    assert (found.source, found.detail, found.command) == (
        "pytest-config",
        detail,
        "python -m pytest",
    )


def test_readme_then_default(tmp_path: Path) -> None:
    assert discover_test_command(tmp_path).source == "default"
    write(tmp_path, "README.rst", "Testing\n-------\n\n::\n\n    $ py.test -v tests/\n")
    found = discover_test_command(tmp_path)
    assert (found.source, found.detail, found.command) == (
        "readme",
        "README.rst",
        "python -m pytest -v tests/",
    )


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("poetry run pytest tests --cov-report=xml", "python -m pytest tests"),
        ("coverage run -m pytest -q", "python -m pytest -q"),
        ("cd src && PYTHONPATH=. pytest -n4 --lf t", "python -m pytest t"),
        ("pytest --cov --cov-report term -v", "python -m pytest -v"),
        ("pytest ${{ matrix.args }} tests", "python -m pytest tests"),
        # huggingface/datasets: an option whose value is a CI expression goes with it.
        (
            "python -m pytest -rfExX -m ${{ matrix.test }} -n 2 --dist loadfile -sv ./tests/",
            "python -m pytest -rfExX -sv ./tests/",
        ),
        ("pytest -k $SELECTION -q tests", "python -m pytest -q tests"),
        ("echo pytestify", None),
        ("make test", None),
    ],
)
def test_normalise(line: str, command: str | None) -> None:
    assert normalise(line) == command


def test_tools_from_extras_requirement_files_and_options(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        """\
        [project]
        name = "pkg"
        [project.optional-dependencies]
        test = ["pytest>=7,<9", "pytest-asyncio", "hypothesis"]
        docs = ["pytest-sphinx-not-a-test-tool"]
        [tool.pytest.ini_options]
        addopts = "--cov=pkg --timeout=60"
        """,
    )
    write(tmp_path, "requirements-test.txt", "pytest-mock==3.12  # mocks\nrequests\n")
    tools = test_tools(tmp_path, "python -m pytest")
    assert tools[0] == "pytest>=7,<9"
    assert set(tools[1:]) == {"pytest-asyncio", "pytest-mock==3.12", "pytest-cov", "pytest-timeout"}


def test_tools_default_to_pytest(tmp_path: Path) -> None:
    assert test_tools(tmp_path, "python -m pytest") == ["pytest<9"]


def test_recipe_installs_from_source_with_the_test_extra(tmp_path: Path) -> None:
    write(
        tmp_path,
        "setup.py",
        "setup(name='p', extras_require={'testing': ['pytest'], 'docs': ['sphinx']})\n",
    )
    write(tmp_path, "requirements.txt", "requests\n")
    write(tmp_path, "requirements/test.txt", "pytest\n")
    script = recipe_script(tmp_path)
    lines = script.splitlines()
    assert lines[0] == "#!/bin/bash"
    assert any(line.startswith("python -m pip install -r requirements.txt || ") for line in lines)
    assert "python -m pip install -e '.[testing]' || python -m pip install '.[testing]'" in lines
    assert any(
        line.startswith("python -m pip install -r requirements/test.txt ||") for line in lines
    )
    assert "SETUPTOOLS_SCM_PRETEND_VERSION" in script


@pytest.mark.parametrize(
    ("files", "installs"),
    [
        ({"pyproject.toml": "[tool.black]\nline-length = 127\n"}, False),
        ({"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"}, False),
        ({"pyproject.toml": "[project]\nname = 'p'\n"}, True),
        ({"pyproject.toml": "[build-system]\nrequires = ['hatchling']\n"}, True),
        ({"pyproject.toml": "[tool.poetry]\nname = 'p'\n"}, True),
        ({"setup.cfg": "[metadata]\nname = p\n"}, True),
        ({"setup.cfg": "[flake8]\nmax-line-length = 99\n"}, False),
        ({"setup.py": "setup()\n"}, True),
    ],
)
def test_recipe_installs_the_checkout_only_when_it_is_a_package(
    tmp_path: Path, files: dict[str, str], installs: bool
) -> None:
    # bitcart: an application whose pyproject only configures black, isort and pytest; pip's
    # flat-layout discovery refused its folders and the whole setup failed.
    for name, text in files.items():
        write(tmp_path, name, text)
    write(tmp_path, "requirements.txt", "fastapi\n")
    script = recipe_script(tmp_path)
    assert ("pip install -e ." in script) is installs
    assert "python -m pip install -r requirements.txt" in script


def test_recipe_installs_system_packages_first_and_refuses_odd_names(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[project]\nname = 'p'\n")
    script = recipe_script(tmp_path, ["libcairo2-dev", "pkg; rm -rf /"])
    lines = script.splitlines()
    apt = next(index for index, line in enumerate(lines) if "apt-get install" in line)
    pip = next(index for index, line in enumerate(lines) if "pip install -e" in line)
    assert apt < pip
    assert lines[apt].endswith("libcairo2-dev) || echo 'recipe: system packages did not install'")
    assert "rm -rf" not in script
    assert "apt-get" not in recipe_script(tmp_path)


def test_tools_from_poetry_constraints_and_option_prefixes(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        """\
        [tool.poetry.group.test.dependencies]
        pytest-asyncio = "~0.18.3"
        pytest-mock = "^3.10"
        [tool.pytest.ini_options]
        addopts = "--benchmark-disable"
        """,
    )
    tools = test_tools(tmp_path, "python -m pytest")
    # Poetry's ~ and ^ become PEP 440 ranges with Poetry's upper bounds (pip refuses
    # 'pytest-asyncio~0.18.3').
    assert "pytest-asyncio>=0.18.3,<0.19" in tools and "pytest-mock>=3.10,<4" in tools
    assert "pytest-benchmark" in tools


@pytest.mark.parametrize(
    ("declared", "installed"),
    [
        ("pytest>=7", "pytest>=7,<9"),  # asdf: pytest 9's deprecations broke its collection
        ("pytest", "pytest<9"),
        ("pytest>=6,<8", "pytest>=6,<8"),
        ("pytest==7.4.4", "pytest==7.4.4"),
        ("pytest~=7.0", "pytest~=7.0"),
    ],
)
def test_a_declared_pytest_without_upper_bound_is_capped(
    tmp_path: Path, declared: str, installed: str
) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        f'[project]\nname = "pkg"\n[project.optional-dependencies]\ntest = ["{declared}"]\n',
    )
    assert test_tools(tmp_path, "python -m pytest")[0] == installed


MANAGE_PY = """\
    import os
    import sys

    if __name__ == "__main__":
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.app.settings")
        from django.core.management import execute_from_command_line
        execute_from_command_line(sys.argv)
"""


def test_a_django_project_tested_with_manage_py_gets_its_settings(tmp_path: Path) -> None:
    # django-bootstrap4: tox runs `python manage.py test`; under bare pytest all 73 tests erred.
    write(tmp_path, "manage.py", MANAGE_PY)
    write(tmp_path, "tests/app/settings.py", "SECRET_KEY = 'x'\n")
    write(tmp_path, "tox.ini", "[testenv]\ncommands = python manage.py test {posargs}\n")
    settings = django_settings(tmp_path)
    assert settings is not None
    assert (settings.module, settings.source, settings.configured) == (
        "tests.app.settings",
        "manage.py",
        False,
    )
    found = discover_test_command(tmp_path)
    # Django's runner collects test*.py (an app's tests.py too): the pattern goes with it.
    assert (found.source, found.raw) == ("tox", "python manage.py test {posargs}")
    assert found.command == "python -m pytest -o 'python_files=test*.py' --ds=tests.app.settings"
    assert "pytest-django" in test_tools(tmp_path, found.command)


def test_runtests_py_assignment_and_tox_setenv_name_the_settings(tmp_path: Path) -> None:
    # wagtailmenus: `os.environ['DJANGO_SETTINGS_MODULE'] = '...'` in runtests.py.
    write(
        tmp_path, "runtests.py", "os.environ['DJANGO_SETTINGS_MODULE'] = 'pkg.settings.testing'\n"
    )
    write(tmp_path, "pkg/settings/testing.py", "")
    assert discover_test_command(tmp_path).command == ("python -m pytest --ds=pkg.settings.testing")
    other = tmp_path / "other"
    write(other, "tox.ini", "[testenv]\nsetenv =\n    DJANGO_SETTINGS_MODULE=proj.settings\n")
    write(other, "src/proj/settings/__init__.py", "")
    settings = django_settings(other)
    assert settings is not None
    assert (settings.module, settings.source) == ("proj.settings", "tox.ini [testenv] setenv")


@pytest.mark.parametrize(
    ("rel", "text"),
    [
        ("pytest.ini", "[pytest]\nDJANGO_SETTINGS_MODULE = proj.settings\n"),
        ("setup.cfg", "[tool:pytest]\naddopts = --ds=proj.settings -v\n"),
        ("pyproject.toml", '[tool.pytest.ini_options]\nDJANGO_SETTINGS_MODULE = "proj.settings"\n'),
    ],
)
def test_settings_in_pytest_configuration_need_only_the_plugin(
    tmp_path: Path, rel: str, text: str
) -> None:
    write(tmp_path, rel, text)
    write(tmp_path, "manage.py", MANAGE_PY)
    write(tmp_path, "tests/app/settings.py", "")
    settings = django_settings(tmp_path)
    assert settings is not None
    assert (settings.module, settings.configured) == ("proj.settings", True)
    found = discover_test_command(tmp_path)
    assert "--ds" not in found.command
    assert "pytest-django" in test_tools(tmp_path, found.command)


def test_no_settings_where_the_module_is_missing_or_a_conftest_configures_django(
    tmp_path: Path,
) -> None:
    # An example project's module the checkout lacks would stop pytest-django before any test.
    write(tmp_path, "manage.py", MANAGE_PY)
    assert django_settings(tmp_path) is None
    assert discover_test_command(tmp_path).command == "python -m pytest"
    assert test_tools(tmp_path, "python -m pytest") == ["pytest<9"]
    write(tmp_path, "tests/app/settings.py", "")
    write(tmp_path, "conftest.py", "from django.conf import settings\nsettings.configure()\n")
    assert django_settings(tmp_path) is None
    # Not a Django project at all.
    assert django_settings(tmp_path / "nothing") is None


def test_pytest_django_options_are_test_tools(tmp_path: Path) -> None:
    write(tmp_path, "pytest.ini", "[pytest]\naddopts = --nomigrations --reuse-db\n")
    assert "pytest-django" in test_tools(tmp_path, "python -m pytest")


def test_tox_changedir_is_kept_in_the_command(tmp_path: Path) -> None:
    # django-autocomplete-light: its test apps lie under test_project, where tox runs pytest.
    write(
        tmp_path,
        "tox.ini",
        """\
        [testenv]
        changedir = {toxinidir}/test_project
        commands = pytest -v --cov --liveserver 127.0.0.1:9999 secure_data select2_list
        """,
    )
    assert discover_test_command(tmp_path).command == (
        "cd test_project && python -m pytest -v --liveserver 127.0.0.1:9999 "
        "secure_data select2_list"
    )
    for changedir in ("{toxinidir}", "/abs/path", "{toxinidir}/../up", "{envtmpdir}"):
        write(tmp_path, "tox.ini", f"[testenv]\nchangedir = {changedir}\ncommands = pytest\n")
        assert discover_test_command(tmp_path).command == "python -m pytest"


@pytest.mark.parametrize(
    ("rel", "text"),
    [
        ("pyproject.toml", '[tool.pytest.ini_options]\naddopts = ["--nbval-lax", "-ra"]\n'),
        ("pytest.ini", "[pytest]\naddopts = --nbval-lax -ra\n"),
        ("setup.cfg", "[tool:pytest]\naddopts =\n    --nbval-lax\n    -ra\n"),
        ("tox.ini", "[pytest]\naddopts = --nbval-lax -ra\n"),
    ],
)
def test_a_plugins_option_in_addopts_or_the_command_names_the_plugin(
    tmp_path: Path, rel: str, text: str
) -> None:
    # litgpt's `pytest --check-links README.md`: without pytest-check-links, pytest stops on
    # the unknown option and writes no JUnit report.
    write(tmp_path, rel, text)
    command = "python -m pytest --check-links README.md --check-links-ignore 'http*'"
    assert test_tools(tmp_path, command) == ["pytest<9", "nbval", "pytest-check-links"]
    assert test_tools(tmp_path, "python -m pytest") == ["pytest<9", "nbval"]


def test_a_plugin_loaded_by_name_is_a_test_tool_and_one_disabled_is_not(tmp_path: Path) -> None:
    # rdmo's CI: `pytest -p randomly -p no:cacheprovider --reuse-db`; pytest stops at once with
    # no distribution providing `randomly`.
    write(
        tmp_path,
        "setup.cfg",
        "[tool:pytest]\naddopts = -pxdist -p no:sugar -p myproject.fixtures\n",
    )
    command = "python -m pytest -p randomly -p no:cacheprovider --reuse-db --codspeed"
    tools = test_tools(tmp_path, command)
    assert tools == [
        "pytest<9",
        "pytest-codspeed",
        "pytest-django",
        "pytest-randomly",
        "pytest-xdist",
    ]
    assert test_tools(tmp_path, "python -m pytest -p no:randomly") == ["pytest<9", "pytest-xdist"]


def test_a_workflow_named_for_tests_wins_over_a_link_check(tmp_path: Path) -> None:
    write(
        tmp_path,
        ".github/workflows/check-links.yml",
        "jobs:\n  links:\n    steps:\n      - run: pytest --check-links README.md\n",
    )
    write(
        tmp_path,
        ".github/workflows/cpu-tests.yml",
        "jobs:\n  cpu:\n    steps:\n      - run: pytest tests -v\n",
    )
    found = discover_test_command(tmp_path)
    assert found.detail == ".github/workflows/cpu-tests.yml"
    assert found.command == "python -m pytest tests -v"


@pytest.mark.parametrize(
    ("word", "release"),
    [
        ("git+https://github.com/zulip/zulint@417b4e4#egg=zulint==1.0.0", "zulint"),
        ("git+https://example.org/x.git@main#subdirectory=a&egg=x-lib[fast]", "x-lib[fast]"),
        ("https://example.org/archive/v1.zip", ""),
        ("nikola @ git+https://github.com/getnikola/nikola.git", "nikola"),
        ("requests>=2", None),
        ("./zulip_bots", None),
    ],
)
def test_a_url_requirement_stands_for_its_release(word: str, release: str | None) -> None:
    assert release_for_url(word) == release


@pytest.mark.parametrize("release_installs", [True, False])
def test_a_requirements_file_that_names_an_unreachable_vcs_install_is_tried_with_releases(
    tmp_path: Path, release_installs: bool
) -> None:
    """zulip: its requirements.txt clones zulint from GitHub, which the sandbox cannot reach,
    and the whole file failed; zulint has no release either. A real bash runs the recipe's
    lines with a stand-in ``python`` that refuses the original file (and the release, in the
    second case): the copy that installs is the one with the release, or the one without the
    URL requirements; no copy stays in the checkout."""
    import os

    from recipebox import source_in_bash

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "requirements.txt").write_text(
        "-e ./zulip\n-r dev.txt\n"
        "git+https://github.com/zulip/zulint@417b4e4#egg=zulint==1.0.0\n"
        "https://example.org/unnamed.zip\nrequests>=2  # http://docs\n"
    )
    (repo / "dev.txt").write_text("pytest\n")
    script = recipe_script(repo)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    refused = "requirements.txt" if release_installs else "requirements.txt|*.0"
    (bin_dir / "python").write_text(
        f'#!/bin/sh\ncase "$5" in {refused}) exit 1;; esac\ncp "$5" {tmp_path}/copy\nexit 0\n'
    )
    (bin_dir / "python").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    run = source_in_bash(script, repo, env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "its VCS and URL requirements as releases" in run.stdout
    kept = ["-e ./zulip", "-r dev.txt", "requests>=2  # http://docs"]
    expected = [*kept[:2], "zulint", kept[2]] if release_installs else kept
    assert (tmp_path / "copy").read_text().splitlines() == expected
    assert ("requirements left out" in run.stdout) is not release_installs
    assert not list(repo.glob(".enconda-requirements*"))


_PIP_STAND_IN = """#!{python}
import os, sys
from pathlib import Path

log = Path({log!r})
args = sys.argv[1:]
if args[:3] != ["-m", "pip", "install"]:
    sys.exit(0)
if args[3] == "-r":
    def lines(path, seen=0):
        for line in Path(path).read_text().splitlines():
            if line.startswith("-r "):
                included = os.path.join(os.path.dirname(path), line.split()[1])
                if not os.path.isfile(included):
                    with log.open("a") as out:
                        out.write("missing include " + included + "\\n")
                    sys.exit(1)
                yield from lines(included)
            elif line.strip():
                yield line.strip()
    wanted = list(lines(args[4]))
    if any(line.startswith("git+") for line in wanted):
        sys.exit(1)  # the box cannot clone
else:
    wanted = args[3:4]
    if wanted[0].startswith("git+"):
        sys.exit(1)
with log.open("a") as out:
    out.write("".join(f"installed {{spec}}\\n" for spec in wanted))
"""


def test_a_requirements_files_copies_sit_beside_it_and_an_included_url_falls_back_to_one_by_one(
    tmp_path: Path,
) -> None:
    """readux: CI installs requirements/local.txt, which includes ``-r ./base.txt``; the copy
    with releases, written at the root, resolved that to a missing file, and base.txt's own
    ``git+`` line (python-edtf, no release named) failed every copy. A real bash runs the
    recipe with a stand-in pip that resolves includes beside the file and cannot clone."""
    import os
    import sys

    from recipebox import source_in_bash

    repo = tmp_path / "repo"
    write(
        repo, "requirements/base.txt", "git+https://github.com/ecds/python-edtf@214972b\nrequests\n"
    )
    write(
        repo,
        "requirements/local.txt",
        "-r ./base.txt\ngit+https://github.com/x/tool@1#egg=tool\npytest\n",
    )
    write(
        repo,
        ".github/workflows/ci.yml",
        "jobs:\n  t:\n    steps:\n"
        "      - run: pip install -r requirements/local.txt\n      - run: pytest\n",
    )
    log = tmp_path / "pip.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text(_PIP_STAND_IN.format(python=sys.executable, log=str(log)))
    (bin_dir / "python").chmod(0o755)
    run = source_in_bash(
        recipe_script(repo), repo, {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    )
    assert run.returncode == 0, run.stdout + run.stderr
    said = log.read_text().splitlines()
    assert not [line for line in said if line.startswith("missing include")], said
    assert "requirements/local.txt did not install together: one by one" in run.stdout
    assert {"installed requests", "installed pytest"} <= set(said)
    assert not list(repo.rglob(".enconda-requirements*"))


def test_a_requirements_file_without_url_requirements_is_installed_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("requests>=2\n-e .\n")
    script = recipe_script(tmp_path)
    assert "python -m pip install -r requirements.txt" in script
    assert ".enconda-requirements.txt" not in script  # no copy with releases for URLs


def test_benchmark_jobs_and_sessions_are_no_test_command(tmp_path: Path) -> None:
    """meltano/sdk: its codspeed workflow (`pytest tests/ --codspeed`) was taken and ran 6 of
    469 tests; its noxfile's first pytest call is `update_snapshots`, its `tests` session runs
    `coverage run -m pytest`, after a `benches` session's `--benchmark-only`."""
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "codspeed.yml").write_text(
        "jobs:\n  b:\n    steps:\n    - run: pytest tests/ --codspeed\n"
    )
    (workflows / "perf.yml").write_text(
        "jobs:\n  b:\n    steps:\n    - run: python -m pytest --benchmark-only\n"
    )
    (workflows / "test.yml").write_text("jobs:\n  t:\n    steps:\n    - run: nox -s tests\n")
    (tmp_path / "noxfile.py").write_text(
        "import nox\n\n@nox.session\ndef benches(session):\n"
        "    session.run('pytest', '--benchmark-only')\n\n"
        "@nox.session\ndef update_snapshots(session):\n"
        "    session.run('pytest', '--snapshot-update', *session.posargs)\n\n"
        "@nox.session\ndef tests(session):\n"
        "    session.run('coverage', 'run', '-m', 'pytest', '--benchmark-skip', *session.posargs)\n"
    )
    found = discover_test_command(tmp_path)
    assert (found.source, found.command) == ("nox", "python -m pytest")
    assert "coverage" in found.raw


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("python -m unittest", "python -m pytest -o 'python_files=test*.py'"),
        ("python -m unittest discover", "python -m pytest -o 'python_files=test*.py'"),
        (
            "python -m unittest discover -s tests -p '*_test.py' -v",
            "python -m pytest tests -o 'python_files=*_test.py'",
        ),
        (
            "coverage run -m unittest discover tests 'check_*.py'",
            "python -m pytest tests -o 'python_files=check_*.py'",
        ),
        ("python3 -m unittest -k parse -f", "python -m pytest -o 'python_files=test*.py' -k parse"),
        ("python -m unittest tests/test_io.py", "python -m pytest tests/test_io.py"),
        ("python -m unittest tests.test_io", "python -m pytest tests/test_io.py"),
        (
            "python -m unittest tests.test_io.TestRead.test_empty",
            "python -m pytest tests/test_io.py::TestRead::test_empty",
        ),
        # Not translated: CI variables, names that are no file of the checkout, a way out.
        ("python -m unittest discover -s ${{ matrix.dir }}", None),
        ("python -m unittest tests.no_such_module", None),
        ("python -m unittest discover -s ../elsewhere", None),
        ("python -m unittest discover -s no_such_folder", None),
        ("python -m pytest tests", None),
    ],
)
def test_normalise_unittest(tmp_path: Path, line: str, command: str | None) -> None:
    write(tmp_path, "tests/test_io.py", "import unittest\n")
    assert normalise_unittest(line, tmp_path) == command


def test_ci_running_unittest_gives_a_pytest_command_collecting_its_pattern(
    tmp_path: Path,
) -> None:
    """pytest runs unittest's cases but collects only its own file names: a suite of
    ``check_*.py`` files run by ``unittest discover`` would be "no tests ran" under bare pytest."""
    write(
        tmp_path,
        ".github/workflows/ci.yml",
        WORKFLOW.replace(
            'python -m pytest tests/unit -x -n auto --cov=pkg --cov-report xml -m "not slow"',
            "python -m unittest discover -s tests -p 'check_*.py'",
        ),
    )
    write(tmp_path, "tests/check_io.py", "import unittest\n")
    write(tmp_path, "pytest.ini", "[pytest]\n")
    found = discover_test_command(tmp_path)
    assert (found.source, found.detail) == ("ci", ".github/workflows/ci.yml")
    assert found.command == "python -m pytest tests -o 'python_files=check_*.py'"
    assert ci_setup_lines(tmp_path, found) == ["pip install -e .[test]"]


def test_a_pytest_line_anywhere_wins_over_a_unittest_line(tmp_path: Path) -> None:
    write(tmp_path, "tox.ini", "[testenv]\ncommands = pytest tests\n")
    write(
        tmp_path,
        ".github/workflows/ci.yml",
        WORKFLOW.replace("python -m pytest tests/unit", "python -m unittest discover #"),
    )
    (tmp_path / "tests").mkdir()
    found = discover_test_command(tmp_path)
    assert (found.source, found.command) == ("tox", "python -m pytest tests")


def test_the_makefile_test_target_runs_a_unittest_suite_module(tmp_path: Path) -> None:
    """Reticulum: ``make test`` runs ``python -m tests.all``, which imports the test cases of
    files not named test_*; pytest given that file collects the imported cases."""
    write(
        tmp_path,
        "Makefile",
        "all: release\n\ntest:\n\t@echo Running tests...\n\tpython -m tests.all\n\n"
        "release: test\n\tpython -m build\n",
    )
    write(tmp_path, "tests/__init__.py", "")
    write(tmp_path, "tests/all.py", "import unittest\nfrom .hashes import TestSHA256\n")
    found = discover_test_command(tmp_path)
    assert (found.command, found.source, found.detail, found.raw) == (
        "python -m pytest tests/all.py",
        "makefile",
        "Makefile target test",
        "python -m tests.all",
    )


@pytest.mark.parametrize(
    ("makefile", "found"),
    [
        # A target depending on another that runs the tests.
        (
            "check: unit\nunit:\n\t$(PYTHON) -m pytest tests/unit -x\n",
            ("makefile", "python -m pytest tests/unit"),
        ),
        (
            "tests:\n\tcd docs && make html\n\tpython -m unittest discover\n",
            ("makefile", "python -m pytest -o 'python_files=test*.py'"),
        ),
        # A module that is no unittest suite, or no file of the checkout: not a test command.
        ("test:\n\tpython -m tools.lint\n", ("default", "python -m pytest")),
        ("test:\n\tpython -m tests.nowhere\n", ("default", "python -m pytest")),
        ("build:\n\tpython -m pytest tests/unit\n", ("default", "python -m pytest")),
    ],
)
def test_makefile_targets(tmp_path: Path, makefile: str, found: tuple[str, str]) -> None:
    write(tmp_path, "Makefile", makefile)
    write(tmp_path, "tools/lint.py", "print('lint')\n")
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    command = discover_test_command(tmp_path)
    assert (command.source, command.command) == found


def test_a_pipenv_application_gets_its_locked_packages(tmp_path: Path) -> None:
    """nablaweb: Pipfile, Pipfile.lock and manage.py, no package and no requirements.txt; the
    recipe installed nothing and every test run stopped at "No module named 'django'". The
    lock's packages install together, else one by one (a Windows-only pin fails alone)."""
    import json
    import os
    import subprocess

    lock = {
        "_meta": {},
        "default": {"django": {"version": "==3.2.19"}, "pywin32": {"version": "==306"}},
        "develop": {"coverage": {"version": "==7.2.7"}},
    }
    write(tmp_path, "Pipfile.lock", json.dumps(lock))
    write(tmp_path, "manage.py", "import django\n")
    script = recipe_script(tmp_path)
    assert "pip install -e ." not in script
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    (bin_dir / "python").write_text(
        f'#!/bin/sh\necho "$*" >> {log}\ncase "$*" in *"-r "*|*pywin32*) exit 1;; esac\nexit 0\n'
    )
    (bin_dir / "python").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    result = subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    calls = [c for c in log.read_text().splitlines() if c.startswith("-m pip install")]
    assert calls[1:] == [
        "-m pip install coverage==7.2.7",
        "-m pip install django==3.2.19",
        "-m pip install pywin32==306",
    ]
    assert calls[0].startswith("-m pip install -r ")
    assert "recipe: pywin32==306 did not install" in result.stdout
    # With a requirements.txt, that file is the application's install, not the lock.
    write(tmp_path, "requirements.txt", "django\n")
    assert "locked packages" not in recipe_script(tmp_path)


@pytest.mark.docker
def test_a_pipenv_applications_locked_packages_install_in_a_box(
    tmp_path: Path, sandbox, base_image
) -> None:
    import json

    from tests.recipebox import installed_version, set_up

    lock = {"default": {"iniconfig": {"version": "==1.1.1"}}, "develop": {}}
    write(tmp_path / "repo", "Pipfile.lock", json.dumps(lock))
    write(tmp_path / "repo", "manage.py", "import iniconfig\n")
    script = recipe_script(tmp_path / "repo")
    with set_up(sandbox, base_image, tmp_path / "repo", "true\n", "t/pipenv-none") as (box, _):
        assert installed_version(box, "iniconfig") == ""  # not in the base image
    with set_up(sandbox, base_image, tmp_path / "repo", script, "t/pipenv-app") as (box, _):
        assert installed_version(box, "iniconfig") == "1.1.1"


def test_the_requirements_file_ci_installs_is_installed_one_by_one_if_need_be(
    tmp_path: Path,
) -> None:
    """naomi: no requirements.txt; Travis runs `pip install -r python_requirements.txt`, which
    pyaudio (no PortAudio headers) failed as a whole, and every test then missed
    `cryptography`. The file CI installs is the project's; its lines go one by one if need be."""
    import os
    import subprocess

    write(tmp_path, "setup.py", "setup(name='naomi')\n")
    write(tmp_path, "apt_requirements.txt", "libmad0-dev\n")
    write(
        tmp_path,
        "python_requirements.txt",
        "# core\nAPScheduler\npyaudio\n\n-r other.txt\ncryptography  # keys\n"
        'futures; python_version < "3"\n',
    )
    write(
        tmp_path,
        ".travis.yml",
        'install:\n  - "pip install -r python_requirements.txt "\n  - pip install coverage\n',
    )
    assert root_requirements(tmp_path) == "python_requirements.txt"
    script = recipe_script(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    (bin_dir / "python").write_text(
        # pyaudio's build reads its stdin, which must not be the list of those after it
        f'#!/bin/sh\necho "$*" >> {log}\ncase "$*" in *"-r "*) exit 1;;\n'
        "*pyaudio*) cat > /dev/null; exit 1;; esac\nexit 0\n"
    )
    (bin_dir / "python").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    result = subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    calls = log.read_text().splitlines()
    assert calls[:5] == [
        "-m pip install -r python_requirements.txt",
        "-m pip install APScheduler",
        "-m pip install pyaudio",
        "-m pip install cryptography",
        '-m pip install futures; python_version < "3"',
    ]
    assert "recipe: pyaudio did not install" in result.stdout
    # A test requirements file CI installs is not the project's own; nor is one outside it.
    (tmp_path / "python_requirements.txt").unlink()
    write(tmp_path, "requirements-test.txt", "pytest\n")
    write(tmp_path, ".travis.yml", "install: pip install -r requirements-test.txt -r ../x.txt\n")
    assert root_requirements(tmp_path) is None
    write(tmp_path, "requirements.txt", "requests\n")
    assert root_requirements(tmp_path) == "requirements.txt"


@pytest.mark.docker
def test_a_requirements_file_that_fails_together_installs_what_it_can_in_a_box(
    tmp_path: Path, sandbox, base_image
) -> None:
    from tests.recipebox import installed_version, set_up

    write(
        tmp_path / "repo", "ci_requirements.txt", "enconda-no-such-package-4711\niniconfig==1.1.1\n"
    )
    write(tmp_path / "repo", ".travis.yml", "install: pip install -r ci_requirements.txt\n")
    script = recipe_script(tmp_path / "repo")
    with set_up(sandbox, base_image, tmp_path / "repo", script, "t/one-by-one") as (box, log):
        assert installed_version(box, "iniconfig") == "1.1.1"
    assert "recipe: enconda-no-such-package-4711 did not install" in log


def test_requirements_are_flattened_for_the_one_by_one_install(tmp_path: Path) -> None:
    """lnldb: requirements.txt is `-r requirements_base.txt` and a few pins, and its GitHub
    dependencies are editable lines; the line-by-line install must see all of them."""
    write(tmp_path, "requirements.txt", "-r requirements_base.txt\npsycopg2==2.7.1  # db\n")
    write(
        tmp_path,
        "requirements_base.txt",
        "--index-url https://example.invalid/simple\n"
        "-e git+https://github.com/o/cal.git@7bc6#egg=cal\n"
        "Django==3.2\n-r ../outside.txt\n-r /etc/passwd\n-r requirements.txt\n"
        "ENCONDA_REQUIREMENTS\n",
    )
    write(tmp_path.parent, "outside.txt", "secret\n")
    assert flat_requirements(tmp_path, "requirements.txt") == [
        "git+https://github.com/o/cal.git@7bc6#egg=cal",
        "Django==3.2",
        "psycopg2==2.7.1",
    ]
    script = recipe_script(tmp_path)
    listing = script.split("<<'ENCONDA_REQUIREMENTS'\n", 1)[1].split("\nENCONDA_REQUIREMENTS", 1)[0]
    assert listing.splitlines() == flat_requirements(tmp_path, "requirements.txt")


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("python manage.py test", "python -m pytest -o 'python_files=test*.py'"),
        (
            "poetry run coverage run manage.py test --parallel=4 --noinput -v 2 --keepdb",
            "python -m pytest -o 'python_files=test*.py'",
        ),
        (
            "./manage.py test --settings=site.test_settings app tests.test_io -p 'check*.py'",
            "python -m pytest app tests/test_io.py -o 'python_files=check*.py' "
            "--ds=site.test_settings",
        ),
        ("python manage.py test {posargs}", "python -m pytest -o 'python_files=test*.py'"),
        (
            "python manage.py test --parallel 4 app --parallel",
            "python -m pytest app -o 'python_files=test*.py'",
        ),
        ("python manage.py test -k Settings", None),  # Django 3's -k selects; 2's kept the db
        ("python manage.py test --tag slow", None),  # an option not known here
        ("python manage.py test no_such_app", None),
        ("python manage.py test ../elsewhere", None),
        ("python manage.py testserver", None),
        ("python src/manage.py test", None),  # another folder's manage.py
    ],
)
def test_normalise_django(tmp_path: Path, line: str, command: str | None) -> None:
    write(tmp_path, "manage.py", MANAGE_PY)
    write(tmp_path, "tests/test_io.py", "import unittest\n")
    write(tmp_path, "app/tests.py", "import unittest\n")
    assert normalise_django(line, tmp_path) == command


def test_no_django_command_without_a_manage_py_at_the_root(tmp_path: Path) -> None:
    assert normalise_django("python manage.py test", tmp_path) is None


PEERING_CI = """\
    name: CI
    on: [push]
    jobs:
      tests:
        runs-on: ubuntu-latest
        services:
          redis:
            image: redis:6
        steps:
          - uses: actions/checkout@v4
          - name: Setup environment
            run: |
              pipx install poetry
              cp site/configuration.example.py site/configuration.py
              mkdir -p logs && touch logs/debug.log
              cp /etc/hosts site/hosts.py
              cp site/../../outside.py site/x.py
              cp site/$NAME.py site/y.py
              cp site/missing.example.py site/missing.py
              cp -x site/configuration.example.py site/z.py
              touch escape/out.txt
          - name: Run tests
            run: poetry run coverage run manage.py test
"""


def test_ci_running_manage_py_test_gives_its_command_and_the_file_steps_before_it(
    tmp_path: Path,
) -> None:
    """peering-manager: CI copies its settings file from the example and runs Django's runner;
    neither was read, and every test erred on the missing configuration module."""
    write(tmp_path, ".github/workflows/ci.yml", PEERING_CI)
    write(tmp_path, "manage.py", MANAGE_PY.replace("tests.app.settings", "site.settings"))
    write(tmp_path, "site/__init__.py", "")
    write(tmp_path, "site/settings.py", "from .configuration import *\n")
    write(tmp_path, "site/configuration.example.py", "SECRET_KEY = 'x'\n")
    (tmp_path / "escape").symlink_to(tmp_path.parent)  # a folder leading out of the checkout
    found = discover_test_command(tmp_path)
    assert (found.source, found.detail, found.raw) == (
        "ci",
        ".github/workflows/ci.yml",
        "poetry run coverage run manage.py test",
    )
    assert found.command == "python -m pytest -o 'python_files=test*.py' --ds=site.settings"
    # Outside paths, variables, a source the checkout lacks, unknown options: left out.
    assert ci_file_steps(tmp_path, found) == [
        "cp site/configuration.example.py site/configuration.py",
        "mkdir -p logs",
        "touch logs/debug.log",
    ]
    script = with_file_steps(
        "#!/bin/bash\npip install -e .\n", ci_file_steps(tmp_path, found), found.detail
    )
    assert script.splitlines()[2:] == [
        "# the files CI makes before the tests (.github/workflows/ci.yml)",
        "cp site/configuration.example.py site/configuration.py || echo 'recipe: CI step "
        "'\"'\"'cp site/configuration.example.py site/configuration.py'\"'\"' failed'",
        "mkdir -p logs || echo 'recipe: CI step '\"'\"'mkdir -p logs'\"'\"' failed'",
        "touch logs/debug.log || echo 'recipe: CI step '\"'\"'touch logs/debug.log'\"'\"' failed'",
    ]
    assert with_file_steps("#!/bin/bash\n", [], "x") == "#!/bin/bash\n"


def test_a_checkout_that_is_distutils_turns_setuptools_shim_off_after_its_installs(
    tmp_path: Path,
) -> None:
    """pypa/distutils: setuptools' shim gave the tests its own copy, not the checkout's."""
    write(tmp_path, "distutils/__init__.py", "")
    write(tmp_path, "pyproject.toml", '[project]\nname = "distutils"\nversion = "1"\n')
    lines = recipe_script(tmp_path).splitlines()
    assert lines[-1] == "export SETUPTOOLS_USE_DISTUTILS=stdlib"
    assert any("pip install -e" in line for line in lines[:-1])
    write(tmp_path / "other", "pkg/__init__.py", "")
    assert "SETUPTOOLS_USE_DISTUTILS" not in recipe_script(tmp_path / "other")


WWRANDO_CI = """
jobs:
  build:
    strategy:
      matrix:
        python: ['3.12', '3.11']
        include:
          - name: Windows
            os: windows-latest
            reqs_file: requirements_win.txt
          - name: Linux
            os: ubuntu-latest
            reqs_file: requirements_full.txt
    runs-on: ${{ matrix.os }}
    steps:
      - uses: actions/checkout@v4
      - run: |
          pip install -r ${{ matrix.reqs_file }} "numpy==${{ matrix.python }}"
          pip install -r ${{ matrix.other }}
      - name: Prepare test env vars
        run: |
          echo "WW_RANDO_OUTPUT_DIR=/wwrando-output" > .env
          echo "HOME_IS=$HOME" > home.env
          echo secret > ../outside.env
          echo -e "a\\tb" > tabs.env
          echo "more=1" >> .env
      - name: Test with pytest
        run: |
          pip install pytest pytest-cov
          pytest test --cov
"""


def test_a_ci_jobs_matrix_values_and_echo_steps_reach_the_recipe(tmp_path: Path) -> None:
    """wwrando: CI installs ``-r ${{ matrix.reqs_file }}`` (its pytest-dotenv among them) and
    writes a ``.env`` with ``echo``; neither was read, and its tests failed on a missing
    environment variable. The Linux entry's values stand in; an unknown key stays as written."""
    from pytest_enconda.repo.test_commands import ci_setup_lines
    from pytest_enconda.repo.test_deps import ci_job_requirements

    write(tmp_path, ".github/workflows/test.yml", WWRANDO_CI)
    write(tmp_path, "requirements_full.txt", "pytest-dotenv~=0.5.2\nPyYAML==6.0.1\n")
    write(tmp_path, "test/test_a.py", "def test_a(): pass\n")
    found = discover_test_command(tmp_path)
    assert found.raw == "pytest test --cov"
    lines = [line.strip() for line in ci_setup_lines(tmp_path, found)]
    assert 'pip install -r requirements_full.txt "numpy==3.12"' in lines
    assert "pip install -r ${{ matrix.other }}" in lines
    assert "pytest-dotenv~=0.5.2" in ci_job_requirements(tmp_path, found)
    # Fixed text into a file of the checkout: kept; a variable, an option, a path out: not.
    assert ci_file_steps(tmp_path, found) == [
        "echo WW_RANDO_OUTPUT_DIR=/wwrando-output > .env",
        "echo more=1 >> .env",
    ]
