"""The heuristic agent's failure classifier, one rule at a time, each on a real failure.

Every test writes a small repository under ``tmp_path``, copies it into a container of the
bookworm base image, runs the README's command there for real and hands the classifier what the
command printed; where the rule proposes a repair, the repaired command runs in the same
container and must succeed. Rules that need PyPI or Debian's mirrors are marked ``slow``.

Rules whose commands only run a script of the repository with the interpreter (argparse errors,
a missing path, a venv) run in a box of the fake backend instead (``local_box_for``): the
output the classifier reads is the same, and no container is started. Whatever installs
packages stays in Docker, since the fake backend is no sandbox.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_enconda.agents.heuristic.classify import Context, classify
from pytest_enconda.agents.heuristic.examples import example_findings
from pytest_enconda.agents.heuristic.findings import Finding
from pytest_enconda.agents.heuristic.prepass import run_prepass
from pytest_enconda.agents.heuristic.repo_view import RepoFacts, scan
from pytest_enconda.agents.heuristic.steps import ReadmeStep, readme_steps
from pytest_enconda.backends.base import Backend, started
from pytest_enconda.backends.docker import DockerBackend
from pytest_enconda.backends.fake import FakeBackend

WORKDIR = "/data/project"

CLI = """\
import argparse, pathlib, sys

def main():
    parser = argparse.ArgumentParser(prog="tool")
    sub = parser.add_subparsers(dest="command", required=True)
    head = sub.add_parser("head")
    head.add_argument("path")
    head.add_argument("-n", "--rows", type=int, default=5)
    sub.add_parser("stats").add_argument("path")
    args = parser.parse_args()
    path = pathlib.Path(args.path)
    if not path.exists():
        sys.exit(f"tool: no such file or directory: {path}")
    print(path.read_text().splitlines()[: getattr(args, "rows", 5)])

main()
"""

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "minitool"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = []

[project.optional-dependencies]
yaml = ["PyYAML>=6.0"]
test = ["pytest>=7"]

[project.scripts]
minitool = "minitool:main"
"""


@dataclass
class Repo:
    path: Path
    facts: RepoFacts
    readme: str
    steps: list[ReadmeStep]


def make_repo(tmp_path: Path, readme: str, files: dict[str, str]) -> Repo:
    root = tmp_path / "repo"
    for rel, text in {"README.md": readme, **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text), encoding="utf-8")
    facts = scan(root)
    readme = textwrap.dedent(readme)
    return Repo(root, facts, readme, readme_steps(readme, "README.md", facts))


class Box:
    """A container of the base image holding the repository at the working directory."""

    def __init__(self, container, repo: Repo) -> None:
        self.container = container
        self.repo = repo
        self.pythons: list[str] = []

    def run(self, command: str, timeout: float = 300) -> tuple[int | None, str]:
        result = self.container.exec(command, timeout=timeout, workdir=WORKDIR)
        return result.exit_code, result.output

    def classify(self, index: int, *, done: list[int] | None = None, command: str | None = None):
        """Run README step ``index`` for real and classify what happened."""
        step = self.repo.steps[index]
        command = command or step.command
        code, output = self.run(command)
        done = done or []
        ctx = Context(
            facts=self.repo.facts,
            steps=self.repo.steps,
            done=list(done),
            cwd="",
            probe=self.run,
            readme_text=self.repo.readme,
            attempted={*done, index},
            pythons=self.pythons,
        )
        return code, output, classify(step, command, code, output, ctx)


def _box_opener(backend: Backend, image: str) -> Iterator:
    opened = []

    def start(repo: Repo, *, network: bool = False) -> Box:
        manager = started(backend, image, case_id="t/heuristic", role="test", network=network)
        container = manager.__enter__()
        opened.append(manager)
        container.copy_in(repo.path, WORKDIR)
        box = Box(container, repo)
        code, text = box.run("ls /usr/bin | grep -E '^python3\\.[0-9]+$' | sort -u")
        box.pythons = [line[len("python") :] for line in text.split()] if code == 0 else []
        return box

    yield start
    for manager in reversed(opened):
        manager.__exit__(None, None, None)


@pytest.fixture
def box_for(sandbox, base_image) -> Iterator:
    yield from _box_opener(DockerBackend(sandbox=sandbox), base_image)


@pytest.fixture
def local_box_for(tmp_path: Path) -> Iterator:
    fake = FakeBackend(tmp_path / "fake")
    yield from _box_opener(fake, fake.add_image("empty"))
    fake.close()


def assert_repair_runs(box: Box, finding: Finding) -> None:
    assert finding.commands, finding
    code, output = box.run(finding.commands[0])
    assert code == 0, f"repair {finding.commands[0]!r} failed:\n{output}"


