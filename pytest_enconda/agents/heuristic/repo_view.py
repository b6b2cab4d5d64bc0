"""The heuristic agent's view of the repository: its files, requirement files, the standard
library it imports, and what its manifests declare as ``repo.read_repository`` reads them.

The heuristic agent compares a README with these facts (never with a golden answer or the
original README). Everything is read from a host copy of the task container's repository with
the standard library and ``packaging``; a manifest that cannot be parsed contributes nothing.
"""

from __future__ import annotations

import ast
import difflib
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from ...repo.facts import ProjectTable, read_repository
from ...repo.facts import RepoFacts as DeclaredFacts
from ...repo.poetry import poetry_requirement, poetry_specifier
from ...repo.python_range import POETRY
from ...repo.vcs_version import PRETEND_VERSION, throwaway_tag

SKIP_DIRS = frozenset(
    {".git", "__pycache__", ".venv", "venv", "node_modules", ".tox", ".nox", ".mypy_cache"}
)
MAX_FILES = 20_000
# "requirements" looked for ahead, not between two runs that trade characters: a long name
# made of "requirements" cost its length squared.
_REQ_FILE = re.compile(
    r"(?:^|/)(?=[^/]*requirements)[^/]*\.(?:txt|in)$|^requirements/[^/]+\.(?:txt|in)$"
)
# Import names that differ from their distribution's name (the common cases).
IMPORT_NAMES = {
    "yaml": "pyyaml",
    "pil": "pillow",
    "cv2": "opencv-python",
    "sklearn": "scikit-learn",
    "bs4": "beautifulsoup4",
    "magic": "python-magic",
    "dateutil": "python-dateutil",
    "dotenv": "python-dotenv",
    "jwt": "pyjwt",
    "attr": "attrs",
    "google.protobuf": "protobuf",
    "serial": "pyserial",
    "usb": "pyusb",
    "skimage": "scikit-image",
    "crypto": "pycryptodome",
    "docx": "python-docx",
    "git": "gitpython",
    "mpl_toolkits": "matplotlib",
    "zmq": "pyzmq",
}


