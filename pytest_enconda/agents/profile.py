"""The codebase profile: what a repository's files say about setting it up, found deterministically.

From CI configuration (workflows and their Python matrix, system packages they install),
dependency manifests (pyproject.toml, setup.py/setup.cfg, requirements files, Pipfile, lock files)
and the README: language and version constraint, package manager with its install command and
config file, build tools, test framework, system dependencies found in CI files and likely ones
(Python packages known to need a Debian library). Shown in model-driven agents' prompts and saved
with the run (``agent/profile.json``).

Besides Python, every other registered ecosystem (``pytest_enconda.ecosystems``: Rust, Go,
C/C++, Java, PHP, JavaScript/TypeScript) gives its fields from its own manifests.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from ..ecosystems import Checkout, detection_order
from ..repo.facts import PoetryTable, RepoFacts, read_repository

MAX_READ = 200_000
CI_GLOBS = (
    ".github/workflows/*.yml",
    ".github/workflows/*.yaml",
    ".gitlab-ci.yml",
    ".travis.yml",
    ".circleci/config.yml",
    "azure-pipelines.yml",
    ".cirrus.yml",
    "appveyor.yml",
)
OTHER_CONFIG = (
    "Makefile",
    "tox.ini",
    "noxfile.py",
    "setup.cfg",
    "pytest.ini",
    "environment.yml",
    "environment.yaml",
    ".python-version",
    "runtime.txt",
    "Dockerfile",
    ".pre-commit-config.yaml",
)
# Python distributions that need a Debian library (or tool) to build or to import.
# What Qt's wheels load even offscreen (btrack's napari/vispy: "ImportError: fontconfig not
# found" stopped pytest at its plugins); the test step sets QT_QPA_PLATFORM=offscreen.
_QT = ("libgl1", "libegl1", "libfontconfig1", "libxkbcommon-x11-0", "libdbus-1-3", "libglib2.0-0")
SYSTEM_HINTS: dict[str, tuple[str, ...]] = {
    "pyqt5": _QT,
    "pyqt6": _QT,
    "pyside2": _QT,
    "pyside6": _QT,
    "qtpy": _QT,
    "pytest-qt": _QT,
    "napari": _QT,
    "vispy": ("libfontconfig1", "libgl1"),
    "python-magic": ("libmagic1",),
    "filemagic": ("libmagic1",),
    "psycopg2": ("libpq-dev",),
    "mysqlclient": ("default-libmysqlclient-dev",),
    "lxml": ("libxml2-dev", "libxslt1-dev"),
    "pycairo": ("libcairo2-dev",),
    "pygobject": ("libgirepository1.0-dev", "libcairo2-dev"),
    "h5py": ("libhdf5-dev",),
    "tables": ("libhdf5-dev",),
    "pyaudio": ("portaudio19-dev",),
    "opencv-python": ("libgl1", "libglib2.0-0"),
    "python-ldap": ("libldap2-dev", "libsasl2-dev"),
    "pyodbc": ("unixodbc-dev",),
    "gdal": ("libgdal-dev",),
    "fiona": ("libgdal-dev",),
    "shapely": ("libgeos-dev",),
    "pycurl": ("libcurl4-openssl-dev",),
    "dbus-python": ("libdbus-1-dev",),
    "pyzbar": ("libzbar0",),
    "pdf2image": ("poppler-utils",),
    "pytesseract": ("tesseract-ocr",),
    "weasyprint": ("libpango-1.0-0", "libpangoft2-1.0-0"),
    "pygraphviz": ("graphviz", "libgraphviz-dev"),
    "graphviz": ("graphviz",),
    "python-snappy": ("libsnappy-dev",),
    "pyspark": ("default-jre-headless",),
    # PyEnchant loads the C library and needs a dictionary (sphinx-contrib/spelling's tests).
    "pyenchant": ("libenchant-2-2", "hunspell-en-us"),
    # libtmux drives the tmux program (tmuxp's tests start tmux servers).
    "libtmux": ("tmux",),
}
_REQ_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_APT = re.compile(r"\bapt(?:-get)?\s+(?:-\S+\s+)*install\s+((?:[^\n;&|#`'\"]+))")
_PY_VERSION = re.compile(r"\b3\.\d{1,2}\b")
_MATRIX = re.compile(r"python(?:-version|_version)?\s*:\s*(\[[^\]]*\]|['\"]?[\d.]+['\"]?)", re.I)


class CodebaseProfile(BaseModel):
    language: str = "unknown"
    python_requires: str | None = Field(default=None, description="version constraint declared")
    ci_python_versions: list[str] = Field(default_factory=list)
    package_manager: str | None = None
    install_command: str | None = None
    config_file: str | None = None
    build_tools: list[str] = Field(default_factory=list)
    test_framework: str | None = None
    test_command: str | None = None
    ci_files: list[str] = Field(default_factory=list)
    manifests: list[str] = Field(default_factory=list)
    other_config: list[str] = Field(default_factory=list)
    extras: list[str] = Field(default_factory=list)
    ci_system_packages: list[str] = Field(default_factory=list)
    likely_system_packages: list[str] = Field(default_factory=list)
    readme_system_packages: list[str] = Field(default_factory=list)
    language_version: str | None = Field(
        default=None, description="the toolchain version a non-Python manifest asks for"
    )

    def to_aec(self) -> dict:
        """The profile in the shape of the AEC profile prompt's answer."""
        constraint = self.python_requires if self.language == "Python" else self.language_version
        return {
            "language": {"name": self.language, "version_constraint": constraint},
            "package_manager": {
                "name": self.package_manager,
                "install_command": self.install_command,
                "config_file": self.config_file,
            },
            "build_tools": list(self.build_tools),
            "test_framework": [self.test_framework] if self.test_framework else [],
            "system_dependencies": {
                "identified_in_ci": list(self.ci_system_packages),
                "likely_required": _unique(
                    [*self.likely_system_packages, *self.readme_system_packages]
                ),
            },
        }

    def render(self) -> str:
        """The profile as the short list an agent's prompt shows."""

        def joined(values: Iterable[str]) -> str:
            values = list(values)
            return ", ".join(values) if values else "none found"

        lines = [
            f"- language: {self.language}"
            + (f" (requires-python {self.python_requires})" if self.python_requires else "")
            + (f" (version {self.language_version})" if self.language_version else ""),
            f"- Python versions tested in CI: {joined(self.ci_python_versions)}",
            f"- package manager: {self.package_manager or 'unknown'}"
            + (f" (config: {self.config_file})" if self.config_file else ""),
            f"- install command suggested by the manifests: {self.install_command or 'unknown'}",
            f"- optional extras: {joined(self.extras)}",
            f"- build tools: {joined(self.build_tools)}",
            f"- test framework: {self.test_framework or 'unknown'}"
            + (f" (`{self.test_command}`)" if self.test_command else ""),
            f"- CI files: {joined(self.ci_files)}",
            f"- dependency manifests: {joined(self.manifests)}",
            f"- other configuration: {joined(self.other_config)}",
            f"- system packages installed in CI: {joined(self.ci_system_packages)}",
            f"- system packages named in the README: {joined(self.readme_system_packages)}",
            f"- likely system packages (from dependencies): {joined(self.likely_system_packages)}",
        ]
        return "\n".join(lines)


