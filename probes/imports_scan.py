"""C0's denominator: the unique top-level names of non-relative imports in a repository.

Usage: ``python imports_scan.py REPO_DIR``. Prints one JSON document on stdout::

    {"total": 12, "names": [...sorted...], "files": 30, "paths": [...parsed, relative...],
     "unparsable": 1, "unparsable_files": ["bad.py: SyntaxError ..."], "source": "git",
     "python": "3.11.7", "error": null}

Runs inside task containers with whatever ``python3`` is there (3.8 or newer), so it uses the
standard library only and never raises: a failure is the ``error`` field.

The rules (the same for every case): every git-tracked ``*.py`` file when REPO_DIR is a git work
tree, else every ``*.py`` under it; paths with a component in ``SKIP_DIRS`` are left out; an
``ast.walk`` over the whole file, so imports inside functions, ``try`` blocks and ``if
TYPE_CHECKING`` count too; ``import a.b`` and ``from a.b import c`` both give ``a``; relative
imports give nothing; standard library, first-party and ``__future__`` names all count. A file
that does not parse (under the scanning interpreter's grammar) is skipped and counted. ``files``
counts the files read, ``paths`` lists those parsed: pyright checks exactly these, so a file left
out of the total is left out of the missing names too.
"""

import ast
import json
import os
import platform
import subprocess
import sys

SKIP_DIRS = frozenset(
    {
        ".git",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".venv",
        "venv",
        "build",
        "dist",
        "node_modules",
    }
)
# Enough to say which files failed without making the document grow with a broken repository.
UNPARSABLE_LISTED = 20
# A file this large is data, not code; parsing it could take the container's memory.
MAX_FILE_BYTES = 20 * 1024 * 1024


def _skipped(relative):
    parts = relative.replace("\\", "/").split("/")
    return any(part in SKIP_DIRS for part in parts[:-1]) or parts[-1] in SKIP_DIRS


def _git_files(repo):
    """Tracked ``*.py`` files, or None when REPO_DIR is not a git work tree (or git is absent)."""
    # The repository may belong to another user than the scanner (a container's root vs. the
    # agent's files): git refuses such a tree ("dubious ownership") unless told it is safe.
    try:
        inside = subprocess.run(
            ["git", "-c", "safe.directory=*", "-C", repo, "rev-parse", "--is-inside-work-tree"],
            capture_output=True,
            timeout=60,
        )
        if inside.returncode != 0 or inside.stdout.strip() != b"true":
            return None
        listed = subprocess.run(
            ["git", "-c", "safe.directory=*", "-C", repo, "ls-files", "-z", "--", "*.py"],
            capture_output=True,
            timeout=120,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if listed.returncode != 0:
        return None
    names = listed.stdout.decode("utf-8", "surrogateescape").split("\0")
    # ls-files paths are relative to the current directory (-C): REPO_DIR itself.
    return [name for name in names if name]


def _walk_files(repo):
    found = []
    for current, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            if name.endswith(".py"):
                found.append(os.path.relpath(os.path.join(current, name), repo))
    return found


def _top_level_names(tree):
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names.add(alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and (node.level or 0) == 0 and node.module:
            names.add(node.module.split(".")[0])
    names.discard("")
    return names


def scan(repo):
    repo = os.path.abspath(repo)
    if not os.path.isdir(repo):
        raise ValueError("not a directory: " + repo)
    listed = _git_files(repo)
    source = "git" if listed is not None else "walk"
    paths = _walk_files(repo) if listed is None else listed
    paths = sorted(p for p in paths if not _skipped(p))
    names = set()
    read = 0
    parsed = []
    unparsable = []
    for relative in paths:
        full = os.path.join(repo, relative)
        if not os.path.isfile(full):
            continue  # tracked but deleted in the work tree, or a submodule's path
        read += 1
        try:
            if os.path.getsize(full) > MAX_FILE_BYTES:
                raise ValueError(f"larger than {MAX_FILE_BYTES} bytes")
            with open(full, "rb") as handle:
                tree = ast.parse(handle.read(), filename=relative)
        except (SyntaxError, ValueError, OSError, RecursionError, MemoryError) as exc:
            unparsable.append(f"{relative}: {type(exc).__name__}: {exc}")
            continue
        names |= _top_level_names(tree)
        parsed.append(relative)
    return {
        "total": len(names),
        "names": sorted(names),
        "files": read,
        "paths": parsed,
        "unparsable": len(unparsable),
        "unparsable_files": unparsable[:UNPARSABLE_LISTED],
        "source": source,
        "python": platform.python_version(),
        "error": None,
    }


def main(argv):
    if len(argv) != 1:
        document = {"error": "usage: imports_scan.py REPO_DIR"}
    else:
        try:
            document = scan(argv[0])
        except Exception as exc:  # never raise: the harness reads the error from the JSON
            document = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(document) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
