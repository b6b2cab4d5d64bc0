"""A version for a checkout without ``.git``, for the build tools that read it from git.

The harness copies a repository's checkout without its ``.git``. A build whose version comes from
git history then fails (cclib: versioningit's "could not find a version for the project"), unless
the tool is told a version another way. Each row of ``VERSION_TOOLS`` names a tool, how a
repository's build configuration names it, and the environment variables its documentation says
it takes a version from instead of git:

- setuptools-scm (and what builds on it: hatch-vcs, flit_scm, scikit-build-core's provider):
  ``SETUPTOOLS_SCM_PRETEND_VERSION``; its successor core vcs-versioning:
  ``VCS_VERSIONING_PRETEND_VERSION``;
- pdm-backend with ``source = "scm"``: ``PDM_BUILD_SCM_VERSION`` (pdm-pep517:
  ``PDM_PEP517_SCM_VERSION``);
- poetry-dynamic-versioning: ``POETRY_DYNAMIC_VERSIONING_BYPASS``;
- uv-dynamic-versioning: ``UV_DYNAMIC_VERSIONING_BYPASS``;
- pbr: ``PBR_VERSION``;
- versioningit: none. It reads only its own ``[tool.versioningit]`` table (``default-version``
  is a setting there, not a variable: versioningit 3.3.0 reads ``VERSIONINGIT_LOG_LEVEL`` and
  ``SOURCE_DATE_EPOCH`` only), and a ``PKG-INFO`` file, but then skips its ``write`` step, so a
  package importing the version file it writes (cclib's ``cclib/_version.py``) would not import.
  What a clone would have is given instead: a throwaway git repository of the checkout, one
  commit tagged ``v0.0.0`` (or the first ``vcs.match`` pattern with its ``*`` made ``0.0.0``),
  removed again after the installs so that the tests see the tree the agents get.

- miniver: none either. Without git its ``_version.py`` says ``unknown``, which setuptools 66 and
  later refuse (menpo: "Invalid version: 'unknown'"); with the throwaway repository's tag it
  says ``0.0.0`` (it strips the leading ``v``).

setuptools-git-versioning and versioneer need no row: without git they fall back to a version of
their own (``starting_version``, ``0+unknown``) instead of failing.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CONFIG_FILES",
    "PRETEND_VERSION",
    "VERSION_TOOLS",
    "VersionTool",
    "named_tools",
    "named_variables",
    "throwaway_git",
    "throwaway_tag",
    "version_setup",
    "version_tools",
]

PRETEND_VERSION = "0.0.0"
_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The build configuration files a version tool is named in: callers pass their text.
CONFIG_FILES = ("pyproject.toml", "setup.cfg", "setup.py")


class VersionTool(BaseModel):
    """A build tool that computes the version from git, and how to give it one without git."""

    model_config = ConfigDict(frozen=True)

    name: str
    markers: tuple[str, ...] = Field(
        description="regular expressions, one found in pyproject.toml, setup.cfg or setup.py "
        "naming the tool"
    )
    variables: tuple[str, ...] = Field(
        description="environment variables the tool takes a version from; none: a throwaway "
        "git repository stands in"
    )
    always: bool = Field(
        default=False, description="set for every repository, whether or not a marker is found"
    )
    failure: str = Field(
        default="",
        description="what the tool's build failure says when it finds no version without git "
        "(the heuristic agent's repair looks for it); '' where another row's tool says it",
    )


VERSION_TOOLS: tuple[VersionTool, ...] = (
    # Set for every repository: the checkout may configure it where no marker is looked for. Only
    # for the project's distribution where its name is declared (version_setup), so a sub-project
    # installed from the checkout (`-e ./plugin`) gets none then.
    VersionTool(
        name="setuptools-scm",
        markers=(r"setuptools[_-]scm", r"use_scm_version", r"vcs[_-]versioning", r"flit[_-]scm"),
        variables=("SETUPTOOLS_SCM_PRETEND_VERSION", "VCS_VERSIONING_PRETEND_VERSION"),
        always=True,
        failure="setuptools-scm was unable to detect version",
    ),
    VersionTool(
        name="hatch-vcs", markers=(r"hatch[_-]vcs",), variables=("SETUPTOOLS_SCM_PRETEND_VERSION",)
    ),
    # Only where named: these override the version of every package of the tool that the setup
    # builds, a dependency's sdist included.
    VersionTool(
        name="pdm-backend",
        markers=(r"""source\s*=\s*["']scm["']""", r"use_scm\s*=\s*true"),
        variables=("PDM_BUILD_SCM_VERSION", "PDM_PEP517_SCM_VERSION"),
    ),
    VersionTool(
        name="poetry-dynamic-versioning",
        markers=(r"poetry[_-]dynamic[_-]versioning",),
        variables=("POETRY_DYNAMIC_VERSIONING_BYPASS",),
    ),
    VersionTool(
        name="uv-dynamic-versioning",
        markers=(r"uv[_-]dynamic[_-]versioning",),
        variables=("UV_DYNAMIC_VERSIONING_BYPASS",),
    ),
    VersionTool(
        name="pbr",
        markers=(r"\bpbr\s*=\s*True", r"""["']pbr(?:[<>=!~ ][^"']*)?["']"""),
        variables=("PBR_VERSION",),
        failure="Versioning for this project requires either an sdist tarball, or access to an "
        "upstream git repository",
    ),
    VersionTool(
        name="versioningit",
        markers=(r"versioningit",),
        variables=(),
        failure="versioningit could not find a version",
    ),
    # A setup.py that runs git itself for its version: lhotse's adds `+git.<commit>` from `git
    # rev-parse`, and without git ".unknownsource", which setuptools 66+ refuses ("Invalid
    # version: '1.25.0.dev.unknownsource'").
    VersionTool(
        name="git in setup.py",
        markers=(r"""\[\s*["']git["']\s*,\s*["'](?:rev-parse|describe|log)["']""",),
        variables=(),
    ),
    # Named by the template comment miniver puts in setup.py, or its loader's name.
    VersionTool(
        name="miniver",
        markers=(r"\bminiver\b", r"\bget_version_and_cmdclass\b"),
        variables=(),
        failure="Invalid version: 'unknown'",
    ),
)


