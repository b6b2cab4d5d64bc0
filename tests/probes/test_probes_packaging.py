"""probes/ ships as ``pytest_enconda.probes``: in this (editable) install and in a built wheel."""

from __future__ import annotations

import importlib.resources
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from pytest_enconda.probing.scripts import probe_script, probe_scripts

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = [
    "checkout_proof.py",
    "enconda_fixed_order.py",
    "imports_scan.py",
    "python_facts.py",
    "site_integrity.py",
]


def test_package_list_names_every_package() -> None:
    """The explicit list in pyproject.toml misses no package folder (a find would not)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "pytest_enconda").rglob("__init__.py")
    }
    assert on_disk | {"pytest_enconda.probes"} == listed
    assert config["package-dir"] == {"pytest_enconda.probes": "probes"}


def test_resources_expose_the_scripts() -> None:
    root = importlib.resources.files("pytest_enconda.probes")
    names = {entry.name for entry in root.iterdir()}
    assert {"__init__.py", *SCRIPTS} <= names
    assert probe_scripts() == SCRIPTS
    assert probe_script("imports_scan.py").read_text().startswith('"""C0')
    assert probe_script("imports_scan.py").parent.resolve() == (ROOT / "probes").resolve()


@pytest.mark.parametrize("name", ["../cli.py", "nope.py", "imports_scan", "probe_pyramid"])
def test_unknown_scripts_are_refused(name: str) -> None:
    with pytest.raises(FileNotFoundError):
        probe_script(name)


@pytest.mark.slow
def test_wheel_ships_the_probes(tmp_path: Path) -> None:
    """A regular build (from a copy: the build must not write into the work tree)."""
    source = tmp_path / "src"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git", "reports", "build", "*.egg-info", "__pycache__", ".*cache", "benchmark_cases"
        ),
    )
    wheels = tmp_path / "wheels"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = wheels.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for script in ["__init__.py", *SCRIPTS]:
        assert f"pytest_enconda/probes/{script}" in names
    assert "probes/imports_scan.py" not in names  # not a top-level package of its own

    target = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    check = (
        "import importlib.resources as r, pytest_enconda.probing.scripts as s;"
        "print(r.files('pytest_enconda.probes'));print(s.probe_script('python_facts.py'))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", check],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        check=True,
    ).stdout.split()
    assert shown == [
        str(target / "pytest_enconda/probes"),
        str(target / "pytest_enconda/probes/python_facts.py"),
    ]