def parse_python(code: str) -> ast.Module:
    """``ast.parse`` without the warnings foreign code may raise (invalid escapes)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(code)


def requirement_name(text: str) -> str | None:
    """The canonical distribution name of a requirement string, or ``None``."""
    text = text.split("#", 1)[0].strip().strip("'\"")
    if not text or text.startswith(("-", ".", "/", "git+", "http:", "https:", "file:")):
        return None
    try:
        return canonicalize_name(Requirement(text).name)
    except InvalidRequirement:
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", text)
        return canonicalize_name(match.group(0)) if match else None


def requirement_spec(text: str) -> SpecifierSet | None:
    try:
        spec = Requirement(text.split("#", 1)[0].strip().strip("'\"")).specifier
    except InvalidRequirement:
        return None
    return spec if str(spec) else None


@dataclass
class RepoFacts:
    files: list[str] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)
    # Declared distribution name(s) of the project itself, canonical.
    names: list[str] = field(default_factory=list)
    requires_python: str | None = None
    requires_python_source: str | None = None
    dependencies: list[str] = field(default_factory=list)
    extras: dict[str, list[str]] = field(default_factory=dict)
    # Requirement files (relative path) → requirement strings, ``-r`` includes resolved.
    requirement_files: dict[str, list[str]] = field(default_factory=dict)
    # Requirement files → the requirement files they include (``-r``), transitively.
    requirement_includes: dict[str, list[str]] = field(default_factory=dict)
    scripts: list[str] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)
    manifests: list[str] = field(default_factory=list)
    # Standard-library modules the code imports unconditionally that are newer than some
    # Python versions: (module, first Python version that has it, file).
    stdlib_floor: list[tuple[str, str, str]] = field(default_factory=list)
    # The tag a throwaway git repository of the checkout gets for versioningit (its `vcs.match`).
    vcs_tag: str = "v" + PRETEND_VERSION

    # ------------------------------------------------------------------ queries

    def exists(self, path: str, cwd: str = "") -> bool:
        rel = normalize(path, cwd)
        return rel is not None and (rel in self._file_set or rel in self._dir_set or rel == "")

    @property
    def _file_set(self) -> set[str]:
        return set(self.files)

    @property
    def _dir_set(self) -> set[str]:
        return set(self.dirs)

    def closest_path(
        self, missing: str, cwd: str = "", *, kind: str = "any", pool: list[str] | None = None
    ) -> str | None:
        """The existing path most like ``missing`` (whole path, then its last part)."""
        target = normalize(missing, cwd)
        if target is None:
            return None
        if pool is None:
            pool = {"file": self.files, "dir": self.dirs}.get(kind, self.files + self.dirs)
        if not pool:
            return None
        best = _closest(target, pool, 0.6)
        if best is None:
            name = PurePosixPath(target).name
            by_name = [p for p in pool if PurePosixPath(p).name == name]
            if len(by_name) == 1:
                best = by_name[0]
        if best is None:
            # Same folder, other name: ``example/x.toml`` → ``examples/x.toml``.
            best = _closest(target, pool, 0.5)
        if best is None:
            return None
        if cwd and best.startswith(cwd.rstrip("/") + "/"):
            return best[len(cwd.rstrip("/")) + 1 :]
        return best

    def declared(self) -> dict[str, str]:
        """Every declared distribution (canonical name) → where it is declared."""
        found: dict[str, str] = {}
        for req in self.dependencies:
            name = requirement_name(req)
            if name:
                found.setdefault(name, "the project's dependencies")
        for extra, reqs in sorted(self.extras.items()):
            for req in reqs:
                name = requirement_name(req)
                if name:
                    found.setdefault(name, f"extra '{extra}'")
        for path, reqs in sorted(self.requirement_files.items()):
            for req in reqs:
                name = requirement_name(req)
                if name:
                    found.setdefault(name, path)
        return found

    def declared_spec(self, name: str) -> tuple[SpecifierSet, str] | None:
        """The version constraint the repository declares for distribution ``name``."""
        groups = [("the project's dependencies", self.dependencies)]
        groups += [(f"extra '{e}'", r) for e, r in sorted(self.extras.items())]
        groups += sorted(self.requirement_files.items())
        for where, reqs in groups:
            for req in reqs:
                if requirement_name(req) == name:
                    spec = requirement_spec(req)
                    if spec is not None:
                        return spec, f"{req.strip()} ({where})"
        return None

    def python_spec(self) -> SpecifierSet | None:
        if not self.requires_python:
            return None
        try:
            return SpecifierSet(self.requires_python)
        except InvalidSpecifier:
            return None

    def groups_providing(self, module_or_name: str) -> list[tuple[str, str]]:
        """(kind, group) pairs that declare the distribution behind ``module_or_name``.

        kind is ``extra`` or ``file``; ``module_or_name`` may be an import name (``yaml``).
        """
        wanted: set[str] = {canonicalize_name(module_or_name)}
        top = module_or_name.split(".")[0].lower()
        if top in IMPORT_NAMES:
            wanted.add(IMPORT_NAMES[top])
        wanted.add(canonicalize_name("python-" + top))
        wanted.add(canonicalize_name("py" + top))
        out: list[tuple[str, str]] = []
        for extra, reqs in sorted(self.extras.items()):
            if any(requirement_name(r) in wanted for r in reqs):
                out.append(("extra", extra))
        for path, reqs in sorted(self.requirement_files.items()):
            if any(requirement_name(r) in wanted for r in reqs):
                out.append(("file", path))
        return out


def normalize(path: str, cwd: str = "") -> str | None:
    """A repository-relative POSIX path, or ``None`` for paths outside it."""
    path = path.strip().strip("'\"")
    if not path or path.startswith(("/", "~", "$", "http:", "https:")):
        return None
    joined = os.path.normpath(os.path.join(cwd, path)) if cwd else os.path.normpath(path)
    if joined == ".":
        return ""
    if joined.startswith(".."):
        return None
    return joined.replace(os.sep, "/")


def _closest(target: str, pool: list[str], cutoff: float) -> str | None:
    matches = difflib.get_close_matches(target, sorted(pool), n=1, cutoff=cutoff)
    return matches[0] if matches else None


# ---------------------------------------------------------------------- scanning


def scan(root: Path) -> RepoFacts:
    facts = RepoFacts()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/")
        if rel_dir:
            facts.dirs.append(rel_dir)
        for name in sorted(filenames):
            facts.files.append(f"{rel_dir}/{name}" if rel_dir else name)
        if len(facts.files) > MAX_FILES:
            break
    facts.files.sort()
    facts.dirs.sort()
    declared = read_repository(root)
    _read_pyproject(declared, facts)
    _read_setup_cfg(declared, facts)
    _read_setup_py(declared, facts)
    facts.requires_python, facts.requires_python_source = _python(declared)
    for rel in facts.files:
        if _REQ_FILE.search(rel) and rel.count("/") <= 2:
            seen: set[str] = set()
            facts.requirement_files[rel] = _read_requirements(root, rel, seen)
            facts.requirement_includes[rel] = sorted(seen - {rel})
    facts.names = sorted(set(facts.names))
    facts.packages = _packages(root, facts)
    facts.stdlib_floor = _stdlib_floor(root, facts)
    return facts


# Standard-library modules by the Python version that introduced them.
NEW_STDLIB = {"tomllib": "3.11", "zoneinfo": "3.9", "graphlib": "3.9", "contextvars": "3.7",
              "dataclasses": "3.7", "secrets": "3.6"}  # fmt: skip


def _stdlib_floor(root: Path, facts: RepoFacts) -> list[tuple[str, str, str]]:
    found: dict[str, tuple[str, str, str]] = {}
    sources = [
        f for f in facts.files
        if f.endswith(".py") and not re.search(r"(^|/)(tests?|docs?|examples?)/", f)
    ][:400]  # fmt: skip
    for rel in sources:
        text = _text(root / rel)
        if text is None or not any(module in text for module in NEW_STDLIB):
            continue
        try:
            tree = parse_python(text)
        except (SyntaxError, ValueError):
            continue
        guarded: set[int] = set()
        for node in ast.walk(tree):
            # ``try: import tomllib / except ImportError: import tomli`` sets no floor.
            if isinstance(node, ast.Try | ast.If):
                guarded |= {id(child) for child in ast.walk(node)}
        for node in ast.walk(tree):
            if id(node) in guarded:
                continue
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module.split(".")[0]]
            for name in names:
                if name in NEW_STDLIB and name not in found:
                    found[name] = (name, NEW_STDLIB[name], rel)
    return sorted(found.values(), key=lambda item: tuple(int(p) for p in item[1].split(".")))


def _text(path: Path) -> str | None:
    try:
        if path.stat().st_size > 2_000_000:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _python(declared: DeclaredFacts) -> tuple[str | None, str | None]:
    """The first Python constraint the manifests declare, as written (an empty one included)
    and where; Poetry's is translated to PEP 440, a bare "3.9" read as its lowest version: what
    the E7 rule compares against."""
    for declaration in declared.python_declarations:
        if declaration.source == POETRY:
            return poetry_specifier(declaration.text, bare=">=") or "", declaration.source
        return declaration.text, declaration.source
    return None, None


def _read_pyproject(declared: DeclaredFacts, facts: RepoFacts) -> None:
    """pyproject's tables, as ``repo`` reads them for every reader of the checkout."""
    if not declared.pyproject_parses:
        return
    facts.manifests.append("pyproject.toml")
    facts.vcs_tag = throwaway_tag(dict(declared.pyproject))
    project = declared.project or ProjectTable()
    if project.name is not None:
        facts.names.append(canonicalize_name(project.name))
    facts.dependencies += project.dependencies
    for extra, reqs in project.optional_dependencies.items():
        facts.extras[extra] = list(reqs)
    facts.scripts += project.scripts
    poetry = declared.poetry
    if poetry is not None:
        if poetry.name is not None:
            facts.names.append(canonicalize_name(poetry.name))
        for name, spec in poetry.dependencies.items():
            facts.dependencies.append(poetry_requirement(name, spec))
        for extra, names in poetry.extras.items():
            facts.extras.setdefault(extra, list(names))
        facts.scripts += poetry.scripts