def named_tools(config: str) -> list[VersionTool]:
    """The rows of ``VERSION_TOOLS`` whose tool ``config`` (the text of ``CONFIG_FILES``) names."""
    return [
        tool for tool in VERSION_TOOLS if any(re.search(marker, config) for marker in tool.markers)
    ]


def version_tools(config: str) -> list[VersionTool]:
    """The rows a setup gives a version to: those ``config`` names, and those set always."""
    named = named_tools(config)
    return [tool for tool in VERSION_TOOLS if tool.always or tool in named]


def throwaway_tag(pyproject: dict[str, Any]) -> str:
    """The tag versioningit's ``vcs.match`` accepts (cclib's ``["v*"]``), ``v0.0.0`` otherwise
    (versioningit strips a leading ``v``)."""
    tool = pyproject.get("tool")
    table = tool.get("versioningit") if isinstance(tool, dict) else None
    vcs = table.get("vcs") if isinstance(table, dict) else None
    patterns = vcs.get("match") if isinstance(vcs, dict) else None
    for pattern in patterns if isinstance(patterns, list) else []:
        prefix = re.fullmatch(r"([A-Za-z0-9._/-]*)\*", str(pattern))
        # The pattern is the repository's: a tag beginning with '-' would reach `git tag` as an
        # option (and git refuses such a tag name anyway).
        if prefix and not prefix.group(1).startswith("-"):
            return prefix.group(1) + PRETEND_VERSION
    return "v" + PRETEND_VERSION


def throwaway_git(tag: str) -> str:
    """One shell line making the checkout a git repository of one commit tagged ``tag``
    (already quoted for the shell). The tag is annotated: miniver runs ``git describe`` without
    ``--tags``, which passes over a lightweight tag (menpo still said "unknown")."""
    who = "git -c user.name=enconda -c user.email=enconda@localhost"
    return (
        f"git init -q && git add -A && {who} commit -q --no-verify -m 'the checkout' && "
        f"{who} tag -a {tag} -m 'the checkout'"
    )


