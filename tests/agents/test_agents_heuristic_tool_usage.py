"""Static rules from what common tools accept (``heuristic/tool_usage.py``): options pip, venv,
pytest and Django's manage.py do not have, an activation that names a folder, and links to files
the repository does not have. No container needed."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_enconda.agents.heuristic.prepass import run_prepass
from pytest_enconda.agents.heuristic.repo_view import scan
from pytest_enconda.agents.heuristic.steps import readme_steps

FILES = {
    "pyproject.toml": '[project]\nname = "minitool"\nversion = "1.0"\n',
    "minitool/__init__.py": "",
    "requirements.txt": "click\n",
    "docs/guide.md": "# guide\n",
    "LICENSE.rst": "MIT\n",
    "shop/management/commands/import_prices.py": "",
    "manage.py": "",
}


def findings(tmp_path: Path, readme: str):
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    facts = scan(tmp_path)
    readme = textwrap.dedent(readme)
    steps = readme_steps(readme, "README.md", facts)
    return run_prepass(steps, facts, readme, "README.md")


def fenced(command: str) -> str:
    return f"## Install\n\n```bash\n{command}\n```\n"


@pytest.mark.parametrize(
    ("command", "option", "fix"),
    [
        ("pip install -u minitool", "-u", "`-U`"),
        ("pip install --upgade minitool", "--upgade", "`--upgrade`"),
        ("python -m pip install --no-cache minitool --usr", "--usr", "`--user`"),
        ("python3 -m venv --new .venv", "--new", "Remove `--new`"),
        ("pytest --v", "--v", "`-v`"),
        ("python manage.py runserver --host 0.0.0.0", "--host", "[addr:]port"),
        # llvmlite's injected E2 (dev split).
        ("conda install --channels=numba llvmlite", "--channels=numba", "`--channel`"),
        ("mamba create -n env --clone-from base", "--clone-from", "`--clone`"),
    ],
)
def test_an_option_the_tool_does_not_have_is_e2(tmp_path, command, option, fix):
    found = [f for f in findings(tmp_path, fenced(command)) if f.error_type == "E2"]
    assert len(found) == 1, found
    assert f"`{option}`" in found[0].description
    assert fix in found[0].fix
    assert found[0].key.startswith("syntax:")


@pytest.mark.parametrize(
    "command",
    [
        "pip install -U -q minitool",
        "pip install -rrequirements.txt",
        "pip install --upgrade-strategy eager --no-deps .",
        "pip install --no-cache-d minitool",  # an abbreviation pip accepts: one option starts so
        "python -m venv --system-site-packages .venv",
        "pytest -v --cov=minitool",
        "python manage.py runserver 0.0.0.0:8000 --noreload",
        "python manage.py import_prices",  # the repository's own management command
        "python manage.py loaddata fixtures.json",
        "source .venv/bin/activate",
    ],
)
def test_options_the_tools_have_are_left_alone(tmp_path, command):
    assert [f.rule for f in findings(tmp_path, fenced(command)) if f.error_type == "E2"] == []


def test_a_near_miss_of_a_management_command_names_the_command(tmp_path):
    (found,) = [f for f in findings(tmp_path, fenced("python manage.py run")) if f.error_type]
    assert found.error_type == "E2"
    assert "`runserver` is the command meant" in found.description
    assert found.fix == "`python manage.py runserver`"


def test_an_unknown_management_command_far_from_any_is_an_apps_own(tmp_path):
    assert [
        f for f in findings(tmp_path, fenced("python manage.py rebuild_index")) if f.error_type
    ] == []


def test_sourcing_the_bin_folder_is_e2(tmp_path):
    (found,) = [f for f in findings(tmp_path, fenced("source venv/bin")) if f.error_type]
    assert found.error_type == "E2"
    assert found.fix == "`source venv/bin/activate`"


def test_a_link_to_a_file_the_repository_lacks_is_e4_with_the_closest(tmp_path):
    readme = "See the [licence](LICENSE.md) and the [guide](docs/guide.md).\n"
    (found,) = [f for f in findings(tmp_path, readme) if f.error_type]
    assert found.error_type == "E4"
    assert "`LICENSE.md`" in found.description and "`LICENSE.rst`" in found.description


@pytest.mark.parametrize(
    "readme",
    [
        "[site](https://example.org/x.md), [top](#install), [mail](mailto:a@b.c)\n",
        "[guide](/guide.md)\n",  # relative to the docs, where the README is included
        "[wiki](Installation)\n",  # a bare word: a page, not a file
        "![logo](docs/guide.md) and `a <LICENSE.rst>`_\n",
        "```md\n[in a code block](missing.md)\n```\n",
    ],
)
def test_links_that_resolve_or_are_not_files_are_left_alone(tmp_path, readme):
    assert [f for f in findings(tmp_path, readme) if f.error_type == "E4"] == []


def test_rst_link_and_image_targets_are_checked(tmp_path):
    readme = "Read `the guide <docs/gide.md>`_.\n\n.. image:: docs/logo.png\n"
    found = [f for f in findings(tmp_path, readme) if f.error_type == "E4"]
    assert sorted(f.key for f in found) == ["path:docs/gide.md", "path:docs/logo.png"]


@pytest.mark.parametrize(
    "pip",
    ["pip", "pip3", "pip3.11", "python -m pip", "python3.11 -m pip", "py -m pip", "py -3 -m pip"],
)
def test_the_steps_and_the_pip_option_check_agree_on_what_runs_pip(pip: str) -> None:
    """One pattern of pip's invocation: the steps' own lacked the `py` launcher, so a README's
    `py -m pip install` was an install to the option check only."""
    from pytest_enconda.agents.heuristic.steps import is_pip_install
    from pytest_enconda.agents.heuristic.tool_usage import _PIP_RUN

    command = f"{pip} install minitool"
    assert is_pip_install(command) and _PIP_RUN.match(command)
    assert not is_pip_install(f"{pip} list") and not _PIP_RUN.match(f"{pip} list")


def test_uv_pip_is_an_install_whose_options_are_not_checked_as_pips() -> None:
    from pytest_enconda.agents.heuristic.steps import is_pip_install
    from pytest_enconda.agents.heuristic.tool_usage import _PIP_RUN

    assert is_pip_install("uv pip install --system minitool")
    assert not _PIP_RUN.match("uv pip install --system minitool")


def test_conda_takes_its_subcommand_first(tmp_path: Path) -> None:
    # spotpy's injected E2 (dev split): `conda spotpy install`.
    found = [f for f in findings(tmp_path, fenced("conda spotpy install")) if f.error_type]
    assert [f.fix for f in found] == ["`conda install spotpy`"]
    # Well-formed lines, and a plugin's subcommand conda may have, are left alone.
    for line in ("conda install -c conda-forge --override-channels minitool",
                 "conda env create -n env", "conda lock --help",
                 "conda activate env", "conda --version"):  # fmt: skip
        assert [f for f in findings(tmp_path, fenced(line)) if f.error_type] == [], line
