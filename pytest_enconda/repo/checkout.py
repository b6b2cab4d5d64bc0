"""A reference must use the pinned checkout: which packages are the checkout's, and the record
of where the reference environment imports them from (``CheckoutProof``; ``verify.checkout``
runs ``probes/checkout_proof.py`` and gives the verdict).

For cantools, the literal agent on the original README ran ``pip install cantools``: the tests
then exercised the PyPI release, and the PASS set described a different program than the one at
the pinned revision. A reference whose project packages resolve to an installed release is no
reference.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from .files import read_ini, read_pyproject, read_text
from .project import declared_name
from .setup_py import setup_keywords

__all__ = ["CheckoutProof", "DistributionOrigin", "ModuleOrigin", "checkout_packages"]

# Folders at the top of a repository that are never the project's importable package.
_NOT_PACKAGES = {
    "test",
    "tests",
    "testing",
    "doc",
    "docs",
    "example",
    "examples",
    "benchmark",
    "benchmarks",
    "script",
    "scripts",
    "tools",
    "build",
    "dist",
    "site-packages",
    "node_modules",
}
_NOT_MODULES = {"setup", "conftest", "noxfile", "tasks", "fabfile", "manage", "versioneer"}
# Namespace packages seen at the top of a checkout (PEP 420: no __init__.py of their own).
_NAMESPACES = {
    "sphinxcontrib",
    "jaraco",
    "zope",
    "google",
    "azure",
    "backports",
    "ansible_collections",
}
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_PACKAGES = 8


_NAMESPACE_FINDERS = ("find_namespace_packages", "find_namespace:", "PEP420PackageFinder")


def _relative_folder(repo: Path, value: object) -> Path | None:
    """``value`` as a folder inside ``repo`` (no absolute paths, no ``..``, no symlinks)."""
    if not isinstance(value, str) or not value.strip():
        return None
    parts = Path(value.strip().strip("/")).parts
    if not parts or ".." in parts or Path(value).is_absolute():
        return None
    folder = repo.joinpath(*parts)
    return folder if folder.is_dir() and not folder.is_symlink() else None


def _declared_bases(repo: Path, tool: object) -> list[Path]:
    """Folders the build configuration puts packages in (gftools: ``[tool.setuptools.packages.
    find] where = ["Lib"]``), besides the root and ``src/``; ``tool`` is pyproject's table."""
    values: list[object] = []
    setuptools = tool.get("setuptools") if isinstance(tool, dict) else None
    if isinstance(setuptools, dict):
        package_dir = setuptools.get("package-dir")
        if isinstance(package_dir, dict):
            values.append(package_dir.get(""))
        packages = setuptools.get("packages")
        find = packages.get("find") if isinstance(packages, dict) else None
        if isinstance(find, dict) and isinstance(find.get("where"), list):
            values += find["where"]
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if isinstance(poetry, dict) and isinstance(poetry.get("packages"), list):
        values += [p.get("from") for p in poetry["packages"] if isinstance(p, dict)]
    setup_cfg = read_ini(read_text(repo / "setup.cfg"))
    if setup_cfg is not None:
        if setup_cfg.has_option("options", "package_dir"):
            for line in setup_cfg.get("options", "package_dir").splitlines():
                key, _, value = line.partition("=")
                if value and not key.strip():
                    values.append(value)
        if setup_cfg.has_option("options.packages.find", "where"):
            values.append(setup_cfg.get("options.packages.find", "where"))
    package_dir = setup_keywords(read_text(repo / "setup.py")).get("package_dir")
    if isinstance(package_dir, dict):
        values.append(package_dir.get(""))
    bases: list[Path] = []
    for value in values:
        folder = _relative_folder(repo, value)
        if folder is not None and folder not in bases and folder != repo:
            bases.append(folder)
    return bases


def _declares_namespaces(repo: Path, tool: object) -> bool:
    """The build finds PEP 420 namespace packages (bioimageio/spec/ under a bare bioimageio/)."""
    text = read_text(repo / "setup.py") + read_text(repo / "setup.cfg")
    if any(finder in text for finder in _NAMESPACE_FINDERS):
        return True
    setuptools = tool.get("setuptools") if isinstance(tool, dict) else None
    packages = setuptools.get("packages") if isinstance(setuptools, dict) else None
    find = packages.get("find") if isinstance(packages, dict) else None
    return isinstance(find, dict) and find.get("namespaces") is True