def named_variables(variable: str, dist_name: str) -> list[str]:
    """setuptools-scm's per-distribution form of ``variable`` (``..._FOR_EXCALIBUR_TESTS``), in
    the spellings its releases read: 8+ canonicalises the name (PEP 503, ``-`` made ``_``), 6 and
    7 upper-cased it as written; those that are shell names."""
    forms = [
        canonicalize_name(dist_name).replace("-", "_").upper(),
        dist_name.upper().replace("-", "_"),
        dist_name.upper(),
    ]
    out: list[str] = []
    for form in forms:
        name = f"{variable}_FOR_{form}"
        if _SHELL_NAME.fullmatch(name) and name not in out:
            out.append(name)
    return out


def version_setup(
    config: str, pyproject: dict[str, Any], dist_name: str = ""
) -> tuple[list[str], list[str]]:
    """Shell lines for a setup script run in the checkout, from ``config`` (the text of
    ``CONFIG_FILES``) and the parsed ``pyproject.toml``: those before its installs (the variables,
    or the throwaway repository) and those after them (its removal).

    With the project's ``dist_name`` known, setuptools-scm's version is given for that
    distribution only: the global variable also versions every dependency built from an sdist
    with setuptools-scm as ``0.0.0`` (excalibur-tests' ``titlecase>=2.4.1`` then "has
    inconsistent version: expected '2.4.1', but metadata has '0.0.0'", and the setup failed).
    With no name declared and no tool named, no version is given: llm-random installs only a
    requirements file, and the global variable made its ``matplotlib==3.5.1`` sdist 0.0.0.
    """
    named = named_tools(config)
    tools = [tool for tool in version_tools(config) if dist_name or tool in named]
    if not tools:
        return [], []
    names = ", ".join(tool.name for tool in tools)
    # "cases.vcs_version": this module's old place, kept because recorded reference setups
    # quote the line and a re-run must write the same script.
    before = [f"# The checkout has no .git: a version for {names} (cases.vcs_version)."]
    after: list[str] = []
    variables: list[str] = []
    for tool in tools:
        scoped = tool.always and bool(dist_name)
        for name in tool.variables:
            for variable in named_variables(name, dist_name) if scoped else [name]:
                if variable not in variables:
                    variables.append(variable)
    before += [f'export {name}="${{{name}:-{PRETEND_VERSION}}}"' for name in variables]
    if any(tool.name == "setuptools-scm" for tool in tools):
        before += _fallback_override(pyproject, dist_name)
    unset = [tool for tool in tools if not tool.variables]
    if unset:
        tag = shlex.quote(throwaway_tag(pyproject))
        before += [
            f"# {unset[0].name} takes no version from the environment: a throwaway git",
            f"# repository of the checkout, tagged {tag}, stands in for a clone's .git until",
            "# the installs are done.",
            "if [ ! -e .git ]; then",
            "  enconda_throwaway_git=1",
            f"  {{ {throwaway_git(tag)}; }} || echo 'recipe: no throwaway git repository'",
            "fi",
        ]
        after.append('if [ -n "${enconda_throwaway_git:-}" ]; then rm -rf .git; fi')
    return before, after


def _fallback_override(pyproject: dict[str, Any], dist_name: str) -> list[str]:
    """A PEP 440 ``fallback_version`` where the project's is not one: setuptools-scm 10 (on
    vcs-versioning) reads the fallback while listing the files of a checkout with no .git, the
    pretend version notwithstanding, and fails on datamol's ``fallback_version = "dev"``
    ("Invalid version: 'dev'"), which releases before it never read there. Its documented
    ``SETUPTOOLS_SCM_OVERRIDES_FOR_<DIST>`` replaces that one setting for the project alone."""
    tool = pyproject.get("tool")
    table = tool.get("setuptools_scm") if isinstance(tool, dict) else None
    fallback = table.get("fallback_version") if isinstance(table, dict) else None
    if not isinstance(fallback, str) or not dist_name:
        return []
    try:
        Version(fallback)
        return []
    except InvalidVersion:
        pass
    value = shlex.quote(f'{{fallback_version = "{PRETEND_VERSION}"}}')
    return [
        f"export {name}={value}" for name in named_variables("SETUPTOOLS_SCM_OVERRIDES", dist_name)
    ]
