"""A program the project's own Python requirements provide is never installed from Debian (issue
47 item 4): pytest-xdist's README ran ``pytest`` before anything installed it, the log said
"pytest: command not found", and the next recipe installed ``python3-pytest``."""

from __future__ import annotations

from typing import Any

from test_verify_as_of import _strategies

from pytest_enconda.sandbox import debian_programs
from pytest_enconda.verify.own_tools import requirement_programs, without_own_tools


def test_the_requirements_programs_are_their_distributions_and_scripts() -> None:
    reqs = ["pytest>=7", "tox ; python_version>'3'", "Sphinx==7.1", "-r other.txt", "./local"]
    assert {"pytest", "py-test", "tox", "sphinx", "sphinx-build"} <= requirement_programs(reqs)
    assert "other-txt" not in requirement_programs(reqs)
    missing = ["pytest", "py.test", "nox", "dot", "sphinx-build", "protoc"]
    assert without_own_tools(missing, reqs) == ["nox", "dot", "protoc"]
    assert without_own_tools(missing, [*reqs, "nox"]) == ["dot", "protoc"]


def test_a_readme_pytest_line_never_becomes_python3_pytest(tmp_path: Any, monkeypatch: Any) -> None:
    """The recipe's tests said pytest and protoc were missing: protoc's package follows, pytest
    (a test tool of the project) is pip's."""
    asked: list[list[str]] = []

    def packages(programs: list[str], *_: Any) -> dict[str, str]:
        asked.append(list(programs))
        known = {"pytest": "python3-pytest", "protoc": "protobuf-compiler"}
        return {name: known[name] for name in programs if name in known}

    monkeypatch.setattr(debian_programs, "program_packages", packages)
    tried, lines = _strategies(
        tmp_path,
        monkeypatch,
        "http://127.0.0.1:9",
        lambda label: ["pytest", "protoc"] if label == "recipe" else [],
    )
    assert asked and all("pytest" not in names for names in asked), asked
    assert "protobuf-compiler" in tried[1][2]
    assert not any("python3-pytest" in script for _, _, script in tried)
    assert any(line.endswith("the recipe installs protobuf-compiler") for line in lines), lines