def _read_setup_cfg(declared: DeclaredFacts, facts: RepoFacts) -> None:
    parser = declared.setup_cfg
    if parser is None:
        return
    facts.manifests.append("setup.cfg")
    if parser.has_option("metadata", "name"):
        facts.names.append(canonicalize_name(parser.get("metadata", "name")))
    if parser.has_option("options", "install_requires"):
        facts.dependencies += _lines(parser.get("options", "install_requires"))
    if parser.has_section("options.extras_require"):
        for extra, value in parser.items("options.extras_require"):
            facts.extras.setdefault(extra, _lines(value))
    if parser.has_option("options.entry_points", "console_scripts"):
        for line in _lines(parser.get("options.entry_points", "console_scripts")):
            facts.scripts.append(line.split("=", 1)[0].strip())


def _lines(value: str) -> list[str]:
    return [line.strip() for line in value.splitlines() if line.strip()]


def _read_setup_py(declared: DeclaredFacts, facts: RepoFacts) -> None:
    if not (declared.root / "setup.py").is_file():
        return
    facts.manifests.append("setup.py")
    for keyword, value in declared.setup_py_calls:
        if keyword == "name" and isinstance(value, str):
            facts.names.append(canonicalize_name(value))
        elif keyword == "install_requires" and isinstance(value, list | tuple):
            facts.dependencies += [v for v in value if isinstance(v, str)]
        elif keyword == "extras_require" and isinstance(value, dict):
            for extra, reqs in value.items():
                if isinstance(reqs, list | tuple):
                    facts.extras.setdefault(str(extra), [r for r in reqs if isinstance(r, str)])
        elif keyword == "entry_points" and isinstance(value, dict):
            for line in value.get("console_scripts") or []:
                if isinstance(line, str):
                    facts.scripts.append(line.split("=", 1)[0].strip())


def _read_requirements(root: Path, rel: str, seen: set[str]) -> list[str]:
    if rel in seen:
        return []
    seen.add(rel)
    text = _text(root / rel)
    if text is None:
        return []
    out: list[str] = []
    for line in text.splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        include = re.match(r"^(?:-r|--requirement|-c|--constraint)\s*=?\s*(\S+)", line)
        if include:
            target = normalize(include.group(1), str(PurePosixPath(rel).parent))
            if target is not None and line.startswith(("-r", "--requirement")):
                out += _read_requirements(root, target, seen)
            continue
        if line.startswith("-"):
            continue
        out.append(line)
    return out


def _packages(root: Path, facts: RepoFacts) -> list[str]:
    found = set()
    for rel in facts.files:
        parts = rel.split("/")
        if parts[0] == "src":
            parts = parts[1:]
        if len(parts) == 2 and parts[1] == "__init__.py" and parts[0] not in ("tests", "test"):
            found.add(parts[0])
        elif len(parts) == 1 and parts[0].endswith(".py") and parts[0] != "setup.py":
            pass  # top-level scripts are not packages a README would import
    return sorted(found)
