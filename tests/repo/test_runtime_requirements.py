"""The graded test step never installs the project's runtime requirements (issue 47 item 1): which
requirements are the project's own, and which declared test requirements the step may install."""

from __future__ import annotations

import textwrap
from pathlib import Path

from pytest_enconda.probing.junit import run_tests_command
from pytest_enconda.repo.runtime_requirements import (
    graded_requirements,
    requirement_name,
    runtime_names,
    runtime_requirements,
    self_install,
)
from pytest_enconda.repo.test_deps import declared_test_requirements


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


# A project whose tox deps include its own runtime requirements: through `-r requirements.txt`,
# by name with other pins and extras, and through `.[test]`.
TOXED = {
    "setup.py": """
        from setuptools import setup
        setup(
            name="webhooks",
            install_requires=["requests>=2.20", "Django>=3"],
            extras_require={"test": ["parameterized", "requests"]},
        )
        """,
    "requirements.txt": "requests>=2.20\nDjango>=3\n-r requirements/base.txt\n",
    "requirements/base.txt": "python-dateutil\n",
    "tox.ini": """
        [tox]
        envlist = py311
        [testenv]
        deps =
            -r requirements.txt
            requests[socks]
            Django_Rest == 3.9 ; python_version >= "3.8"
            DJANGO >= 3 ; python_version >= "3.8"
            requests-mock
            freezegun
            .[test]
        commands = pytest
        """,
}


def test_a_tox_project_gets_only_what_its_tests_alone_need(tmp_path: Path) -> None:
    repo = _write(tmp_path, TOXED)
    runtime = runtime_names(runtime_requirements(repo))
    assert runtime == ["django", "python-dateutil", "requests"]
    declared = [req.spec for req in declared_test_requirements(repo)]
    # What verify reads before the filter: the runtime requirements are among them.
    assert {"requests", "django", "python-dateutil"} <= {requirement_name(s) for s in declared}
    kept, left = graded_requirements(declared, runtime, "webhooks")
    assert sorted(kept) == [
        'Django_Rest == 3.9 ; python_version >= "3.8"',
        "freezegun",
        "parameterized",
        "requests-mock",
    ]
    assert set(left) == set(declared) - set(kept)


def test_the_filter_on_real_looking_lines() -> None:
    lines = [
        "requests",
        "Requests>=2 ; python_version > '3'",
        "requests[socks]",
        "Django>=3",
        "django-stubs",
        "requests-mock>=1.9",
        "-e .",
        ".",
        ".[test]",
        "./plugins/extra",
        "file:///data/project",
        "webhooks==1.0",
        "pytest-django",
    ]
    kept, left = graded_requirements(lines, ["requests", "django"], own="Webhooks")
    assert kept == ["django-stubs", "requests-mock>=1.9", "pytest-django"]
    assert left == [line for line in lines if line not in kept]


def test_an_old_record_leaves_out_only_installs_of_the_checkout() -> None:
    kept, left = graded_requirements(["requests", ".[test]", "-e .", "mock"], None)
    assert kept == ["requests", "mock"]
    assert left == [".[test]", "-e ."]


def test_names_are_compared_as_pep_503_does() -> None:
    assert requirement_name("Zope.Interface[test]>=5") == "zope-interface"
    assert requirement_name("ruamel_yaml ; python_version<'3.12'") == "ruamel-yaml"
    assert requirement_name("attrs @ https://example.org/attrs.whl") == "attrs"
    for not_a_name in ("-r requirements.txt", ".[test]", "git+https://x/y.git", "/opt/x"):
        assert requirement_name(not_a_name) == ""
    assert self_install("-e .[dev]") and self_install("--editable ./")
    assert not self_install("-r requirements.txt") and not self_install("requests")


def test_markers_are_evaluated_for_the_base_python() -> None:
    specs = ['tomli ; python_version < "3.11"', "importlib-metadata; python_version<'3.8'", "six"]
    assert runtime_names(specs, "3.11") == ["six"]
    assert runtime_names(specs, "3.10") == ["six", "tomli"]


def test_every_declaration_of_runtime_needs_is_read(tmp_path: Path) -> None:
    pep621 = _write(
        tmp_path / "pep621",
        {
            "pyproject.toml": """
                [project]
                name = "a"
                dependencies = ["httpx>=0.23", "attrs"]
                [project.optional-dependencies]
                test = ["respx"]
                """,
        },
    )
    assert runtime_names(runtime_requirements(pep621)) == ["attrs", "httpx"]
    poetry = _write(
        tmp_path / "poetry",
        {
            "pyproject.toml": """
                [tool.poetry]
                name = "b"
                [tool.poetry.dependencies]
                python = "^3.8"
                click = "^8"
                boto3 = {version = "^1", optional = true}
                PyYAML = {version = "^6"}
                [tool.poetry.group.test.dependencies]
                moto = "*"
                """,
        },
    )
    assert runtime_names(runtime_requirements(poetry)) == ["click", "pyyaml"]
    dynamic = _write(
        tmp_path / "dynamic",
        {
            "pyproject.toml": """
                [project]
                name = "c"
                dynamic = ["dependencies"]
                [tool.setuptools.dynamic]
                dependencies = {file = ["requirements/runtime.txt"]}
                """,
            "requirements/runtime.txt": "numpy\n# a comment\n",
            "requirements-dev.txt": "-r requirements/runtime.txt\nhypothesis\n",
        },
    )
    assert runtime_names(runtime_requirements(dynamic)) == ["numpy"]
    setup_files = _write(
        tmp_path / "setupfiles",
        {
            "setup.py": "import setuptools\n"
            "reqs = open('requirements/prod.txt').read().splitlines()\n"
            "extra = {'all': open('requirements-all.txt').read().splitlines()}\n"
            "tests = open('requirements/test.txt').read().splitlines()\n"
            "setuptools.setup(name='d', install_requires=reqs, tests_require=tests)\n",
            "requirements/prod.txt": "lxml\n",
            "requirements-all.txt": "matplotlib\n",
            "requirements/test.txt": "pytest\nresponses\n",
            "setup.cfg": "[options]\ninstall_requires =\n    click\n    rich\n",
        },
    )
    assert runtime_names(runtime_requirements(setup_files)) == ["click", "lxml", "rich"]
    cfg_file = _write(
        tmp_path / "cfgfile",
        {
            "setup.cfg": "[options]\ninstall_requires = file: deps.txt\n",
            "deps.txt": "jinja2\n",
        },
    )
    assert runtime_names(runtime_requirements(cfg_file)) == ["jinja2"]
    assert runtime_requirements(_write(tmp_path / "bare", {"x.py": ""})) == []


def test_the_step_installs_no_runtime_requirement_and_says_so() -> None:
    step = run_tests_command(
        "python -m pytest",
        ["pytest"],
        ["requests[socks]", "Django>=3", "requests-mock", ".[test]"],
        runtime=["requests", "django"],
    )
    installs = [line for line in step.splitlines() if "pip install" in line]
    assert any("requests-mock" in line for line in installs)
    assert not any(
        word in line for line in installs for word in ("socks", "Django", "'.[test]'", " . ")
    )
    said = next(line for line in step.splitlines() if "left to the setup" in line)
    assert "Django>=3" in said and ".[test]" in said and "requests[socks]" in said
    # Nothing left out: nothing said.
    plain = run_tests_command("python -m pytest", ["pytest"], ["requests-mock"], runtime=["six"])
    assert "left to the setup" not in plain