def _read(path: Path) -> str:
    try:
        return path.read_bytes()[:MAX_READ].decode("utf-8", errors="replace")
    except OSError:
        return ""


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_names(lines: Iterable[str]) -> list[str]:
    names = []
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith(("-", "git+", "http")):
            continue
        match = _REQ_NAME.match(line)
        if match:
            names.append(_canonical(match.group(1)))
    return names


def _apt_packages(text: str) -> list[str]:
    found: list[str] = []
    for match in _APT.finditer(text):
        for word in match.group(1).split():
            if word.startswith("-") or "$" in word or "{" in word or word in ("sudo", "\\"):
                continue
            if re.fullmatch(r"[a-z0-9][a-z0-9.+-]+(=[\w.:~+-]+)?", word):
                found.append(word)
    return found


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _ci_versions(text: str) -> list[str]:
    versions: list[str] = []
    for match in _MATRIX.finditer(text):
        versions.extend(_PY_VERSION.findall(match.group(1)))
    return versions


def build_profile(repo: Path, readme_name: str = "README.md") -> CodebaseProfile:
    """The profile of the repository in ``repo`` (a host folder); the same files give the same
    profile."""
    profile = CodebaseProfile()
    _read_ci(repo, profile)
    repo_facts = read_repository(repo)
    requirement_files = sorted(
        {p for p in repo.glob("requirements*.txt")} | {p for p in repo.glob("requirements/*.txt")}
    )
    dependencies = _dependencies(repo, profile, repo_facts, requirement_files)
    if profile.python_requires is None and repo_facts.python is not None:
        profile.python_requires = repo_facts.python.text
    setup_text = _read(repo / "setup.py") + "\n" + _read(repo / "setup.cfg")
    _installer(repo, profile, repo_facts, requirement_files)
    _tests(repo, profile, repo_facts.tools, dependencies, setup_text)
    likely: list[str] = []
    for name in dependencies:
        likely.extend(SYSTEM_HINTS.get(name, ()))
    # Non-Python manifests named theirs already (CMake find_package, Composer ext-*).
    profile.likely_system_packages = _unique([*profile.likely_system_packages, *likely])
    profile.readme_system_packages = _unique(_apt_packages(_read(repo / readme_name)))
    return profile