def checkout_packages(repo: Path) -> list[str]:
    """What the checkout proof looks for: the packages the build configuration names (Poetry's
    ``packages``, setuptools' and Hatch's lists), the top-level packages (``src/`` layout, a
    folder the build configuration names, namespace packages), single modules when none; then
    the packages of subprojects (zulip's ``zulip/setup.py`` beside ``zulip_bots/``), then the
    modules the entry points name."""
    repo = Path(repo)
    found = _declared_packages(repo)
    found += [name for name in _top_level(repo) if name not in found]
    if not found:
        for sub in sorted(repo.iterdir()) if repo.is_dir() else []:
            if _subproject(sub):
                found += [name for name in _top_level(sub) if name not in found]
    if not found:
        found = entry_point_modules(repo)
    return found[:MAX_PACKAGES]


def _subproject(folder: Path) -> bool:
    return (
        folder.is_dir()
        and not folder.is_symlink()
        and folder.name.lower() not in _NOT_PACKAGES
        and any((folder / name).is_file() for name in ("setup.py", "pyproject.toml"))
    )


def _package_at(folder: Path, name: str) -> list[str]:
    """``name`` for the package or module at ``folder`` (a path without its ``.py``): a regular
    package, a module file, or a namespace package (PEP 420) by its regular subpackages, or by
    itself when it has none."""
    if folder.is_symlink() or folder.with_suffix(".py").is_symlink():
        return []
    if folder.is_dir():
        if (folder / "__init__.py").is_file():
            return [name]
        return _namespace_children(folder, name) or [name]
    return [name] if folder.with_suffix(".py").is_file() else []


def _namespace_children(folder: Path, name: str) -> list[str]:
    return [
        f"{name}.{child.name}"
        for child in sorted(folder.iterdir())
        if child.is_dir()
        and not child.is_symlink()
        and _IDENTIFIER.match(child.name)
        and (child / "__init__.py").is_file()
    ]


def _declared_packages(repo: Path) -> list[str]:
    """Packages the build names one by one: Poetry's ``packages = [{include = "censys"}]``
    (censys' folder has no ``__init__.py``: a namespace package), ``[tool.setuptools]
    packages = [...]`` and Hatch's wheel ``packages = ["src/foo"]``."""
    tool = read_pyproject(repo).get("tool")
    tool = tool if isinstance(tool, dict) else {}
    wanted: list[tuple[str, str]] = []  # (base folder, dotted name)
    poetry = tool.get("poetry")
    if isinstance(poetry, dict) and isinstance(poetry.get("packages"), list):
        for entry in poetry["packages"]:
            if isinstance(entry, dict) and isinstance(entry.get("include"), str):
                base = entry.get("from")
                base = base if isinstance(base, str) else ""
                wanted.append((base, entry["include"].removesuffix(".py").replace("/", ".")))
    setuptools = tool.get("setuptools")
    if isinstance(setuptools, dict) and isinstance(setuptools.get("packages"), list):
        wanted += [("", name) for name in setuptools["packages"] if isinstance(name, str)]
    hatch = tool.get("hatch")
    targets = hatch.get("build", {}).get("targets", {}) if isinstance(hatch, dict) else {}
    wheel = targets.get("wheel") if isinstance(targets, dict) else None
    if isinstance(wheel, dict) and isinstance(wheel.get("packages"), list):
        for path in wheel["packages"]:
            if isinstance(path, str) and path.strip("/"):
                base, _, name = path.strip("/").rpartition("/")
                wanted.append((base, name))
    found: list[str] = []
    for base, dotted in wanted:
        parts = dotted.split(".")
        if not all(_IDENTIFIER.match(part) for part in parts):
            continue  # a glob ("censys*") or a path the proof cannot name
        root = _relative_folder(repo, base) if base.strip("./") else repo
        if root is None:
            continue
        found += [n for n in _package_at(root.joinpath(*parts), dotted) if n not in found]
    return found


