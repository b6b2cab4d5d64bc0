"""The checkout proof cannot be shadowed (issue 47 item 3): a checkout folder named like an
installed release, a PEP 420 package Poetry names, and a repository with nothing to look for.

The probe runs as a real process under a real virtual environment whose site-packages hold the
installed "release" (a wheel pip installed from a file outside the checkout)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from pytest_enconda.probing.scripts import probe_script
from pytest_enconda.repo.checkout import checkout_packages, entry_point_modules
from pytest_enconda.verify.checkout import judge_checkout


def _wheel(
    folder: Path, dist: str, package: str, files: dict[str, str], *, top_level: bool = True
) -> Path:
    """A wheel of distribution ``dist`` 1.0 holding ``package``'s ``files``; ``top_level.txt``
    only where ``top_level`` (setuptools writes it, Poetry, Hatch and flit do not)."""
    name = dist.replace("-", "_")
    info = f"{name}-1.0.dist-info"
    path = folder / f"{name}-1.0-py3-none-any.whl"
    folder.mkdir(parents=True, exist_ok=True)
    entries = {f"{package}/{rel}": text for rel, text in files.items()}
    entries[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n"
    entries[f"{info}/WHEEL"] = "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    if top_level:
        entries[f"{info}/top_level.txt"] = f"{package.split('/')[0]}\n"
    entries[f"{info}/RECORD"] = "".join(f"{n},,\n" for n in [*entries, f"{info}/RECORD"])
    with zipfile.ZipFile(path, "w") as archive:
        for entry, text in entries.items():
            archive.writestr(entry, text)
    return path


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real virtual environment with pip, and in it the PyPI-like release ``progressbar2``
    (import name ``progressbar``) and ``censys-release`` (``censys/search``), installed by pip
    from wheel files outside any checkout."""
    root = tmp_path_factory.mktemp("venv")
    env = root / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True, timeout=300)
    wheels = [
        _wheel(root / "wheels", "progressbar2", "progressbar", {"__init__.py": "RELEASE = 1\n"}),
        _wheel(root / "wheels", "censys-release", "censys/search", {"__init__.py": ""}),
        _wheel(root / "wheels", "Poetry-Demo", "poetrydemo", {"__init__.py": ""}, top_level=False),
    ]
    subprocess.run(
        [str(env / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index"]
        + [str(wheel) for wheel in wheels],
        check=True,
        timeout=300,
        capture_output=True,
    )
    return env


def _probe(
    venv: Path, project: Path, cwd: Path, *modules: str, pythonpath: str = "", dist: str = ""
) -> dict:
    env = {"PATH": f"{venv}/bin:/usr/bin:/bin", "PYTHONNOUSERSITE": "1"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    named = [f"--distribution={dist}"] if dist else []
    done = subprocess.run(
        [
            str(venv / "bin" / "python"),
            str(probe_script("checkout_proof.py")),
            *("--project", str(project), *named, "--", *modules),
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def _progressbar(tmp_path: Path) -> Path:
    """progressbar2's checkout: the package folder ``progressbar/`` at the root."""
    project = tmp_path / "project"
    (project / "progressbar").mkdir(parents=True)
    (project / "progressbar" / "__init__.py").write_text("CHECKOUT = 1\n")
    (project / "setup.py").write_text("from setuptools import setup\nsetup(name='progressbar2')\n")
    return project


@pytest.mark.parametrize("from_project", [False, True])
def test_a_checkout_folder_does_not_shadow_the_installed_release(
    venv: Path, tmp_path: Path, from_project: bool
) -> None:
    """progressbar: the reference ran ``pip install progressbar2``; run from the project folder
    the checkout's ``progressbar/`` came first and the proof said ``checkout``. Now it is the
    installed release, wherever the probe is started."""
    project = _progressbar(tmp_path)
    neutral = tmp_path / "neutral"
    neutral.mkdir()
    packages = checkout_packages(project)
    assert packages == ["progressbar"]
    report = _probe(venv, project, project if from_project else neutral, *packages)
    (module,) = report["modules"]
    assert module["distribution"] == "progressbar2" and module["direct_url"].endswith(".whl")
    assert f"{venv}/lib/" in module["file"] and not module["from_checkout"]
    proof = judge_checkout(packages, report)
    assert proof.verdict == "release" and proof.refuses
    assert "installed distribution progressbar2" in proof.detail


def test_before_python_3_10_a_module_is_mapped_to_its_distribution_as_after(venv: Path) -> None:
    """Python 3.9 has no ``packages_distributions``: the probe reads each distribution's files,
    so a wheel without ``top_level.txt`` still names its distribution (MiV-OS's did not, and
    its ``miv`` went unattributed). Checked against the standard library's own mapping of the
    same real environment."""
    script = (
        "import json, sys, types, importlib.metadata as m\n"
        f"sys.path.insert(0, {str(probe_script('checkout_proof.py').parent)!r})\n"
        "import checkout_proof as probe\n"
        "before = types.SimpleNamespace(distributions=m.distributions)\n"
        "real = {k: sorted(set(v)) for k, v in m.packages_distributions().items()}\n"
        "print(json.dumps([real, {k: sorted(set(probe.owners_of(before, k))) for k in real}]))\n"
    )
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    real, before = json.loads(done.stdout)
    assert real["poetrydemo"] == ["Poetry-Demo"] and real["progressbar"] == ["progressbar2"]
    assert before == real


def test_the_checkout_the_reference_put_on_the_path_is_the_checkout(
    venv: Path, tmp_path: Path
) -> None:
    project = _progressbar(tmp_path)
    neutral = tmp_path / "neutral"
    neutral.mkdir()
    report = _probe(venv, project, neutral, "progressbar", pythonpath=str(project))
    assert report["modules"][0]["file"] == str(project / "progressbar" / "__init__.py")
    assert judge_checkout(["progressbar"], report).verdict == "checkout"


def _censys(tmp_path: Path) -> Path:
    """censys-python's layout: Poetry names ``censys``, a folder without ``__init__.py``."""
    project = tmp_path / "censys-python"
    for sub in ("common", "search"):
        (project / "censys" / sub).mkdir(parents=True)
        (project / "censys" / sub / "__init__.py").write_text("")
    (project / "pyproject.toml").write_text(
        '[tool.poetry]\nname = "censys"\npackages = [{ include = "censys" }]\n'
        '[tool.poetry.scripts]\ncensys = "censys.cli:main"\n'
    )
    return project


def test_a_pep_420_package_poetry_names_is_found_and_proven(venv: Path, tmp_path: Path) -> None:
    """censys was "verified" with proof ``no-packages``: its package folder has no
    ``__init__.py``, so none was found."""
    project = _censys(tmp_path)
    packages = checkout_packages(project)
    assert packages == ["censys.common", "censys.search"]
    neutral = tmp_path / "neutral"
    neutral.mkdir()
    report = _probe(venv, project, neutral, *packages, pythonpath=str(project))
    assert [m["from_checkout"] for m in report["modules"]] == [True, True]
    assert judge_checkout(packages, report).verdict == "checkout"
    # Without the checkout on the path: censys.search is the release's portion, refused.
    report = _probe(venv, project, neutral, *packages)
    proof = judge_checkout(packages, report)
    assert proof.verdict == "release" and "censys.search" in proof.detail


def test_a_namespace_poetry_names_without_subpackages_is_looked_for_itself(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "acme").mkdir(parents=True)
    (project / "acme" / "tool.py").write_text("")
    (project / "pyproject.toml").write_text(
        '[tool.poetry]\nname = "acme"\npackages = [{ include = "acme" }, { include = "x*" }]\n'
    )
    assert checkout_packages(project) == ["acme"]


def test_no_packages_proves_nothing(venv: Path, tmp_path: Path) -> None:
    project = tmp_path / "empty"
    project.mkdir()
    assert checkout_packages(project) == []
    proof = judge_checkout([], None)
    assert proof.verdict == "no-packages" and proof.refuses
    # The project's own distribution is the other proof: installed from an index, refused.
    report = _probe(venv, project, tmp_path, dist="progressbar2")
    assert report["distribution"]["direct_url"].endswith(".whl")
    proof = judge_checkout([], report, "progressbar2")
    assert proof.verdict == "release" and proof.refuses
    absent = judge_checkout([], _probe(venv, project, tmp_path, dist="not-there"), "not-there")
    assert absent.verdict == "no-packages" and "PackageNotFoundError" in absent.detail


def test_a_distribution_installed_from_the_checkout_proves_it(tmp_path: Path) -> None:
    """excalibur-tests: ``pip install -e '.[test]'``, and no package folder the proof reads."""
    report = {
        "modules": [],
        "distribution": {"name": "excalibur-tests", "direct_url": "file:///data/project"},
        "error": None,
    }
    report["distribution"]["from_checkout"] = True
    proof = judge_checkout([], report, "excalibur-tests")
    assert proof.verdict == "checkout" and not proof.refuses
    assert proof.distribution is not None and proof.distribution.name == "excalibur-tests"


def test_subprojects_and_entry_points_give_what_to_look_for(tmp_path: Path) -> None:
    """zulip/python-zulip-api: ``zulip/setup.py`` beside ``zulip_bots/setup.py``, nothing at the
    root; a scripts-only project is looked for by the modules its console scripts name."""
    repo = tmp_path / "zulip"
    for sub in ("zulip", "zulip_bots"):
        (repo / sub / sub).mkdir(parents=True)
        (repo / sub / sub / "__init__.py").write_text("")
        (repo / sub / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    (repo / "tools").mkdir()
    (repo / "tools" / "setup.py").write_text("")
    assert checkout_packages(repo) == ["zulip", "zulip_bots"]
    scripts = tmp_path / "scripts"
    (scripts / "bin").mkdir(parents=True)
    (scripts / "setup.cfg").write_text(
        "[options.entry_points]\nconsole_scripts =\n    tool = acme_cli.main:run\n"
    )
    (scripts / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[project.scripts]\nx = "x_cli:main"\nbad = "-m:evil"\n'
    )
    assert entry_point_modules(scripts) == ["x_cli", "acme_cli.main"]
    assert checkout_packages(scripts) == ["x_cli", "acme_cli.main"]
