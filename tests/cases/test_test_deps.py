"""Test dependencies are read wherever a repository declares them (issue 23's cantools and
testfixtures cases among them), never by running its code."""

from __future__ import annotations

from pathlib import Path

from pytest_enconda.repo.test_deps import declared_test_requirements, extra_requirements


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    return repo


def _specs(repo: Path) -> dict[str, str]:
    return {req.spec: req.source for req in declared_test_requirements(repo)}


def test_tox_deps_that_are_not_pytest_plugins_and_tox_extras(tmp_path: Path) -> None:
    # cantools: parameterized is a tox dep, 'plot' an extra the tests need.
    repo = _repo(
        tmp_path,
        {
            "setup.cfg": "[metadata]\nname = cantools\n"
            "[options.extras_require]\nplot = matplotlib\n",
            "tox.ini": "[testenv]\ndeps =\n    parameterized\n    -r{toxinidir}/reqs.txt\n"
            "extras = plot\ncommands = pytest\n",
        },
    )
    specs = _specs(repo)
    assert specs["parameterized"] == "tox.ini [testenv]"
    assert specs["matplotlib"] == "tox.ini [testenv] extras"
    assert not any("toxinidir" in spec for spec in specs)


def test_setup_py_extras_written_with_dict_calls_and_variables(tmp_path: Path) -> None:
    # testfixtures: extras_require=dict(test=...) built from names and a concatenation.
    repo = _repo(
        tmp_path,
        {
            "setup.py": "from setuptools import setup\n"
            "common = ['mock']\n"
            "test_requires = common + ['django', 'sybil>=3']\n"
            "setup(name='testfixtures', extras_require=dict(test=test_requires, build=['wheel']),"
            " tests_require=['zope.component'])\n"
        },
    )
    specs = _specs(repo)
    assert set(specs) == {"mock", "django", "sybil>=3", "zope.component"}
    assert extra_requirements(repo)["build"] == ["wheel"]


def test_setup_py_is_read_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    repo = _repo(
        tmp_path,
        {"setup.py": f"open({str(marker)!r}, 'w')\nsetup(extras_require={{'test': ['x1']}})\n"},
    )
    assert "x1" in _specs(repo)
    assert not marker.exists()


def test_pyproject_groups_of_every_tool(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        {
            "pyproject.toml": """
[project]
name = "demo"
[project.optional-dependencies]
test = ["pep621-dep"]
docs = ["not-a-test-dep"]
[dependency-groups]
base = ["included-dep"]
test = [{include-group = "base"}, "pep735-dep"]
[tool.poetry.group.test.dependencies]
poetry-dep = "^1.2"
python = "^3.8"
[tool.pdm.dev-dependencies]
test = ["pdm-dep"]
[tool.hatch.envs.test]
dependencies = ["hatch-dep"]
features = ["test"]
[tool.hatch.envs.docs]
dependencies = ["hatch-docs-dep"]
"""
        },
    )
    specs = _specs(repo)
    for name in ("pep621-dep", "included-dep", "pep735-dep", "poetry-dep>=1.2,<2", "pdm-dep"):
        assert name in specs
    assert "hatch-dep" in specs
    assert "not-a-test-dep" not in specs and "hatch-docs-dep" not in specs
    assert not any(spec.startswith("python") for spec in specs)


def test_requirement_files_nox_and_ci(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        {
            "requirements-test.txt": "-r requirements-base.txt\nhypothesis  # fuzz\n-e .\n",
            "requirements-base.txt": "attrs\n",
            "noxfile.py": "import nox\n@nox.session\ndef tests(session):\n"
            "    session.install('-r', 'requirements-base.txt', 'freezegun', '.')\n"
            "@nox.session\ndef docs(session):\n    session.install('sphinx-theme-x')\n",
            ".github/workflows/test.yml": "jobs:\n  t:\n    steps:\n"
            "      - run: pip install responses 'yarl<2' .[test]\n",
            "pyproject.toml": '[project]\nname="demo"\n'
            '[project.optional-dependencies]\ntest=["via-ci-extra"]\n',
        },
    )
    specs = _specs(repo)
    assert specs["hypothesis"] == "requirements-test.txt"
    assert "attrs" in specs and "freezegun" in specs
    assert "sphinx-theme-x" not in specs
    assert specs["responses"] == ".github/workflows/test.yml"
    assert "yarl<2" in specs
    assert "via-ci-extra" in specs