def _top_level(repo: Path) -> list[str]:
    """Top-level packages of one project folder; single modules when none."""
    packages: list[str] = []
    modules: list[str] = []
    tool = read_pyproject(repo).get("tool")
    namespaces = _declares_namespaces(repo, tool)
    own = declared_name(repo).lower().replace("-", "_").replace(".", "_")
    for base in (repo / "src", *_declared_bases(repo, tool), repo):
        if not base.is_dir() or base.is_symlink():
            continue
        nested = base != repo
        for entry in sorted(base.iterdir()):
            if entry.is_symlink() or not _IDENTIFIER.match(entry.stem):
                continue
            if entry.is_dir() and entry.name.lower() in _NOT_PACKAGES:
                continue
            if entry.is_dir() and (entry / "__init__.py").is_file():
                if entry.name not in packages:
                    packages.append(entry.name)
            elif entry.is_dir() and (
                nested or namespaces or entry.name in _NAMESPACES or entry.name.lower() == own
            ):
                # A namespace package (sphinxcontrib/spelling/): its regular subpackages.
                packages += _namespace_children(entry, entry.name)
            elif entry.suffix == ".py" and entry.is_file():
                name = entry.stem
                if name not in _NOT_MODULES and not name.startswith(("test_", "_")):
                    modules.append(name)
    return packages or modules


_ENTRY_POINT = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(?::|$)")


def entry_point_modules(repo: Path) -> list[str]:
    """The modules the console scripts and entry points name (``pkg.cli:main`` -> ``pkg.cli``):
    pyproject's ``[project.scripts]``, ``gui-scripts`` and ``entry-points``, Poetry's
    ``scripts``, setup.cfg's ``[options.entry_points]`` and setup.py's ``entry_points``."""
    values: list[object] = []
    pyproject = read_pyproject(repo)
    project = pyproject.get("project")
    if isinstance(project, dict):
        values += [project.get("scripts"), project.get("gui-scripts")]
        groups = project.get("entry-points")
        if isinstance(groups, dict):
            values += list(groups.values())
    tool = pyproject.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if isinstance(poetry, dict):
        values.append(poetry.get("scripts"))
    setup_cfg = read_ini(read_text(repo / "setup.cfg"))
    if setup_cfg is not None and setup_cfg.has_section("options.entry_points"):
        for _, text in setup_cfg.items("options.entry_points"):
            values += [line.partition("=")[2] for line in text.splitlines()]
    declared = setup_keywords(read_text(repo / "setup.py")).get("entry_points")
    if isinstance(declared, dict):
        for group in declared.values():
            lines = group if isinstance(group, list) else [group]
            values += [line.partition("=")[2] for line in lines if isinstance(line, str)]
    targets: list[str] = []
    for value in values:
        if isinstance(value, dict):
            targets += [v for v in value.values() if isinstance(v, str)]
        elif isinstance(value, str):
            targets.append(value)
    modules: list[str] = []
    for target in targets:
        match = _ENTRY_POINT.match(target)
        if match and match.group(1) not in modules and not match.group(1).endswith("."):
            modules.append(match.group(1))
    return modules


class ModuleOrigin(BaseModel):
    name: str
    file: str | None = None
    # Whether the file lies under the project folder (None: said by a probe from before).
    under_checkout: bool | None = None
    distribution: str | None = None
    direct_url: str | None = None
    from_checkout: bool = False
    error: str | None = None


class DistributionOrigin(BaseModel):
    """The project's own distribution as the reference installed it (PEP 610 record)."""

    name: str
    direct_url: str | None = None
    from_checkout: bool = False
    error: str | None = None


class CheckoutProof(BaseModel):
    """How the reference environment imports the project: the sidecar keeps it per repository.
    ``no-packages`` proves nothing: a reference with it is refused like a release."""

    verdict: Literal["checkout", "release", "not-importable", "no-packages", "unmeasured"]
    detail: str = ""
    modules: list[ModuleOrigin] = Field(default_factory=list)
    distribution: DistributionOrigin | None = None
    probe_sha256: str | None = Field(
        default=None,
        pattern=r"^[0-9a-f]{64}$",
        description="the SHA-256 of the probe (probes/checkout_proof.py) whose verdict this is "
        "(None: a probe from before it was recorded, run from the project folder, where the "
        "checkout could shadow an installed release)",
    )

    @property
    def refuses(self) -> bool:
        """A reference proven to import an installed release instead of the checkout, or one
        with nothing to prove it by."""
        return self.verdict in ("release", "no-packages")
