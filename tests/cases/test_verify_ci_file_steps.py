"""What the recipe does for a suite CI runs differently, in real boxes: a Django project whose CI
copies its settings file from an example and runs ``manage.py test`` (its command and the copy are
read from CI; the copy is what lets its tests run), and a checkout that is ``distutils`` itself."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from pytest_enconda.repo.test_commands import discover_test_command
from pytest_enconda.repo.test_tools import test_tools
from pytest_enconda.verify.recipes import ci_file_steps, recipe_script, with_file_steps

CI = """\
    name: CI
    on: [push]
    jobs:
      tests:
        runs-on: ubuntu-latest
        steps:
          - uses: actions/checkout@v4
          - run: |
              pip install -r requirements.txt
              cp mysite/configuration.example.py mysite/configuration.py
          - run: python manage.py test --noinput
"""
FILES = {
    ".github/workflows/ci.yml": CI,
    "requirements.txt": "django>=4.2,<6\n",
    "manage.py": """\
        import os
        import sys

        if __name__ == "__main__":
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")
            from django.core.management import execute_from_command_line
            execute_from_command_line(sys.argv)
    """,
    "mysite/__init__.py": "",
    "mysite/settings.py": """\
        from .configuration import SECRET_KEY  # made by CI from the example

        INSTALLED_APPS = ["polls"]
        DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
        USE_TZ = True
    """,
    "mysite/configuration.example.py": "SECRET_KEY = 'example'\n",
    "polls/__init__.py": "",
    # Django's runner collects an app's tests.py; pytest's own pattern would not.
    "polls/tests.py": """\
        from django.conf import settings
        from django.test import SimpleTestCase


        class SettingsTest(SimpleTestCase):
            def test_secret_key(self):
                self.assertEqual(settings.SECRET_KEY, "example")
    """,
}


def django_project(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def _before_and_after_steps(
    tmp_path: Path, sandbox, base_image: str, repo: Path, steps: str, test_step: str, test_id: str
) -> list[str]:
    """In one box with the recipe: the test's outcome, then its outcome after CI's ``steps``
    (the reason where no report or no such test came)."""
    from recipebox import set_up

    from pytest_enconda.probing.junit import JUNIT_PATH, read_junit

    outcomes: list[str] = []
    label = "t/" + re.sub(r"[^a-z0-9]+", "-", test_id.lower())[-40:]
    with set_up(sandbox, base_image, repo, recipe_script(repo), label) as (box, _):
        for script in ("", steps):
            if script:
                made = box.exec(script, timeout=60, workdir="/data/project")
                assert made.exit_code == 0, made.output
            run = box.exec(test_step, timeout=600, workdir="/data/project")
            junit = tmp_path / f"junit{len(outcomes)}.xml"
            try:
                box.copy_out(JUNIT_PATH, junit)
            except FileNotFoundError:
                outcomes.append(f"no JUnit report: {run.output[-1500:]}")
                continue
            outcomes.append(read_junit(junit).get(test_id, "not collected: " + run.output[-1500:]))
    return outcomes


@pytest.mark.slow
@pytest.mark.docker
def test_the_copied_settings_file_lets_the_django_tests_run(
    tmp_path: Path, sandbox, base_image
) -> None:

    from pytest_enconda.probing.junit import run_tests_command

    repo = django_project(tmp_path / "repo")
    found = discover_test_command(repo)
    assert found.command == "python -m pytest -o 'python_files=test*.py' --ds=mysite.settings"
    steps = ci_file_steps(repo, found)
    assert steps == ["cp mysite/configuration.example.py mysite/configuration.py"]
    step = run_tests_command(found.command, test_tools(repo, found.command))
    test_id = "polls.tests.SettingsTest::test_secret_key"
    outcomes = _before_and_after_steps(
        tmp_path, sandbox, base_image, repo, with_file_steps("", steps, found.detail), step, test_id
    )
    assert outcomes[1] == "passed", outcomes
    # Without the copy, pytest-django cannot import the settings: no test runs.
    assert outcomes[0].startswith("no JUnit report") and "configuration" in outcomes[0], outcomes


@pytest.mark.slow
@pytest.mark.docker
def test_the_recipe_of_a_distutils_checkout_imports_the_checkouts_distutils(
    tmp_path: Path, sandbox, base_image
) -> None:
    """Debian's setuptools installs its distutils shim: the checkout's own ``distutils`` is
    imported only once the recipe turns it off, as pypa/distutils' CI venv has no setuptools."""
    from recipebox import project, set_up

    repo = project(
        tmp_path / "repo",
        "distutils",
        {"pyproject.toml": '[project]\nname = "distutils"\nversion = "1"\n'},
    )
    where = 'python -c "import distutils; print(distutils.__file__)"'
    with set_up(sandbox, base_image, repo, recipe_script(repo), "t/distutils") as (box, _):
        plain = box.exec(where, timeout=60, workdir="/data/project")
        # The recipe sourced again, as the setup step sources it: its exports stay.
        after = box.exec(
            f"bash -c '. ./setup.sh > /dev/null 2>&1; {where}'",
            timeout=600,
            workdir="/data/project",
        )
    assert "setuptools/_distutils" in plain.output, plain.output
    assert after.output.strip().splitlines()[-1] == "/data/project/distutils/__init__.py", (
        after.output[-2000:]
    )


DOTENV_CI = """\
    jobs:
      test:
        strategy:
          matrix:
            include:
              - os: windows-latest
                reqs_file: requirements_win.txt
              - os: ubuntu-latest
                reqs_file: requirements_full.txt
        runs-on: ${{ matrix.os }}
        steps:
          - uses: actions/checkout@v4
          - run: pip install -r ${{ matrix.reqs_file }}
          - run: echo "GREETING=hello from CI" > .env
          - run: pytest tests
"""


@pytest.mark.docker
def test_a_matrix_requirement_file_and_an_echoed_env_file_let_the_tests_run(
    tmp_path: Path, sandbox, base_image
) -> None:
    """wwrando: its CI installs ``-r ${{ matrix.reqs_file }}`` (pytest-dotenv) and echoes the
    variables its tests read into ``.env``. In a real box the test passes once both are read,
    and fails on the missing variable before the ``echo`` step runs."""
    from recipebox import project

    from pytest_enconda.probing.junit import run_tests_command
    from pytest_enconda.repo.test_deps import ci_job_requirements

    files = {
        ".github/workflows/test.yml": textwrap.dedent(DOTENV_CI),
        "requirements_full.txt": "pytest-dotenv\n",
        "tests/test_env.py": "import os\n\ndef test_greeting():\n"
        "    assert os.environ['GREETING'] == 'hello from CI'\n",
    }
    repo = project(tmp_path / "repo", "greeter", files)
    found = discover_test_command(repo)
    tools = test_tools(repo, found.command, ci_job_requirements(repo, found))
    assert "pytest-dotenv" in tools
    steps = ci_file_steps(repo, found)
    assert steps == ["echo 'GREETING=hello from CI' > .env"]
    step = run_tests_command(found.command, tools)
    made = with_file_steps("", steps, found.detail)
    test_id = "tests.test_env::test_greeting"
    outcomes = _before_and_after_steps(tmp_path, sandbox, base_image, repo, made, step, test_id)
    assert outcomes == ["failed", "passed"]
