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
from .setup_py import setup_keywords

__all__ = ["CheckoutProof", "ModuleOrigin", "checkout_packages"]

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
    """Top-level packages of the checkout (``src/`` layout, a folder the build configuration
    names, namespace packages); single modules when none."""
    repo = Path(repo)
    packages: list[str] = []
    modules: list[str] = []
    tool = read_pyproject(repo).get("tool")
    namespaces = _declares_namespaces(repo, tool)
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
            elif entry.is_dir() and (nested or namespaces or entry.name in _NAMESPACES):
                # A namespace package (sphinxcontrib/spelling/): its regular subpackages.
                packages += [
                    f"{entry.name}.{child.name}"
                    for child in sorted(entry.iterdir())
                    if child.is_dir()
                    and not child.is_symlink()
                    and _IDENTIFIER.match(child.name)
                    and (child / "__init__.py").is_file()
                ]
            elif entry.suffix == ".py" and entry.is_file():
                name = entry.stem
                if name not in _NOT_MODULES and not name.startswith(("test_", "_")):
                    modules.append(name)
    return (packages or modules)[:MAX_PACKAGES]


class ModuleOrigin(BaseModel):
    name: str
    file: str | None = None
    distribution: str | None = None
    direct_url: str | None = None
    from_checkout: bool = False
    error: str | None = None


class CheckoutProof(BaseModel):
    """How the reference environment imports the project: the sidecar keeps it per repository."""

    verdict: Literal["checkout", "release", "not-importable", "no-packages", "unmeasured"]
    detail: str = ""
    modules: list[ModuleOrigin] = Field(default_factory=list)

    @property
    def refuses(self) -> bool:
        """A reference proven to import an installed release instead of the checkout."""
        return self.verdict == "release"
