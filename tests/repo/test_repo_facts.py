"""``repo.read_repository``: one typed reading of a checkout's declared facts, kept per path while
its files are unchanged, that the heuristic agent, the profile, construct and verify share."""

from __future__ import annotations

from pathlib import Path

from pytest_enconda.repo.facts import BuildSystem, ProjectTable, read_repository

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61", 7]
build-backend = "setuptools.build_meta"

[project]
name = "minitool"
requires-python = ">=3.9"
dependencies = ["click>=8.0", 3]
scripts = { minitool = "minitool.cli:main" }

[project.optional-dependencies]
yaml = ["PyYAML"]
test = ["pytest>=7"]
broken = "pytest"

[tool.poetry]
name = "minitool-poetry"

[tool.poetry.dependencies]
python = "^3.9"
requests = { version = "^2.0", optional = true }

[tool.poetry.group.dev.dependencies]
mypy = "*"

[tool.poetry.extras]
http = ["requests"]

[tool.pytest.ini_options]
addopts = "-q"
"""


def checkout(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_pyproject_tables_are_typed_and_wrong_types_left_out(tmp_path: Path) -> None:
    facts = read_repository(checkout(tmp_path, {"pyproject.toml": PYPROJECT}))
    assert facts.has_pyproject and facts.pyproject_parses
    assert facts.project == ProjectTable(
        name="minitool",
        requires_python=">=3.9",
        dependencies=("click>=8.0",),
        optional_dependencies={"yaml": ("PyYAML",), "test": ("pytest>=7",)},
        scripts=("minitool",),
    )
    assert facts.poetry is not None
    assert facts.poetry.name == "minitool-poetry" and facts.poetry.python == "^3.9"
    assert dict(facts.poetry.dependencies) == {"requests": {"version": "^2.0", "optional": True}}
    assert {name: dict(deps) for name, deps in facts.poetry.groups.items()} == {
        "dev": {"mypy": "*"}
    }
    assert dict(facts.poetry.extras) == {"http": ("requests",)}
    assert facts.build_system == BuildSystem(("setuptools>=61",), "setuptools.build_meta")
    assert facts.tools == {"poetry", "pytest"}


def test_the_readers_answer_through_the_model(tmp_path: Path) -> None:
    root = checkout(
        tmp_path,
        {
            "pyproject.toml": PYPROJECT,
            "Makefile": "build:\n\ttrue\ntest: build\n\tpython -m pytest -q\n",
            "tox.ini": "[testenv]\ndeps = pytest-cov\ncommands = pytest\n",
            "poetry.lock": "",
            "go.mod": "module example.com/x\n",
            "minitool/__init__.py": "",
        },
    )
    facts = read_repository(root)
    assert facts.python is not None and facts.python.allows("3.11.2")
    assert not facts.python.allows("3.8.10")
    assert facts.extras["test"] == ["pytest>=7"]
    assert facts.name == "minitool" and facts.packages == ["minitool"]
    assert facts.make_targets == ("build", "test")
    assert facts.tox_sections == ("tox.ini",)
    assert facts.lockfiles == ("poetry.lock",)
    assert facts.ecosystems[:2] == ("python", "go")
    assert facts.test_command.command.startswith("python -m pytest")
    assert facts.test_tools[0].startswith("pytest")


def test_a_checkout_is_read_once_while_it_is_unchanged(tmp_path: Path) -> None:
    root = checkout(tmp_path, {"pyproject.toml": '[project]\nname = "a"\n'})
    first = read_repository(root)
    assert read_repository(root) is first
    assert read_repository(root / "." / "") is first  # the same checkout by another spelling
    # A rewrite of the same size (within one clock tick, its time may not change) is seen.
    (root / "pyproject.toml").write_text('[project]\nname = "b"\n')
    second = read_repository(root)
    assert second is not first
    assert second.project is not None and second.project.name == "b"


def test_an_unreadable_or_absent_pyproject_declares_nothing(tmp_path: Path) -> None:
    bad = checkout(tmp_path / "bad", {"pyproject.toml": "[project\nname = 1\n"})
    facts = read_repository(bad)
    assert facts.has_pyproject and not facts.pyproject_parses
    assert facts.project is None and facts.poetry is None and facts.pyproject == {}
    empty = checkout(tmp_path / "empty", {"pyproject.toml": ""})
    assert read_repository(empty).pyproject_parses  # an empty document is a document
    none = read_repository(checkout(tmp_path / "none", {"setup.py": "print()\n"}))
    assert not none.has_pyproject and not none.pyproject_parses and none.python is None


def test_a_linked_pyproject_is_not_followed(tmp_path: Path) -> None:
    """A checkout is untrusted: its pyproject.toml may point anywhere on this host."""
    outside = tmp_path / "outside.toml"
    outside.write_text('[project]\nname = "secret"\n')
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").symlink_to(outside)
    facts = read_repository(root)
    assert facts.project is None and not facts.pyproject_parses
