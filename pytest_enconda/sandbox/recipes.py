"""Base image recipes: a Debian release, its own python3, and the tools a setup task expects.

The contents follow EnConda-Bench's published base image where Debian and PyPI can supply them;
its Miniconda and pyenv-built Pythons cannot be had here (no registry, no GitHub).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from packaging.version import Version
from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from ..repo.python_range import DeclaredPython

# Every base gets these; names exist unchanged in bullseye, bookworm and trixie.
COMMON_PACKAGES: tuple[str, ...] = (
    "python3",
    "python3-pip",
    "python3-venv",
    "python3-dev",
    "python-is-python3",
    "git",
    "curl",
    "wget",
    "tree",
    "zip",
    "unzip",
    "xz-utils",
    "bzip2",
    "jq",
    "build-essential",
    "pkg-config",
    "procps",
    "ca-certificates",
    "tzdata",
    "libssl-dev",
    "libffi-dev",
    "zlib1g-dev",
    "libbz2-dev",
    "libreadline-dev",
    "libsqlite3-dev",
    "liblzma-dev",
    "libxml2-dev",
    "libxslt1-dev",
    "libjpeg-dev",
)

# Latest releases on PyPI that still install on the recipe's python3 (poetry and pipenv
# dropped 3.9 in their 2.3 / 2025.1 lines).
MODERN_TOOLS: tuple[str, ...] = ("poetry==2.5.1", "uv==0.13.9", "pipenv==2026.10.3")
PY39_TOOLS: tuple[str, ...] = ("poetry==2.2.1", "uv==0.13.9", "pipenv==2025.0.4")

# Debian's one-line sources; {mirror}/{security} come from the settings.
DEFAULT_APT_SOURCES: tuple[str, ...] = (
    "deb {mirror} {release} main",
    "deb {mirror} {release}-updates main",
    "deb {security} {release}-security main",
)


class BaseRecipe(BaseModel):
    """Everything that decides a base image; its hash names the image."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    release: str = Field(description="Debian suite given to debootstrap")
    python: str = Field(description="the release's own python3 (major.minor), checked after build")
    python_release: str = Field(
        default="",
        exclude=True,
        description="the full version of that python3 (Debian's package: a stable release "
        "backports fixes without changing it), which requires-python ranges are tested against; "
        "a fact about the release, not a build input: left out of the fingerprint",
    )
    variant: str = "minbase"
    include: tuple[str, ...] = Field(
        default=(), description="extra packages for debootstrap --include (part of the rootfs key)"
    )
    apt_sources: tuple[str, ...] = DEFAULT_APT_SOURCES
    packages: tuple[str, ...] = COMMON_PACKAGES
    tools: tuple[str, ...] = MODERN_TOOLS
    extra_steps: tuple[str, ...] = Field(
        default=(), description="Dockerfile instructions appended after the tools are installed"
    )
    salt: str = Field(
        default="", description="changes both rootfs and base keys (cold-build benchmarks)"
    )

    def rootfs_key(self, mirror: str) -> str:
        """Key of the debootstrap import: (release, mirror, variant, include list, salt)."""
        return _digest(
            {
                "release": self.release,
                "mirror": mirror,
                "variant": self.variant,
                "include": sorted(self.include),
                "salt": self.salt,
            }
        )

    def fingerprint(self) -> dict[str, object]:
        return self.model_dump(mode="json")


def _digest(data: object) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


BASE_RECIPES: dict[str, BaseRecipe] = {
    recipe.name: recipe
    for recipe in (
        # python3 in Debian's archive: bullseye 3.9.2-3, bookworm 3.11.2-1+b1, trixie 3.13.5-1.
        BaseRecipe(
            name="bullseye-py3.9",
            release="bullseye",
            python="3.9",
            python_release="3.9.2",
            tools=PY39_TOOLS,
        ),
        BaseRecipe(
            name="bookworm-py3.11", release="bookworm", python="3.11", python_release="3.11.2"
        ),
        BaseRecipe(name="trixie-py3.13", release="trixie", python="3.13", python_release="3.13.5"),
    )
}
DEFAULT_BASE = "bookworm-py3.11"


def get_recipe(name: str) -> BaseRecipe:
    try:
        return BASE_RECIPES[name]
    except KeyError:
        known = ", ".join(sorted(BASE_RECIPES))
        raise KeyError(f"unknown base recipe {name!r}; known: {known}") from None


class BaseChoice(NamedTuple):
    """The base a repository's reference is built on, and why (for the progress line)."""

    name: str
    reason: str


def _minor_distance(a: str, b: str) -> int:
    left, right = Version(a), Version(b)
    return abs((left.major * 100 + left.minor) - (right.major * 100 + right.minor))


def pick_base(
    declared: DeclaredPython | None,
    default: str = DEFAULT_BASE,
    recipes: Mapping[str, BaseRecipe] = BASE_RECIPES,
) -> BaseChoice:
    """``default`` unless the declared range excludes its Python and another recipe's Python is
    in it; then the one closest to the default's (on a tie the older: a range excluding the
    default's Python more often ends below it than above)."""
    base = recipes[default]
    if declared is None:
        return BaseChoice(default, "no Python range declared")
    if not declared.readable:
        return BaseChoice(default, f"{declared.describe()} cannot be read ({declared.problem})")
    if not base.python_release:
        return BaseChoice(default, f"{default}'s full Python version is not recorded")
    if declared.allows(base.python_release):
        return BaseChoice(default, f"{declared.describe()} allows {base.python_release}")
    fitting = sorted(
        (
            _minor_distance(recipe.python_release, base.python_release),
            Version(recipe.python_release),
            recipe.name,
        )
        for recipe in recipes.values()
        if recipe.python_release and declared.allows(recipe.python_release)
    )
    if not fitting:
        releases = sorted(Version(r.python_release) for r in recipes.values() if r.python_release)
        tried = ", ".join(str(release) for release in releases)
        return BaseChoice(
            default, f"{declared.describe()} allows none of the bases' Pythons ({tried})"
        )
    name = fitting[0][2]
    return BaseChoice(
        name,
        f"{declared.describe()} excludes {base.python_release}, allows "
        f"{recipes[name].python_release}",
    )


def choose_base(
    repo: Path, default: str = DEFAULT_BASE, recipes: Mapping[str, BaseRecipe] = BASE_RECIPES
) -> BaseChoice:
    """The base for the repository checked out in ``repo``, from its declared Python range."""
    from ..repo.python_range import declared_python

    return pick_base(declared_python(repo), default, recipes)


def older_base(
    current: str,
    still_has: Callable[[str], bool],
    declared: DeclaredPython | None,
    recipes: Mapping[str, BaseRecipe] = BASE_RECIPES,
) -> BaseChoice | None:
    """The newest recipe older than ``current`` whose Python ``still_has`` (a removed API the
    code uses) and the repository's declared range (if readable) allows; None if none."""
    here = Version(recipes[current].python_release or recipes[current].python)
    candidates = sorted(
        (
            (Version(recipe.python_release), recipe.name)
            for recipe in recipes.values()
            if recipe.python_release
            and Version(recipe.python_release) < here
            and still_has(recipe.python_release)
            and (
                declared is None or not declared.readable or declared.allows(recipe.python_release)
            )
        ),
        reverse=True,
    )
    if not candidates:
        return None
    release, name = candidates[0]
    return BaseChoice(name, f"its Python {release} still has what the code uses")
