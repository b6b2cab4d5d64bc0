"""The reference recipe: the repository installed from source with its test extras and test
requirements, what a careful maintainer runs when the README says nothing usable; the same recipe
held to the packages of its revision's day (``as_of_script``); and the files CI makes before its
tests (``ci_file_steps``). Read from the repository through ``repo``; written as bash for a box.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path, PurePosixPath

from ..repo.command_normalise import _words
from ..repo.files import read_pyproject, read_text
from ..repo.lockfile import lock_constraints
from ..repo.project import (
    declared_name,
    extra_names,
    flat_requirements,
    group_requirements,
    installable,
    poetry_application_requirements,
    poetry_dependencies,
    poetry_git_dependencies,
    project_name,
    release_for_url,
    root_requirements,
)
from ..repo.test_commands import TestCommand, ci_setup_lines
from ..repo.test_tools import _requirement_files
from ..repo.vcs_version import CONFIG_FILES, version_setup

__all__ = [
    "AS_OF",
    "as_of_script",
    "ci_file_steps",
    "recipe_script",
    "with_file_steps",
]

_RECIPE_EXTRAS = re.compile(r"^(tests?|testing)$", re.IGNORECASE)


def _pip_words(specs: list[str]) -> str:
    return " ".join(shlex.quote(spec.replace(" ", "")) for spec in specs)


# A requirements file's copy with its VCS and URL lines as releases, beside it so that its own
# `-r` includes still resolve; removed after the install.
_RELEASES_COPY = ".enconda-requirements.txt"


def _with_releases(text: str, keep: bool = True) -> list[str] | None:
    """``text`` (a requirements file) with each URL requirement as its release (``keep``) or
    left out, as are those naming none; None when it has no URL requirement."""
    lines: list[str] = []
    changed = False
    for line in text.splitlines():
        words = line.split()
        target = words[-1] if words and words[0] in ("-e", "--editable") else line.strip()
        release = release_for_url(target.split(" #", 1)[0])
        if release is None:
            lines.append(line)
            continue
        changed = True
        if release and keep:
            lines.append(release)
    return lines if changed else None


_ONE_BY_ONE = "/tmp/enconda-requirements-one-by-one.txt"


def _requirements_install(repo: Path, lock: str, name: str = "requirements.txt") -> list[str]:
    """The root requirements file's install; where it names VCS or URL requirements, tried
    again with their releases, then without them (zulip's `git+https://github.com/zulip/
    zulint@...#egg=zulint`: the sandbox cannot clone it, zulint has no release, and the whole
    file failed). Last, its requirements one by one: one that cannot build here (naomi's
    pyaudio, without PortAudio's headers) does not keep the others out."""
    quoted = shlex.quote(name)
    install = f"python -m pip install -r {quoted}"
    specs = flat_requirements(repo, name)
    listing = [f"cat > {_ONE_BY_ONE} <<'ENCONDA_REQUIREMENTS'", *specs, "ENCONDA_REQUIREMENTS"]
    one_by_one = (
        f"{{ echo 'recipe: {name} did not install together: one by one'; "
        # Its stdin is the list being read: a build that reads stdin must not eat the rest.
        'while read -r spec; do python -m pip install "$spec" < /dev/null || '
        f'echo "recipe: $spec did not install"; done < {_ONE_BY_ONE}; }}'
    )
    text = read_text(repo / name)
    releases, without = _with_releases(text), _with_releases(text, keep=False)
    if releases is None or without is None:
        # The lock's versions first, then without them (``_unless_locked``), then one by one.
        return [*listing, f"{_unless_locked(install, lock)} || {one_by_one}"]
    copies = [(releases, "as releases")]
    if without != releases:
        copies.append((without, "left out"))
    lines: list[str] = []
    retry = install
    # Beside the file: readux's requirements/local.txt includes `-r ./base.txt`, which a copy at
    # the root resolved to a file that is not there.
    folder = PurePosixPath(name).parent
    made = [shlex.quote((folder / f"{_RELEASES_COPY}.{i}").as_posix()) for i in range(len(copies))]
    for copy, (content, how) in zip(made, copies, strict=True):
        lines += [f"cat > {copy} <<'ENCONDA_REQUIREMENTS'", *content, "ENCONDA_REQUIREMENTS"]
        retry += (
            f" || {{ echo 'recipe: {name} did not install: its VCS and URL "
            f"requirements {how}'; python -m pip install -r {copy}; }}"
        )
    # An included file's own URL requirement (readux's base.txt clones python-edtf) fails every
    # copy too: then one by one, as a file without URL requirements would be.
    return [
        *listing,
        *lines,
        f"{_unless_locked(f'{{ {retry}; }}', lock)} || {one_by_one}",
        "rm -f " + " ".join(made),
    ]


def recipe_script(repo: Path, system_packages: list[str] | tuple[str, ...] = ()) -> str:
    """Install the repository from source with its test extras and test requirements.

    The fallback reference setup: what a careful maintainer runs when the README says nothing
    usable. Optional steps (system packages, test requirement files, groups) may fail without
    stopping it. ``system_packages`` are Debian packages (those its CI installs, say).
    """
    repo = Path(repo)
    safe = [name for name in system_packages if re.fullmatch(r"[a-z0-9][a-z0-9.+-]*", name)]
    config = "\n".join(read_text(repo / name) for name in CONFIG_FILES)
    versioned, unversioned = version_setup(
        config, read_pyproject(repo), dist_name=declared_name(repo)
    )
    lines = [
        "#!/bin/bash",
        "# reference recipe: the repository from source, with its test extras",
        *versioned,
    ]
    if safe:
        words = " ".join(safe)
        lines.append(
            "(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
            f"--no-install-recommends {words}) || echo 'recipe: system packages did not install'"
        )
    own = project_name(repo)
    lock, pins = lock_constraints(repo, frozenset({own} - {""}))
    if pins:
        # The script's comments name the module by its old place (cases.lockfile): the sidecars'
        # recorded reference setups quote this text, and a re-run must write the same script.
        lines += [
            f"# {lock} pins what the project was tested with: every pip install below is held",
            "# to those versions (cases.lockfile); the requirements' and the checkout's installs",
            "# are tried again without them if they fail under them.",
            f"cat > {_CONSTRAINTS} <<'ENCONDA_LOCK'",
            *pins,
            "ENCONDA_LOCK",
            f"export PIP_CONSTRAINT={_CONSTRAINTS}",
        ]
    requirements = root_requirements(repo)
    if requirements is not None:
        lines += _requirements_install(repo, lock, requirements)
    extras = extra_names(repo)
    wanted = [name for name in extras if _RECIPE_EXTRAS.match(name)]
    if not wanted:
        wanted = [name for name in extras if name.lower() in ("dev", "develop")]
    target = "." + (f"[{','.join(wanted)}]" if wanted else "")
    if installable(repo):
        quoted = shlex.quote(target)
        install = f"python -m pip install -e {quoted} || python -m pip install {quoted}"
        declared, from_git = poetry_dependencies(repo), poetry_git_dependencies(repo)
        if declared or from_git:
            # An old Poetry build backend can write metadata today's pip refuses (django-machina:
            # `^3.2 || >=4.0` became "(>=3.2,<4.0 || >=4.0)"), or its dependencies contradict
            # its lock (OpenPulse): the declared dependencies, each git one alone, then the
            # checkout without them, so that its distribution is there for pkg_resources.
            steps = (
                [
                    f"python -m pip install {_pip_words(declared)} "
                    "|| echo 'recipe: its Poetry dependencies did not install together'"
                ]
                if declared
                else []
            )
            for spec in from_git:
                word = shlex.quote(spec)
                steps.append(
                    f"{{ python -m pip install {word} || python -m pip install --no-deps {word} "
                    f"|| echo 'recipe: {spec.split()[0]} did not install'; }}"
                )
            steps.append(
                "{ python -m pip install --no-deps -e . || python -m pip install --no-deps . "
                "|| echo 'recipe: the checkout did not install without its dependencies either'; }"
            )
            install = (
                f"{{ {install}; }} || {{ echo 'recipe: the checkout did not install: its Poetry "
                f"dependencies instead'; {'; '.join(steps)}; }}"
            )
        lines.append(_unless_locked(install, lock))
    elif (application := poetry_application_requirements(repo)) is not None:
        lines.append("# Poetry without [build-system]: its dependencies, then the checkout if pip")
        lines.append("# can build it at all (a one-package library; not an application's folders).")
        if application:
            lines.append(_unless_locked(f"python -m pip install {_pip_words(application)}", lock))
        lines.append(
            "python -m pip install -e . || echo 'recipe: the checkout is no package pip can build'"
        )
    elif lock == "Pipfile.lock" and requirements is None:
        # A Pipenv application (nablaweb: Pipfile, Pipfile.lock, manage.py, no package): the
        # lock's packages, as pipenv would install them; one by one where they fail together
        # (a Windows-only pin, an old release that no longer builds).
        lines += [
            "# Pipfile.lock: a Pipenv application; its locked packages (default and develop)",
            f"python -m pip install -r {_CONSTRAINTS} || {{ echo 'recipe: the locked packages "
            "did not install together: one by one'; while read -r spec; do python -m pip "
            f'install "$spec" < /dev/null || echo "recipe: $spec did not install"; '
            f"done < {_CONSTRAINTS}; }}",
        ]
    for path in _requirement_files(repo):
        rel = shlex.quote(path.relative_to(repo).as_posix())
        lines.append(f"python -m pip install -r {rel} || echo 'recipe: {rel} did not install'")
    groups = group_requirements(repo)
    if groups:
        words = _pip_words(groups)
        lines.append(f"python -m pip install {words} || echo 'recipe: test groups did not install'")
    if any((repo / base / "distutils" / "__init__.py").is_file() for base in (".", "src")):
        # setuptools' distutils-precedence.pth hands every `import distutils` its own copy
        # (pypa/distutils' reference imported setuptools/_distutils, not the checkout), where the
        # project's CI tests in a venv without setuptools: after the installs, which build with
        # setuptools as usual, its documented switch turns that off for the tests.
        lines.append("export SETUPTOOLS_USE_DISTUTILS=stdlib")
    return "\n".join([*lines, *unversioned]) + "\n"


_CONSTRAINTS = "/tmp/enconda-lock-constraints.txt"


# The verify strategy that runs the recipe with the dependencies of the revision's day.
AS_OF = "recipe:as-of"


# The first pip with --uploaded-prior-to (PIP_UPLOADED_PRIOR_TO) is 26 (checked here: 26.3 on
# Python 3.11, 26.0.1 on 3.9). Asking for 26.3 left Python 3.9 bases, which pip 26.1 dropped,
# without the as-of attempt (columnflow: "No matching distribution found for pip>=26.3").
_DATED_PIP = "pip>=26"


def as_of_script(recipe: str, moment: str, *, era_pip: bool = False) -> str:
    """``recipe`` with every pip install held to packages uploaded before ``moment`` (ISO 8601):
    what ``pip install`` resolved on the day of the revision, for a repository whose code
    imports what later releases removed (nevergrad and bayes_opt 2's ``UtilityFunction``).
    pip is upgraded first: Debian's 23.0 has no such option and would ignore the variable.

    With ``era_pip`` (a project depending on pip itself, ``test_deps.depends_on_pip``), the
    script ends by putting back the pip of that day: pip-tools' tests call pip's internals, and
    518 of its 842 failed against pip 26 (``'InstallRequirement' object has no attribute
    'use_pep517'``). That pip is downloaded under the cutoff, which an installed newer pip would
    otherwise satisfy."""
    body = recipe.removeprefix("#!/bin/bash\n")
    lines = [
        "#!/bin/bash",
        f"# the recipe as of {moment}: packages uploaded before the revision's commit",
        f"python -m pip install -q --upgrade '{_DATED_PIP}' || {{ echo 'recipe: "
        f"{_DATED_PIP} (for PIP_UPLOADED_PRIOR_TO) did not install'; exit 1; }}",
        f"export PIP_UPLOADED_PRIOR_TO={shlex.quote(moment)}",
        body,
    ]
    if era_pip:
        lines.append(
            "# the project depends on pip itself: the pip of that day, as its tests ran with\n"
            "rm -rf /tmp/enconda-era-pip && python -m pip download -q --no-deps --only-binary "
            ":all: -d /tmp/enconda-era-pip pip && python -m pip install -q --force-reinstall "
            "--no-deps /tmp/enconda-era-pip/pip-*.whl "
            "|| echo 'recipe: the pip of that day did not install'"
        )
    return "\n".join(lines)


def _unless_locked(install: str, lock: str) -> str:
    """``install``, run again without the lock's constraints if it fails under them (a pin with
    no wheel for this interpreter, or one a requirement file contradicts)."""
    if not lock:
        return install
    return (
        f"{install} || {{ echo 'recipe: {lock} versions did not install, without them'; "
        f"unset PIP_CONSTRAINT; {install}; }}"
    )


# The file steps of a CI job the recipe repeats: a settings file made from the checkout's example
# (peering-manager: `cp peering_manager/configuration.example.py peering_manager/configuration.py`;
# readux: `mkdir logs && touch logs/debug.log`). Only these programs, their plain options, and
# `echo TEXT > FILE` with fixed text.
_FILE_STEP_OPTIONS = {"cp": {"-r", "-R", "-f", "-n", "-a", "-p"}, "mkdir": {"-p"}, "touch": set()}


def ci_file_steps(repo: Path, found: TestCommand) -> list[str]:
    """The CI job's steps before the tests that copy a file of the checkout or make a folder or
    an empty file in it (``cp``, ``mkdir``, ``touch``), as shell lines for the recipe: without
    the settings file a Django project's CI copies from its example, no test imports. A step
    naming a path outside the checkout, a variable or a pattern is left out; so is a copy whose
    source the checkout lacks (CI made it in an earlier step)."""
    repo = Path(repo)
    root = repo.resolve()
    steps: list[str] = []
    for line in ci_setup_lines(repo, found):
        for segment in re.split(r"&&|\|\||;", line):
            written = _echo_step(segment.strip(), root)
            if written:
                steps.append(written)
                continue
            words = _words(segment.strip())
            if not words or words[0] not in _FILE_STEP_OPTIONS:
                continue
            options = [word for word in words[1:] if word.startswith("-")]
            paths = [word for word in words[1:] if not word.startswith("-")]
            if not paths or not set(options) <= _FILE_STEP_OPTIONS[words[0]]:
                continue
            if not all(_plain_path(path, root) for path in paths):
                continue
            if words[0] == "cp" and (len(paths) != 2 or not (repo / paths[0]).exists()):
                continue
            steps.append(shlex.join(words))
    return list(dict.fromkeys(steps))


# `echo "WW_RANDO_OUTPUT_DIR=/wwrando-output" > .env` (wwrando's CI, read by pytest-dotenv).
# The text starts and ends on a non-blank and the blank runs are possessive: three runs that
# could trade blanks made a long one cost its length cubed.
_ECHO_STEP = re.compile(r"echo\s++(?P<text>.+?)(?<!\s)\s*+(?P<op>>>?)\s*+(?P<path>[^\s<>|&;]+)")


def _echo_step(segment: str, root: Path) -> str:
    """A CI line writing fixed text into a file of the checkout, as a recipe line ("" if not)."""
    match = _ECHO_STEP.fullmatch(segment)
    if not match:
        return ""
    words = _words(match.group("text"))
    # No variables, substitutions or options: the text must be what CI wrote, word for word.
    if not words or words[0].startswith("-") or any(re.search(r"[$`\\]", w) for w in words):
        return ""
    if not _plain_path(match.group("path"), root):
        return ""
    text = shlex.quote(" ".join(words))
    return f"echo {text} {match.group('op')} {shlex.quote(match.group('path'))}"


def with_file_steps(script: str, steps: list[str], source: str) -> str:
    """``script`` ending with the CI file ``steps`` (``ci_file_steps``), each allowed to fail."""
    if not steps:
        return script
    lines = [f"# the files CI makes before the tests ({source})"] + [
        f"{step} || echo {shlex.quote(f'recipe: CI step {step!r} failed')}" for step in steps
    ]
    return script.rstrip("\n") + "\n" + "\n".join(lines) + "\n"


def _plain_path(path: str, root: Path) -> bool:
    """A relative path without variables, patterns or '..' that resolves inside ``root``."""
    if re.search(r"[$`*?\[\]{}~]", path) or Path(path).is_absolute() or ".." in Path(path).parts:
        return False
    return (root / path).resolve().is_relative_to(root)