# ---------------------------------------------------------------------- E2


def test_e2_invalid_option_gets_the_closest_flag_from_help(tmp_path, local_box_for):
    box_for = local_box_for
    repo = make_repo(
        tmp_path,
        "# tool\n\n```bash\npython cli.py head data/sales.csv --lines 3\n```\n",
        {"cli.py": CLI, "data/sales.csv": "a,b\n1,2\n3,4\n"},
    )
    box = box_for(repo)
    code, output, finding = box.classify(0)
    assert code == 2 and "unrecognized arguments: --lines" in output
    assert finding.error_type == "E2", finding
    assert finding.commands == ["python cli.py head data/sales.csv --rows 3"]
    assert "--lines" in finding.description and "--rows" in finding.description
    assert_repair_runs(box, finding)


def test_e2_invalid_subcommand_gets_the_closest_choice(tmp_path, local_box_for):
    box_for = local_box_for
    repo = make_repo(
        tmp_path,
        "# tool\n\n```bash\npython cli.py haed data/sales.csv\n```\n",
        {"cli.py": CLI, "data/sales.csv": "a,b\n1,2\n"},
    )
    box = box_for(repo)
    code, output, finding = box.classify(0)
    assert code == 2 and "invalid choice: 'haed'" in output
    assert finding.error_type == "E2"
    assert finding.commands == ["python cli.py head data/sales.csv"]
    assert_repair_runs(box, finding)


@pytest.mark.docker
@pytest.mark.parametrize(
    ("line", "said", "repaired"),
    [
        # astropy/extension-helpers' injected E2 (dev split) was `pip install: extension-helpers`.
        ("pip list: --format=freeze", 'unknown command "list:"', "pip list --format=freeze"),
        ("git inti -q", "'inti' is not a git command", "git init -q"),
    ],
)
def test_e2_unknown_subcommand_takes_the_programs_suggestion(
    tmp_path, box_for, line: str, said: str, repaired: str
):
    repo = make_repo(
        tmp_path, f"# minitool\n\n```bash\n{line}\n```\n", {"pyproject.toml": PYPROJECT}
    )
    box = box_for(repo)
    code, output, finding = box.classify(0)
    assert code != 0 and said in output, output
    assert finding is not None and finding.error_type == "E2", finding
    assert finding.commands == [repaired]
    assert_repair_runs(box, finding)


@pytest.mark.docker
def test_e2_extras_split_by_the_shell(tmp_path, box_for):
    repo = make_repo(
        tmp_path,
        "# minitool\n\n```bash\npip install -e .[yaml, test]\n```\n",
        {"pyproject.toml": PYPROJECT, "minitool/__init__.py": "def main():\n    pass\n"},
    )
    box = box_for(repo)
    code, output, finding = box.classify(0)
    assert code != 0 and "Invalid requirement" in output
    assert finding.error_type == "E2"
    assert finding.commands == ['pip install -e ".[yaml,test]"']


# ---------------------------------------------------------------------- E4


@pytest.mark.docker
def test_e4_requirements_file_gets_the_closest_existing_one(tmp_path, box_for):
    repo = make_repo(
        tmp_path,
        "# app\n\n```bash\npip install -r requirements.txt\n```\n",
        {
            # Comments only: pip succeeds offline once the path is right.
            "requirements/base.txt": "# runtime: nothing pinned\n",
            "requirements/test.txt": "-r base.txt\n# test tools would go here\n",
        },
    )
    box = box_for(repo)
    code, output, finding = box.classify(0)
    assert code != 0 and "Could not open requirements file" in output
    assert finding.error_type == "E4"
    # The file that includes the other one is the superset the tests need.
    assert finding.commands == ["pip install -r requirements/test.txt"]
    assert_repair_runs(box, finding)


def test_e4_missing_path_in_a_usage_example(tmp_path, local_box_for):
    box_for = local_box_for
    repo = make_repo(
        tmp_path,
        "# tool\n\n```bash\npython cli.py head example/sales.csv\n```\n",
        {"cli.py": CLI, "examples/sales.csv": "a,b\n1,2\n"},
    )
    box = box_for(repo)
    code, output, finding = box.classify(0)
    assert code != 0 and "no such file or directory: example/sales.csv" in output
    assert finding.error_type == "E4"
    assert finding.commands == ["python cli.py head examples/sales.csv"]
    assert_repair_runs(box, finding)


# ---------------------------------------------------------------------- E6