def _read_ci(repo: Path, profile: CodebaseProfile) -> None:
    """The CI files, the Python versions of their matrices and the Debian packages they install;
    the other configuration files present."""
    ci_texts: list[str] = []
    for pattern in CI_GLOBS:
        for path in sorted(repo.glob(pattern)):
            profile.ci_files.append(path.relative_to(repo).as_posix())
            ci_texts.append(_read(path))
    ci_text = "\n".join(ci_texts)
    profile.ci_python_versions = sorted(
        set(_ci_versions(ci_text)), key=lambda v: tuple(int(p) for p in v.split("."))
    )
    profile.ci_system_packages = _unique(_apt_packages(ci_text))
    profile.other_config = [name for name in OTHER_CONFIG if (repo / name).is_file()]


def _dependencies(
    repo: Path, profile: CodebaseProfile, repo_facts: RepoFacts, requirement_files: list[Path]
) -> list[str]:
    """The names of every dependency the manifests declare (extras and groups included); the
    manifests, extras, Python range and build tools on the profile on the way."""
    dependencies: list[str] = []
    if repo_facts.has_pyproject:
        profile.manifests.append("pyproject.toml")
    project = repo_facts.project
    if project is not None:
        if project.requires_python is not None:
            profile.python_requires = project.requires_python
        dependencies += _requirement_names(project.dependencies)
        profile.extras = sorted(project.optional_dependencies)
        for values in project.optional_dependencies.values():
            dependencies += _requirement_names(values)
    poetry = repo_facts.poetry or PoetryTable()
    # Poetry's names are its keys (tmuxp's libtmux).
    for table in (poetry.dependencies, poetry.dev_dependencies, *poetry.groups.values()):
        dependencies += _requirement_names(str(k) for k in table if str(k) != "python")
    for requirement in repo_facts.build_system.requires:
        name = _requirement_names([requirement])
        if name:
            profile.build_tools.append(name[0])
    if repo_facts.build_system.backend is not None:
        profile.build_tools.append(f"backend {repo_facts.build_system.backend}")
    for path in requirement_files:
        rel = path.relative_to(repo).as_posix()
        profile.manifests.append(rel)
        dependencies += _requirement_names(_read(path).splitlines())
    for name in ("setup.py", "setup.cfg", "Pipfile", "poetry.lock", "uv.lock", "pdm.lock"):
        if (repo / name).is_file() and name not in profile.manifests:
            profile.manifests.append(name)
    for name in ("environment.yml", "environment.yaml", *_other_manifests()):
        if (repo / name).is_file():
            profile.manifests.append(name)
    # setup.py and setup.cfg projects declare theirs there (qiita's install_requires names
    # psycopg2, whose build needs libpq's pg_config: unread, the recipe never installed it).
    dependencies += _requirement_names(repo_facts.install_requirements)
    declared = repo_facts.extras
    if not profile.extras:
        profile.extras = sorted(declared)
    for values in declared.values():
        dependencies += _requirement_names(values)
    return dependencies


