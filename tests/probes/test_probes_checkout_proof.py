"""probes/checkout_proof.py as a real process: the checkout, an installed release, and a release
installed from the checkout (PEP 610) told apart; and the verdict the sidecar keeps."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_enconda.probing.scripts import probe_script
from pytest_enconda.repo.checkout import checkout_packages
from pytest_enconda.verify.checkout import judge_checkout


def _probe(
    project: Path,
    *modules: str,
    site: Path | None = None,
    cwd: Path | None = None,
    pythonpath: str = "",
    distribution: str = "",
) -> dict:
    """The probe as verify runs it: from a neutral folder (``cwd``; the project folder itself
    in the shadowing tests), with ``site`` and ``pythonpath`` on ``PYTHONPATH``."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONNOUSERSITE": "1"}
    paths = [p for p in (pythonpath, str(site) if site else "") if p]
    if paths:
        env["PYTHONPATH"] = ":".join(paths)
    named = [f"--distribution={distribution}"] if distribution else []
    neutral = cwd or project.parent / "neutral"
    neutral.mkdir(exist_ok=True)
    done = subprocess.run(
        [
            sys.executable,
            str(probe_script("checkout_proof.py")),
            "--project",
            str(project),
            *named,
            "--",
            *modules,
        ],
        cwd=neutral,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def _release(site: Path, name: str, direct_url: str | None = None) -> None:
    """An installed distribution ``name`` 1.0 in ``site``, as pip leaves one."""
    (site / name).mkdir(parents=True)
    (site / name / "__init__.py").write_text("")
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "top_level.txt").write_text(f"{name}\n")
    (info / "RECORD").write_text(f"{name}/__init__.py,,\n{info.name}/METADATA,,\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps({"url": direct_url, "dir_info": {}}))


def test_a_flat_package_is_imported_from_the_checkout_where_the_reference_put_it(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / "demo").mkdir(parents=True)
    (project / "demo" / "__init__.py").write_text("")
    site = tmp_path / "site"
    _release(site, "demo")
    for pythonpath in (str(project), "."):  # "." is the project folder the tests run from
        report = _probe(project, "demo", site=site, pythonpath=pythonpath)
        (module,) = report["modules"]
        assert module["under_checkout"] and module["from_checkout"], pythonpath
        assert judge_checkout(["demo"], report).verdict == "checkout"


def test_a_src_layout_with_the_release_installed_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src" / "demo").mkdir(parents=True)
    (project / "src" / "demo" / "__init__.py").write_text("")
    site = tmp_path / "site"
    _release(site, "demo")
    report = _probe(project, "demo", site=site)
    proof = judge_checkout(checkout_packages(project), report)
    assert proof.verdict == "release" and proof.refuses
    assert "installed distribution demo" in proof.detail
    assert str(site / "demo") in proof.detail


def test_a_release_built_from_the_checkout_counts_as_the_checkout(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src" / "demo").mkdir(parents=True)
    (project / "src" / "demo" / "__init__.py").write_text("")
    site = tmp_path / "site"
    _release(site, "demo", direct_url=f"file://{project}")
    report = _probe(project, "demo", site=site)
    assert report["modules"][0]["direct_url"] == f"file://{project}"
    proof = judge_checkout(["demo"], report)
    assert proof.verdict == "checkout"
    assert proof.detail == (
        f"demo imported from {site / 'demo' / '__init__.py'}, installed from the checkout "
        f"(distribution demo, source file://{project})"
    )


def test_a_release_from_elsewhere_on_disk_is_not_the_checkout(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src" / "demo").mkdir(parents=True)
    (project / "src" / "demo" / "__init__.py").write_text("")
    site = tmp_path / "site"
    _release(site, "demo", direct_url=f"file://{tmp_path}/project-other")
    assert judge_checkout(["demo"], _probe(project, "demo", site=site)).refuses


def test_nothing_importable_and_no_probe_are_recorded_not_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    report = _probe(project, "nowhere_to_be_found")
    assert report["modules"][0]["error"] == "not importable"
    assert judge_checkout(["nowhere_to_be_found"], report).verdict == "not-importable"
    assert judge_checkout(["x"], None).verdict == "unmeasured"
    assert judge_checkout([], None).verdict == "no-packages"
    assert not judge_checkout(["x"], {"error": "boom"}).refuses


def test_checkout_packages_skips_tests_docs_and_setup(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    for folder in ("tests", "docs", "src/lib_a", "lib_b", "not-an-identifier"):
        (repo / folder).mkdir(parents=True)
        (repo / folder / "__init__.py").write_text("")
    assert checkout_packages(repo) == ["lib_a", "lib_b"]
    single = tmp_path / "single"
    single.mkdir()
    for name in ("setup.py", "conftest.py", "tool.py", "test_tool.py"):
        (single / name).write_text("")
    assert checkout_packages(single) == ["tool"]


def test_namespace_packages_name_their_subpackages(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "sphinxcontrib" / "spelling").mkdir(parents=True)
    (repo / "sphinxcontrib" / "spelling" / "__init__.py").write_text("")
    (repo / "src" / "acme" / "tool").mkdir(parents=True)
    (repo / "src" / "acme" / "tool" / "__init__.py").write_text("")
    (repo / "notes").mkdir()
    assert checkout_packages(repo) == ["acme.tool", "sphinxcontrib.spelling"]


@pytest.mark.parametrize(
    ("file", "text"),
    [
        ("pyproject.toml", '[tool.setuptools.packages.find]\nwhere = ["Lib"]\n'),
        ("pyproject.toml", '[tool.setuptools.package-dir]\n"" = "Lib"\n'),
        ("pyproject.toml", '[tool.poetry]\npackages = [{include = "demo", from = "Lib"}]\n'),
        ("setup.cfg", "[options]\npackage_dir =\n    =Lib\n"),
        ("setup.cfg", "[options.packages.find]\nwhere = Lib\n"),
        ("setup.py", "from setuptools import setup\nsetup(package_dir={'': 'Lib'})\n"),
        ("setup.py", "import setuptools\nDIRS = {'': 'Lib'}\nsetuptools.setup(package_dir=DIRS)\n"),
    ],
)
def test_a_package_folder_the_build_names_is_searched(tmp_path: Path, file: str, text: str) -> None:
    """gftools keeps its package in Lib/: with only root and src/ read, the proof found none."""
    repo = tmp_path / "repo"
    (repo / "Lib" / "demo").mkdir(parents=True)
    (repo / "Lib" / "demo" / "__init__.py").write_text("")
    assert checkout_packages(repo) == []
    (repo / file).write_text(text)
    assert checkout_packages(repo) == ["demo"]


def test_a_declared_package_folder_outside_the_checkout_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "stolen"
    outside.mkdir(parents=True)
    (outside / "__init__.py").write_text("")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "linked").symlink_to(tmp_path / "outside")
    for where in ("../outside", str(tmp_path / "outside"), "linked"):
        (repo / "pyproject.toml").write_text(
            f'[tool.setuptools.packages.find]\nwhere = ["{where}"]\n'
        )
        assert checkout_packages(repo) == [], where


def test_namespace_packages_declared_by_the_build(tmp_path: Path) -> None:
    """spec-bioimage-io: setup.py's find_namespace_packages, bioimageio/ has no __init__.py."""
    repo = tmp_path / "repo"
    (repo / "bioimageio" / "spec").mkdir(parents=True)
    (repo / "bioimageio" / "spec" / "__init__.py").write_text("")
    (repo / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    assert checkout_packages(repo) == []
    (repo / "setup.py").write_text(
        "from setuptools import find_namespace_packages, setup\n"
        "setup(packages=find_namespace_packages(exclude=['tests']))\n"
    )
    assert checkout_packages(repo) == ["bioimageio.spec"]