def test_e6_activation_before_creation_moves_the_creation_first(tmp_path, local_box_for):
    box_for = local_box_for
    repo = make_repo(
        tmp_path,
        "# app\n\n```bash\n. .venv/bin/activate\npython3 -m venv .venv\n```\n",
        {},
    )
    box = box_for(repo)
    code, output, finding = box.classify(0)
    assert code != 0 and ".venv/bin/activate: No such file or directory" in output
    assert finding.error_type == "E6"
    assert finding.action == "move_before" and finding.move == 1
    # The reordered steps work.
    assert box.run(repo.steps[1].command)[0] == 0
    assert box.run(repo.steps[0].command)[0] == 0


@pytest.mark.docker
def test_e6_apt_install_before_update(tmp_path, box_for):
    repo = make_repo(
        tmp_path,
        "# app\n\n```bash\napt-get install -y libmagic1\napt-get update\n```\n",
        {},
    )
    box = box_for(repo)
    code, output, finding = box.classify(0)
    assert code != 0 and "Unable to locate package libmagic1" in output
    assert finding.error_type == "E6"
    assert finding.action == "move_before" and finding.move == 1


@pytest.mark.docker
def test_e6_command_used_before_the_step_that_installs_it(tmp_path, box_for):
    repo = make_repo(
        tmp_path,
        "# minitool\n\n## Usage\n\n```bash\nminitool --help\n```\n\n"
        "## Installation\n\n```bash\npip install -e .\n```\n",
        {"pyproject.toml": PYPROJECT, "minitool/__init__.py": "def main():\n    pass\n"},
    )
    box = box_for(repo)
    code, output, finding = box.classify(0)
    assert code == 127 and "minitool: command not found" in output
    assert finding.error_type == "E6"
    assert finding.action == "defer" and finding.move == 1


def test_e6_install_before_the_environment_is_static(tmp_path):
    repo = make_repo(
        tmp_path,
        "# app\n\n```bash\npip install -e .\npython -m venv .venv\n. .venv/bin/activate\n```\n",
        {"pyproject.toml": PYPROJECT},
    )
    findings = run_prepass(repo.steps, repo.facts, repo.readme, "README.md")
    orders = [f for f in findings if f.error_type == "E6"]
    assert len(orders) == 1 and orders[0].move == 0 and orders[0].commands == ["2"]


# The output of hazm's README line in the sandbox (2026-11-27 run), which reaches no forge.
CLONE_FAILED = (
    "Collecting git+https://github.com/example/minitool.git\n"
    "  Running command git clone --filter=blob:none --quiet "
    "https://github.com/example/minitool.git /tmp/pip-req-build-1\n"
    "  fatal: unable to access 'https://github.com/example/minitool.git/': Could not resolve "
    "host: github.com\n  error: subprocess-exited-with-error\n"
)


@pytest.mark.parametrize(
    ("line", "repaired"),
    [
        ("pip install git+https://github.com/example/minitool.git", "pip install ."),
        ("pip install -e git+https://github.com/example/MiniTool.git@main#egg=minitool",
         "pip install -e ."),
        ("pip install --upgrade https://github.com/example/minitool/tarball/dev",
         "pip install --upgrade ."),
    ],
)  # fmt: skip
def test_the_projects_own_repository_by_url_becomes_the_checkout(
    tmp_path: Path, line: str, repaired: str
) -> None:
    repo = make_repo(
        tmp_path, f"# minitool\n\n```bash\n{line}\n```\n", {"pyproject.toml": PYPROJECT}
    )
    ctx = Context(repo.facts, repo.steps, [], "", lambda _c: (0, ""), repo.readme)
    finding = classify(repo.steps[0], line, 1, CLONE_FAILED, ctx)
    assert finding is not None and finding.error_type is None, finding
    assert finding.commands == [repaired]
    # Another project's repository is a dependency, not the checkout.
    other = line.replace("minitool", "othertool").replace("MiniTool", "OtherTool")
    assert classify(repo.steps[0], other, 1, CLONE_FAILED, ctx) is None


# ---------------------------------------------------------------------- E7


@pytest.mark.docker
def test_e7_interpreter_outside_requires_python(tmp_path, box_for):
    repo = make_repo(
        tmp_path,
        "# minitool\n\nNeeds Python 3.10 or newer.\n\n```bash\npython3.10 -m venv .venv\n```\n",
        {"pyproject.toml": PYPROJECT},
    )
    box = box_for(repo)
    assert "3.11" in box.pythons
    code, output, finding = box.classify(0)
    assert code == 127 and "python3.10: command not found" in output
    assert finding.error_type == "E7"
    assert finding.commands == ["python3.11 -m venv .venv"]
    assert_repair_runs(box, finding)
    # The static pre-pass sees the prose claim and the command against requires-python.
    static = run_prepass(repo.steps, repo.facts, repo.readme, "README.md")
    assert [f.error_type for f in static] == ["E7"]
    assert "Python 3.10 or newer" in static[0].description