def test_the_project_itself_tooling_and_invalid_lines_are_left_out(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "My_Pkg"\n'
            '[project.optional-dependencies]\ntest = ["my-pkg[extra]", "tox", "black", '
            '"ok-dep", "bad spec !!"]\n'
        },
    )
    assert list(_specs(repo)) == ["ok-dep"]


def test_includes_outside_the_repository_are_not_followed(tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("secret-dep\n")
    repo = _repo(tmp_path, {"requirements-test.txt": "-r ../outside.txt\nin-dep\n"})
    (repo / "requirements-dev.txt").symlink_to(tmp_path / "outside.txt")
    assert list(_specs(repo)) == ["in-dep"]


def test_include_loops_end(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        {"requirements-test.txt": "-r requirements-test.txt\nloop-dep\n"},
    )
    assert list(_specs(repo)) == ["loop-dep"]


def test_glued_includes_tox_commands_and_ci_expressions(tmp_path: Path) -> None:
    # tablib: deps = -rtests/requirements.txt, pandas installed in commands_pre.
    repo = _repo(
        tmp_path,
        {
            "tests/requirements.txt": "odfpy\npytest-cov\n",
            "tox.ini": "[testenv]\ndeps =\n    -rtests/requirements.txt\n"
            "commands_pre =\n    - {envpython} -m pip install --only-binary :all: pandas\n",
            ".github/workflows/ci.yml": "steps:\n"
            "  - run: pip install ${{ matrix.django-version }} wmi && pytest\n"
            "  - run: python -m pip install pytest==7.2 sphinx-rtd-theme mypy types-requests\n",
        },
    )
    specs = _specs(repo)
    assert specs == {
        "odfpy": "tests/requirements.txt",
        "pandas": "tox.ini [testenv] commands_pre",
    }


def test_tox_environments_that_test_another_project_are_left_out(tmp_path: Path) -> None:
    # asdf: downstream environments clone jwst, sunpy, ... and run their tests against asdf;
    # installing every downstream package's test extras broke asdf's own test run.
    repo = _repo(
        tmp_path,
        {
            "tox.ini": "[testenv]\ndeps =\n    psutil\ncommands = pytest\n"
            "[testenv:jwst]\nchange_dir = {env_tmp_dir}\ncommands_pre =\n"
            "    git clone https://github.com/spacetelescope/jwst.git\n"
            "    pip install -e jwst[test]\ncommands = pytest jwst\n"
            "[testenv:sunpy]\ncommands_pre =\n    git clone https://github.com/sunpy/sunpy\n"
            "    pip install sunpy[tests]\ncommands = pytest sunpy\n"
            "[testenv:py311-extra]\ndeps =\n    lz4\ncommands = pytest\n",
        },
    )
    specs = _specs(repo)
    assert specs == {"psutil": "tox.ini [testenv]", "lz4": "tox.ini [testenv:py311-extra]"}


def test_tox_factor_conditions_keep_only_the_plain_test_environment(tmp_path: Path) -> None:
    # astropy/photutils: the oldestdeps/devdeps pins of its matrix were read as test requirements
    # (scipy==1.8 does not install on Python 3.11) and its reference ran no test.
    repo = _repo(
        tmp_path,
        {
            "setup.cfg": "[metadata]\nname = photutils\n"
            "[options.extras_require]\ntest = scikit-image\nall = shapely\n"
            "docs = sphinx-x\nplot = matplotlib\n",
            "tox.ini": "[testenv]\ndeps =\n"
            "    cov: pytest-cov\n"
            "    numpy123: numpy==1.23.*\n"
            "    oldestdeps: scipy==1.8\n"
            "    devdeps: git+https://github.com/spacetelescope/gwcs.git\n"
            "    py310,py311: tomli\n"
            "    test-!devdeps: hypothesis\n"
            "    !oldestdeps: attrs\n"
            "    devdeps-test: nothing-here\n"
            "    parameterized\n"
            "extras =\n    test: test\n    alldeps: all\n    build_docs: docs\n    plot\n"
            "commands =\n    devdeps: python -m pip install --pre numpy\n    pytest\n",
        },
    )
    specs = _specs(repo)
    assert set(specs) == {
        "tomli",
        "hypothesis",
        "attrs",
        "parameterized",
        "scikit-image",
        "matplotlib",
    }
    assert specs["matplotlib"] == "tox.ini [testenv] extras"


def test_tox_lines_follow_the_bases_python(tmp_path: Path) -> None:
    """A reference built on bullseye's 3.9 (its declared range excludes 3.11) gets the py39
    lines, not the py311 ones."""
    repo = _repo(
        tmp_path,
        {
            "tox.ini": "[testenv]\ndeps =\n    py39: backports.zoneinfo\n"
            "    py311,py312: tomli-w\n    python3.9: typing-extensions\n    attrs\n"
            "commands = pytest\n"
        },
    )
    on_39 = {req.spec for req in declared_test_requirements(repo, python="3.9")}
    assert on_39 == {"backports.zoneinfo", "typing-extensions", "attrs"}
    assert {req.spec for req in declared_test_requirements(repo)} == {"tomli-w", "attrs"}


def test_a_tox_dep_with_an_environment_marker_is_one_requirement(tmp_path: Path) -> None:
    # quantumjot/btrack: "pytest-xvfb ; sys_platform == 'linux'" split into words gave a
    # requirement named sys_platform, which failed the install and refused the repository.
    repo = _repo(
        tmp_path,
        {
            "tox.ini": "[testenv]\ndeps =\n    napari\n    pytest-xvfb ; sys_platform == 'linux'\n"
            "    tomli ; python_version < '3.11'\n    -r reqs.txt\ncommands = pytest\n",
            "reqs.txt": "numpy>=1.20\n",
        },
    )
    specs = _specs(repo)
    assert set(specs) == {"napari", "tomli ; python_version < '3.11'", "numpy>=1.20"}
    assert not any(spec.split()[0] in ("sys_platform", ";", "==") for spec in specs)


def test_a_tox_dep_spaced_around_its_operator_is_one_requirement(tmp_path: Path) -> None:
    # pypa/distutils: "jaraco.develop >= 7.23" gave jaraco.develop and a project named 7.23.
    repo = _repo(
        tmp_path,
        {
            "tox.ini": "[testenv]\ndeps =\n    jaraco.develop >= 7.23\n"
            "    path >= 10.6, < 17 mock\n    -r reqs.txt\ncommands = pytest\n",
            "reqs.txt": "numpy\n",
        },
    )
    assert set(_specs(repo)) == {"jaraco.develop>=7.23", "path>=10.6,<17", "mock", "numpy"}


def test_extras_a_tox_command_or_the_makefile_installs_are_test_requirements(
    tmp_path: Path,
) -> None:
    # connexion: tox runs `poetry install --all-extras`; tortoise-orm: CI runs `make ci`, whose
    # deps target is `poetry install -E asyncpg -E accel`.
    pyproject = (
        '[tool.poetry]\nname = "pkg"\n[tool.poetry.dependencies]\npython = ">=3.8"\n'
        'flask = {version = ">=2", optional = true}\nasyncpg = {version = "*", optional = true}\n'
        'ciso8601 = {version = "*", optional = true}\n'
        '[tool.poetry.extras]\nflask = ["flask"]\nasyncpg = ["asyncpg"]\naccel = ["ciso8601"]\n'
    )
    tox = _repo(
        tmp_path / "tox",
        {
            "pyproject.toml": pyproject,
            "tox.ini": "[testenv]\ncommands_pre = poetry install --all-extras --with tests\n"
            "commands = pytest\n",
        },
    )
    assert {"flask>=2", "asyncpg", "ciso8601"} <= set(_specs(tox))
    make = _repo(
        tmp_path / "make",
        {
            "pyproject.toml": pyproject,
            "Makefile": "deps:\n\t@poetry install -E asyncpg -E accel\n\ntest: deps\n\tpytest\n",
        },
    )
    specs = _specs(make)
    assert specs["asyncpg"] == "Makefile" and specs["ciso8601"] == "Makefile"
    assert "flask>=2" not in specs


POETRY_EXTRAS = """\
[tool.poetry]
name = "pkg"
[tool.poetry.dependencies]
python = ">=3.8"
asyncpg = { version = ">=0.24.0", optional = true }
motor = { version = ">=2.5.1,<4.0.0", optional = true }
orjson = { version = "^3", optional = true }
[tool.poetry.extras]
asyncpg = ["asyncpg"]
all = ["asyncpg", "motor"]
fast = ["orjson"]
"""


def test_extras_a_ci_poetry_or_uv_install_names(tmp_path: Path) -> None:
    # fastapi-pagination: CI runs `poetry install -E all`; its conftest imports asyncpg and motor.
    ci = "jobs:\n  t:\n    steps:\n      - run: |\n          poetry install -E all\n"
    repo = _repo(tmp_path, {"pyproject.toml": POETRY_EXTRAS, ".github/workflows/t.yml": ci})
    specs = _specs(repo)
    # Poetry's constraints come along (repo/poetry.py).
    assert specs["asyncpg>=0.24.0"] == specs["motor>=2.5.1,<4.0.0"] == ".github/workflows/t.yml"
    assert not any(spec.startswith("orjson") for spec in specs)
    other = tmp_path / "other"
    ci = (
        "steps:\n  - run: poetry install --extras 'fast asyncpg' && pytest\n"
        "  - run: poetry install -E${{ matrix.extra }}\n"
    )
    repo = _repo(other, {"pyproject.toml": POETRY_EXTRAS, ".github/workflows/t.yml": ci})
    assert {"orjson>=3,<4", "asyncpg>=0.24.0"} <= set(_specs(repo))
    assert not any(spec.startswith("motor") for spec in _specs(repo))
    third = tmp_path / "third"
    ci = "steps:\n  - run: uv sync --all-extras --dev\n"
    repo = _repo(third, {"pyproject.toml": POETRY_EXTRAS, ".github/workflows/t.yml": ci})
    assert {"asyncpg>=0.24.0", "motor>=2.5.1,<4.0.0", "orjson>=3,<4"} <= set(_specs(repo))


def test_a_ci_vcs_install_stands_for_its_release_and_pip_option_values_are_not_names(
    tmp_path: Path,
) -> None:
    # The Nikola plugins' CI installs Nikola from GitHub, which the sandbox cannot reach.
    ci = (
        "steps:\n"
        "  - run: pip install --upgrade-strategy eager -U pip pytest requests\n"
        "  - run: pip install git+https://github.com/getnikola/nikola.git#egg=Nikola\n"
        "  - run: pip install 'git+https://example.org/x.git@main#subdirectory=a&egg=x-lib[fast]'\n"
        "  - run: pip install git+https://github.com/o/no-egg.git\n"
    )
    repo = _repo(tmp_path, {".github/workflows/ci.yml": ci})
    specs = _specs(repo)
    assert {"requests", "Nikola", "x-lib[fast]"} <= set(specs)
    assert "eager" not in specs
    assert not any("no-egg" in spec or "git+" in spec for spec in specs)


def test_tox_environments_of_other_versions_are_left_out(tmp_path: Path) -> None:
    # apiflask: [testenv:min-versions] pins the oldest releases; beside the tests' own pins
    # the old flask-httpauth imported what werkzeug 3 removed and the conftest stopped pytest.
    tox = (
        "[testenv]\ndeps =\n    -r requirements/tests.txt\ncommands = pytest\n"
        "[testenv:min-versions]\ndeps = -r requirements/min-versions.txt\n"
        "[testenv:py311-oldestdeps]\ndeps = numpy==1.22\n"
        "[testenv:integration]\ndeps = responses\n"
    )
    repo = _repo(
        tmp_path,
        {
            "tox.ini": tox,
            "requirements/tests.txt": "werkzeug==3.0.2\n",
            "requirements/min-versions.txt": "flask-httpauth==4.0.0\nwerkzeug==2.0.0\n",
        },
    )
    specs = _specs(repo)
    assert "werkzeug==3.0.2" in specs and "responses" in specs
    assert not {"flask-httpauth==4.0.0", "werkzeug==2.0.0", "numpy==1.22"} & set(specs)


def test_install_lines_of_the_repositorys_own_composite_actions(tmp_path: Path) -> None:
    # nonebot2: the workflow's `uses: ./.github/actions/setup-python` runs
    # `poetry install --all-extras`; without fastapi every test erred at setup.
    action = "runs:\n  using: composite\n  steps:\n    - run: poetry install --all-extras\n"
    workflow = "jobs:\n  t:\n    steps:\n      - uses: ./.github/actions/setup-python\n"
    repo = _repo(
        tmp_path,
        {
            "pyproject.toml": POETRY_EXTRAS,
            ".github/workflows/ci.yml": workflow,
            ".github/actions/setup-python/action.yml": action,
        },
    )
    specs = _specs(repo)
    assert specs["motor>=2.5.1,<4.0.0"] == ".github/actions/setup-python/action.yml"
    assert {"asyncpg>=0.24.0", "orjson>=3,<4"} <= set(specs)


# Lightning-AI/litgpt's link check at its dataset revision (abridged), with a second job.
LINK_CHECK = """\
name: Check hyperlinks
on: [push]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
    - run: pip install pytest-pylint
  test:
    runs-on: ubuntu-latest
    steps:
    - uses: actions/checkout@v4
    - name: Install dependencies
      run: |
        python -m pip install --upgrade pip
        pip install pytest pytest-check-links
    - name: Check links
      run: |
        pip install pytest-mock==3.14
        pytest --check-links README.md --check-links-ignore "http*"
        pip install pytest-after
  later:
    steps:
    - run: pip install pytest-other
"""


def test_the_test_command_jobs_earlier_installs_are_its_test_tools(tmp_path: Path) -> None:
    """litgpt's run left no JUnit report: pytest-check-links, installed a step before the
    command, was never read (CI installs gave test requirements, pytest plugins excluded)."""
    from pytest_enconda.repo.test_commands import discover_test_command
    from pytest_enconda.repo.test_deps import ci_job_requirements
    from pytest_enconda.repo.test_tools import test_tools

    repo = _repo(
        tmp_path,
        {
            ".github/workflows/check-links.yml": LINK_CHECK,
            "pyproject.toml": "[project]\nname='p'\n",
        },
    )
    found = discover_test_command(repo)
    assert found.command == "python -m pytest --check-links README.md --check-links-ignore 'http*'"
    # Only this job's lines before the command: not another job's, not a later line.
    assert ci_job_requirements(repo, found) == [
        "pip",
        "pytest",
        "pytest-check-links",
        "pytest-mock==3.14",
    ]
    # The command's option alone names the plugin; the job's installs add what no option does.
    assert test_tools(repo, found.command) == ["pytest<9", "pytest-check-links"]
    tools = test_tools(repo, found.command, ci_job_requirements(repo, found))
    assert tools == ["pytest<9", "pytest-check-links", "pytest-mock==3.14"]


def test_a_command_from_outside_ci_has_no_job_installs(tmp_path: Path) -> None:
    from pytest_enconda.repo.test_commands import discover_test_command
    from pytest_enconda.repo.test_deps import ci_job_requirements

    repo = _repo(
        tmp_path,
        {
            ".github/workflows/lint.yml": "jobs:\n  l:\n    steps:\n    - run: pip install pytest",
            "tox.ini": "[testenv]\ncommands = pytest tests\n",
        },
    )
    found = discover_test_command(repo)
    assert found.source == "tox" and ci_job_requirements(repo, found) == []


def test_a_steps_title_that_reads_like_a_pip_line_is_not_one(tmp_path: Path) -> None:
    ci = (
        "jobs:\n  hub:\n    steps:\n"
        "    - name: pip install from main\n"
        "      run: pip install git+https://github.com/o/p.git@main#egg=p responses\n"
        "    - description: pip install mock\n"
        "      run: |\n        python -m pip install freezegun\n"
    )
    specs = _specs(_repo(tmp_path, {".github/workflows/hub.yml": ci}))
    assert {"p", "responses", "freezegun"} <= set(specs)
    assert not {"from", "main", "mock"} & set(specs)


def test_a_ci_conda_install_names_test_requirements(tmp_path: Path) -> None:
    """protoletariat's conda job installs grpcio-tools, which 14 of its tests run as
    ``python -m grpc_tools.protoc``; conda's prefix pins become pip's, channels and options
    are not names, and what only conda has (Python itself, R) is left out."""
    job = (
        "jobs:\n  conda:\n    steps:\n"
        "      - run: mamba install -c conda-forge grpc-cpp grpcio-tools 'numpy=1.26=py311_0'\n"
        "      - run: conda install --yes -n test conda-forge::pytorch python=3.11 r-base\n"
        "      - run: pytest -ra\n"
    )
    repo = _repo(
        tmp_path,
        {".github/workflows/ci.yml": job, "pyproject.toml": "[project]\nname='p'\n"},
    )
    specs = _specs(repo)
    assert list(specs) == ["grpc-cpp", "grpcio-tools", "numpy==1.26.*", "torch"]
    assert set(specs.values()) == {".github/workflows/ci.yml"}


def test_mypy_plugins_for_protoc_and_runtime_helpers_are_not_taken_for_the_type_checker(
    tmp_path: Path,
) -> None:
    """protoletariat's tests run protoc with ``--mypy_out``, mypy-protobuf's plugin: the
    ``mypy`` prefix had dropped it with mypy; boto3's stub packages are still left out."""
    pyproject = (
        "[tool.poetry]\nname = 'p'\n[tool.poetry.dev-dependencies]\n"
        "mypy = '>=1'\nmypy-protobuf = '>=3,<4'\nmypy-extensions = '*'\n"
        "mypy-boto3-s3 = '*'\ntypes-protobuf = '*'\n"
    )
    repo = _repo(tmp_path, {"pyproject.toml": pyproject})
    assert list(_specs(repo)) == ["mypy-protobuf>=3,<4", "mypy-extensions"]