def _installer(
    repo: Path, profile: CodebaseProfile, repo_facts: RepoFacts, requirement_files: list[Path]
) -> None:
    """The language (Python, else the first other ecosystem found), and for Python the package
    manager, its configuration file and the install command."""
    python = bool(
        {"pyproject.toml", "setup.py", "setup.cfg", "Pipfile"} & set(profile.manifests)
        or requirement_files
        or any(repo.glob("*.py"))
    )
    if python:
        profile.language = "Python"
    else:
        _other_ecosystem(repo, profile)

    tool = repo_facts.tools
    # A [project] table with anything in it is a pip-installable project's metadata.
    pyproject_project = repo_facts.project is not None and bool(repo_facts.pyproject["project"])
    extra = next((e for e in ("test", "tests", "testing", "dev") if e in profile.extras), None)
    target = f'".[{extra}]"' if extra else "."
    if "poetry" in tool or "poetry.lock" in profile.manifests:
        profile.package_manager, profile.config_file = "poetry", "pyproject.toml"
        profile.install_command = "poetry install"
    elif "uv.lock" in profile.manifests or "uv" in tool:
        profile.package_manager, profile.config_file = "uv", "pyproject.toml"
        profile.install_command = "uv sync"
    elif "Pipfile" in profile.manifests:
        profile.package_manager, profile.config_file = "pipenv", "Pipfile"
        profile.install_command = "pipenv install --dev"
    elif "pdm" in tool or "pdm.lock" in profile.manifests:
        profile.package_manager, profile.config_file = "pdm", "pyproject.toml"
        profile.install_command = "pdm install"
    elif pyproject_project or (repo / "setup.py").is_file() or (repo / "setup.cfg").is_file():
        profile.package_manager = "pip"
        profile.config_file = (
            "pyproject.toml"
            if pyproject_project
            else "setup.py"
            if (repo / "setup.py").is_file()
            else "setup.cfg"
        )
        commands = [f"pip install -r {p.relative_to(repo).as_posix()}" for p in requirement_files]
        profile.install_command = " && ".join([*commands, f"pip install -e {target}"])
    elif requirement_files:
        profile.package_manager = "pip"
        profile.config_file = requirement_files[0].relative_to(repo).as_posix()
        profile.install_command = " && ".join(
            f"pip install -r {p.relative_to(repo).as_posix()}" for p in requirement_files
        )
    elif profile.manifests and profile.manifests[0] in ("environment.yml", "environment.yaml"):
        profile.package_manager, profile.config_file = "conda", profile.manifests[0]
        profile.install_command = f"conda env create -f {profile.manifests[0]}"


def _tests(
    repo: Path,
    profile: CodebaseProfile,
    tool: Container[str],
    dependencies: list[str],
    setup_text: str,
) -> None:
    """The test framework and its command, and the build tools tox and make."""
    test_texts = _read(repo / "tox.ini") + _read(repo / "pytest.ini") + setup_text
    if (
        "pytest" in tool
        or "pytest" in dependencies
        or (repo / "pytest.ini").is_file()
        or (repo / "conftest.py").is_file()
        or "[tool:pytest]" in test_texts
        or "[pytest]" in test_texts
    ):
        profile.test_framework = "pytest"
        profile.test_command = "python -m pytest"
    elif "nose" in dependencies or "nose2" in dependencies:
        profile.test_framework = "nose"
    elif any(repo.glob("tests/test_*.py")) or any(repo.glob("test/test_*.py")):
        profile.test_framework = "unittest"
        profile.test_command = "python -m unittest discover"
    if (repo / "tox.ini").is_file():
        profile.build_tools.append("tox")
    if (repo / "Makefile").is_file():
        profile.build_tools.append("make")
    profile.build_tools = _unique(profile.build_tools)


def _other_manifests() -> list[str]:
    """The manifests of the ecosystems besides Python, in the order their language is decided
    when several exist."""
    ecosystems = [eco for eco in detection_order() if eco.profile is not None]
    return [name for eco in ecosystems for name in eco.manifests]


def _other_ecosystem(repo: Path, profile: CodebaseProfile) -> None:
    """Language, toolchain version, package manager, build and test tools of a non-Python
    repository, from the first ecosystem (``ecosystems.detection_order``) whose files it has."""
    for ecosystem in detection_order():
        if ecosystem.profile is None or not ecosystem.detected(repo):
            continue
        fields = ecosystem.profile(Checkout(repo, _read))
        profile.language = ecosystem.title
        profile.package_manager, profile.config_file = fields.package_manager, fields.config_file
        profile.language_version = fields.language_version
        profile.install_command, profile.test_command = fields.install_command, fields.test_command
        profile.test_framework = fields.test_framework
        profile.build_tools += fields.build_tools
        profile.likely_system_packages += fields.system_packages
        break
    if (repo / "Makefile").is_file() and "make" not in profile.build_tools:
        profile.build_tools.append("make")
