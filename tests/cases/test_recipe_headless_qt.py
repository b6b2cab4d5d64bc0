"""A Qt test suite in a box without a display: the recipe installs the libraries Qt's wheels load
(from the dependencies, ``agents.profile.SYSTEM_HINTS``) and the test step draws offscreen."""

from __future__ import annotations

from pathlib import Path

import pytest
from recipebox import project, set_up

from pytest_enconda.agents.profile import build_profile
from pytest_enconda.probing.junit import JUNIT_PATH, read_junit, run_tests_command
from pytest_enconda.verify.recipes import recipe_script


@pytest.mark.docker
@pytest.mark.slow
def test_a_qt_widget_test_passes_headless(tmp_path: Path, sandbox, base_image) -> None:
    widget_test = (
        "from PyQt5.QtWidgets import QApplication, QLabel\n\n"
        "def test_label_shows():\n"
        "    app = QApplication.instance() or QApplication([])\n"
        "    label = QLabel('x')\n"
        "    label.show()\n"
        "    assert label.isVisible() and app.platformName() == 'offscreen'\n"
    )
    pyproject = (
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "qtdemo"\nversion = "0.1"\ndependencies = ["pyqt5"]\n'
        '[tool.setuptools]\npackages = ["qtdemo"]\n'
    )
    repo = project(
        tmp_path / "repo",
        "qtdemo",
        {"tests/test_widget.py": widget_test, "pyproject.toml": pyproject},
    )
    packages = build_profile(repo).likely_system_packages
    assert "libfontconfig1" in packages
    with set_up(sandbox, base_image, repo, recipe_script(repo, packages), "t/qt") as (box, _):
        step = run_tests_command("python -m pytest tests", ["pytest<9"])
        run = box.exec(step, timeout=600, workdir="/data/project")
        box.copy_out(JUNIT_PATH, tmp_path / "junit.xml")
        outcomes = read_junit(tmp_path / "junit.xml")
        assert outcomes == {"tests.test_widget::test_label_shows": "passed"}, run.output[-2000:]