@pytest.mark.docker
def test_e7_interpreter_missing_but_allowed_is_no_readme_error(tmp_path, box_for):
    repo = make_repo(
        tmp_path,
        "# app\n\n```bash\npython3.12 -m venv .venv\n```\n",
        {"pyproject.toml": PYPROJECT.replace(">=3.11", ">=3.9")},
    )
    box = box_for(repo)
    code, _, finding = box.classify(0)
    assert code == 127
    assert finding.error_type is None and finding.commands == ["python3.11 -m venv .venv"]


@pytest.mark.slow
@pytest.mark.docker
def test_e7_pin_that_breaks_a_declared_constraint(tmp_path, box_for):
    project = PYPROJECT.replace("dependencies = []", 'dependencies = ["click>=8.0"]')
    repo = make_repo(
        tmp_path,
        '# minitool\n\n```bash\npip install -e .\npip install "click==7.1.2"\n```\n',
        {"pyproject.toml": project, "minitool/__init__.py": "def main():\n    pass\n"},
    )
    box = box_for(repo, network=True)
    assert box.run(repo.steps[0].command)[0] == 0
    code, output, finding = box.classify(1, done=[0])
    # pip succeeds and only warns: the evidence is the warning.
    assert code == 0 and "which is incompatible" in output
    assert finding.error_type == "E7" and finding.action == "drop"
    assert_repair_runs(box, finding)  # restores a click that satisfies the project
    static = run_prepass(repo.steps, repo.facts, repo.readme, "README.md")
    assert [f.error_type for f in static] == ["E7"] and "click>=8.0" in static[0].description


# ---------------------------------------------------------------------- E1


@pytest.mark.docker
def test_e1_module_declared_in_an_extra_not_installed(tmp_path, box_for):
    repo = make_repo(
        tmp_path,
        '# minitool\n\n```bash\npip install -e ".[test]"\npython -c "import yaml"\n```\n',
        {"pyproject.toml": PYPROJECT},
    )
    box = box_for(repo)
    # Step 0 as if it had run: only its text matters to the repair.
    code, output, finding = box.classify(1, done=[0])
    assert code == 1 and "No module named 'yaml'" in output
    assert finding.error_type == "E1"
    assert "extra `yaml`" in finding.description
    # The README's own install, widened, in the manifest's order of extras.
    assert finding.commands == ['pip install -e ".[yaml,test]"'] and finding.move == 0


@pytest.mark.slow
@pytest.mark.docker
def test_e1_no_such_distribution_becomes_the_declared_name(tmp_path, box_for):
    project = PYPROJECT.replace("dependencies = []", 'dependencies = ["packaging>=23"]')
    repo = make_repo(
        tmp_path,
        "# minitool\n\n```bash\npip install packagin\n```\n",
        {"pyproject.toml": project},
    )
    box = box_for(repo, network=True)
    code, output, finding = box.classify(0)
    assert code != 0 and "No matching distribution found for packagin" in output
    assert finding.error_type == "E1"
    assert finding.commands == ["pip install packaging"]
    assert_repair_runs(box, finding)


@pytest.mark.slow
@pytest.mark.docker
def test_e1_near_miss_name_that_does_not_build(tmp_path, box_for):
    # ``py.test`` exists on PyPI as a placeholder whose build fails; ``pytest`` is declared.
    repo = make_repo(
        tmp_path,
        "# minitool\n\n```bash\npip install py.test\n```\n",
        {"pyproject.toml": PYPROJECT},
    )
    box = box_for(repo, network=True)
    code, output, finding = box.classify(0)
    assert code != 0 and "metadata-generation-failed" in output
    assert finding.error_type == "E1"
    assert finding.commands == ["pip install pytest"]
    assert_repair_runs(box, finding)


@pytest.mark.slow
@pytest.mark.docker
def test_e1_missing_system_library(tmp_path, box_for):
    repo = make_repo(
        tmp_path,
        "# app\n\n```bash\npython3 -c \"import ctypes; ctypes.CDLL('libmagic.so.1')\"\n```\n",
        {},
    )
    box = box_for(repo, network=True)
    code, output, finding = box.classify(0)
    assert code == 1 and "libmagic.so.1: cannot open shared object file" in output
    assert finding.error_type == "E1"
    assert finding.commands == ["apt-get update && apt-get install -y libmagic1"]
    assert_repair_runs(box, finding)
    assert box.run(repo.steps[0].command)[0] == 0


# ---------------------------------------------------------------------- E8


@pytest.mark.docker
def test_e8_tool_the_readme_never_installs(tmp_path, box_for):
    repo = make_repo(tmp_path, "# app\n\n```bash\nfrobnicate --all\n```\n", {})
    box = box_for(repo)
    code, output, finding = box.classify(0)
    assert code == 127 and "frobnicate: command not found" in output
    assert finding.error_type == "E8"


@pytest.mark.docker
def test_e8_interactive_command(tmp_path, box_for):
    repo = make_repo(
        tmp_path,
        "# app\n\n```bash\npython3 configure.py\n```\n",
        {"configure.py": "name = input('Project name: ')\nprint(name)\n"},
    )
    box = box_for(repo)
    code, output, finding = box.classify(0)
    assert code == 1 and "EOFError" in output
    assert finding.error_type == "E8"


@pytest.mark.docker
def test_e8_python_example_without_its_import(tmp_path, box_for):
    readme = "# minitool\n\n```python\nprint(greet('x'))\n```\n"
    repo = make_repo(
        tmp_path,
        readme,
        {"minitool/__init__.py": "def greet(name):\n    return 'hi ' + name\n"},
    )
    findings = example_findings(
        repo.readme, "README.md", repo.facts, lambda rel: _read(repo.path / rel)
    )
    assert [f.error_type for f in findings] == ["E8"]
    assert "from minitool import greet" in findings[0].fix
    box = box_for(repo)
    code, output = box.run(f"python3 - <<'EOF'\n{findings[0].commands[0]}\nEOF")
    assert code == 1 and "NameError: name 'greet' is not defined" in output
    # A README that imports the name in another example is not wrong: examples build on each
    # other.
    other = readme + "\n```python\nfrom minitool import greet\n```\n"
    assert (
        example_findings(other, "README.md", repo.facts, lambda rel: _read(repo.path / rel)) == []
    )


def _read(path: Path) -> str | None:
    return path.read_text() if path.is_file() else None


# ---------------------------------------------------------------------- versions from git

VERSIONINGIT = """\
[build-system]
requires = ["setuptools>=61", "versioningit>=2"]
build-backend = "setuptools.build_meta"

[project]
name = "minitool"
dynamic = ["version"]
requires-python = ">=3.9"

[tool.versioningit.vcs]
match = ["release-*"]

[tool.versioningit.tag2version]
rmprefix = "release-"

[tool.versioningit.write]
file = "minitool/_version.py"
"""


@pytest.mark.slow
@pytest.mark.docker
def test_versioningit_without_git_gets_a_tagged_throwaway_repository(tmp_path, box_for):
    # cclib's failure in the sandbox (2026-11-27): the checkout has no .git, and versioningit
    # takes no version from the environment.
    repo = make_repo(
        tmp_path,
        "# minitool\n\n```bash\npip install .\n```\n",
        {"pyproject.toml": VERSIONINGIT, "minitool/__init__.py": "from ._version import *\n"},
    )
    assert repo.facts.vcs_tag == "release-0.0.0"
    box = box_for(repo, network=True)
    code, output, finding = box.classify(0)
    assert code != 0 and "versioningit could not find a version" in output, output[-2000:]
    assert finding is not None and finding.error_type is None, finding
    assert finding.action == "prepend" and "tag -a release-0.0.0" in finding.commands[0]
    assert_repair_runs(box, finding)
    code, output = box.run("pip install . && cd / && python -c 'import minitool._version'")
    assert code == 0, output[-2000:]


def test_each_git_version_tool_gets_its_own_repair(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path, "# m\n\n```bash\npip install .\n```\n", {"pyproject.toml": PYPROJECT}
    )
    ctx = Context(repo.facts, repo.steps, [], "", lambda _c: (0, ""), repo.readme)
    said = {
        "LookupError: setuptools-scm was unable to detect version for /data/project.":
            "export SETUPTOOLS_SCM_PRETEND_VERSION=0.0.0",
        "Exception: Versioning for this project requires either an sdist tarball, or access to "
        "an upstream git repository.": "export PBR_VERSION=0.0.0",
    }  # fmt: skip
    for output, repair in said.items():
        finding = classify(repo.steps[0], "pip install .", 1, output, ctx)
        assert finding is not None and finding.commands == [repair], output
    versioningit = classify(
        repo.steps[0], "pip install .", 1, "versioningit could not find a version", ctx
    )
    assert versioningit is not None and "tag -a v0.0.0 " in versioningit.commands[0]
    assert classify(repo.steps[0], "pip install .", 1, "error: no version here", ctx) is None
