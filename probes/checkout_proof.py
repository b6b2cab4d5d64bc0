"""Where the project's own packages are imported from: the checkout, or an installed release.

Usage: ``python checkout_proof.py --project /data/project [--distribution NAME] -- MODULE ...``,
run under the interpreter the tests use, from a neutral folder (not the project). Prints one
JSON document on stdout::

    {"project": "/data/project",
     "modules": [{"name": "cantools", "file": "/data/project/src/cantools/__init__.py",
                  "under_checkout": true, "distribution": "cantools",
                  "direct_url": "file:///data/project", "from_checkout": true,
                  "error": null}],
     "distribution": {"name": "cantools", "direct_url": "file:///data/project",
                      "from_checkout": true, "error": null},
     "error": null}

A module comes from the checkout when its file lies under the project folder, or when the
distribution that installed it records (PEP 610 ``direct_url.json``) that it was installed from
the project folder: a ``pip install .`` copies the checkout into site-packages. A release from
an index has neither.

The project folder is on ``sys.path`` only where the reference put it (``PYTHONPATH``, a ``.pth``
file, an editable install): the probe's own folder and the working folder are taken off, so a
checkout folder named like an installed release cannot shadow it (progressbar's reference
installed the PyPI release ``progressbar2``, and the proof, run from the project folder, found
``progressbar/`` of the checkout first). A relative ``PYTHONPATH`` entry means the project folder
(the tests run from there). A namespace package (PEP 420) comes from the checkout when one of its
portions lies there.

Standard library only, Python 3.8 or newer; never raises: a failure is an ``error`` field.
"""

import argparse
import importlib.util
import inspect
import json
import os
import sys
import traceback

ERROR_CHARS = 1000


def _metadata():
    try:
        import importlib.metadata as metadata
    except ImportError:  # Python 3.7 and older: no metadata API in the standard library
        return None
    return metadata


def _direct_url(dist):
    raw = dist.read_text("direct_url.json")
    if not raw:
        return None
    try:
        url = json.loads(raw).get("url")
    except (ValueError, AttributeError):
        return None
    return url if isinstance(url, str) else None


def top_levels(dist):
    """The import names a distribution provides, as ``packages_distributions`` (Python 3.11)
    finds them: its ``top_level.txt``, which only setuptools writes, else the first part of each
    file its ``RECORD`` lists, or a lone file's module name, where that is a name Python can
    import (Poetry, Hatch and flit wheels have no ``top_level.txt``)."""
    text = dist.read_text("top_level.txt")
    if text:
        return set(text.split())
    names = set()
    for file in dist.files or ():
        parts = file.parts
        if not parts:
            continue
        name = parts[0] if len(parts) > 1 else inspect.getmodulename(str(file)) or str(file)
        if "." not in name:
            names.add(name)
    return names


def owners_of(metadata, top_level):
    """The names of the distributions providing ``top_level``."""
    try:
        mapping = metadata.packages_distributions()
    except AttributeError:  # before Python 3.10: read each distribution's files
        owners = []
        for dist in metadata.distributions():
            try:
                if top_level in top_levels(dist):
                    owners.append(dist.metadata["Name"])
            except Exception:  # a broken RECORD or METADATA costs only its distribution
                continue
        return owners
    return mapping.get(top_level, [])


def _distribution_of(top_level):
    """(name, direct_url or None) of the installed distribution providing ``top_level``."""
    metadata = _metadata()
    if metadata is None:
        return None, None
    for owner in owners_of(metadata, top_level):
        try:
            dist = metadata.distribution(owner)
        except Exception:
            continue
        return owner, _direct_url(dist)
    return None, None


def _under(path, folder):
    path = os.path.realpath(path)
    folder = os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _from_project(url, project):
    return bool(url) and url.startswith("file://") and _under(url[7:], project)


def neutral_path(path, project, cwd, script_dir, pythonpath):
    """``sys.path`` as the tests' interpreter has it apart from its working folder: the probe's
    folder and the working folder dropped, and a relative ``PYTHONPATH`` entry (made absolute
    against the working folder at start-up) pointed at the project folder instead."""
    relative = {}
    declared = set()
    for entry in (pythonpath or "").split(os.pathsep) if pythonpath else []:
        if os.path.isabs(entry):
            declared.add(os.path.abspath(entry))
        else:
            relative[os.path.abspath(os.path.join(cwd, entry))] = os.path.abspath(
                os.path.join(project, entry)
            )
    kept = []
    for entry in path:
        absolute = os.path.abspath(entry) if entry else cwd
        if absolute in relative:
            kept.append(relative[absolute])
        elif absolute in declared or absolute not in (cwd, script_dir):
            kept.append(entry)
    return kept


def locate(name, project):
    entry = {
        "name": name,
        "file": None,
        "under_checkout": False,
        "distribution": None,
        "direct_url": None,
        "from_checkout": False,
        "error": None,
    }
    try:
        spec = importlib.util.find_spec(name)
    except Exception as exc:  # a broken package's __init__ can raise anything here
        entry["error"] = (type(exc).__name__ + ": " + str(exc))[:ERROR_CHARS]
        return entry
    if spec is None:
        entry["error"] = "not importable"
        return entry
    location = spec.origin if spec.origin not in (None, "namespace") else None
    if location is None and spec.submodule_search_locations:
        portions = list(spec.submodule_search_locations)
        inside = [p for p in portions if _under(p, project)]
        location = (inside or portions)[0] if portions else None
    entry["file"] = location
    entry["under_checkout"] = bool(location) and _under(location, project)
    dist, url = _distribution_of(name.split(".")[0])
    entry["distribution"] = dist
    entry["direct_url"] = url
    entry["from_checkout"] = entry["under_checkout"] or _from_project(url, project)
    return entry


def distribution(name, project):
    """The project's own distribution as installed: a proof when no module names the checkout
    (a project of subfolders, scripts only), from its PEP 610 record."""
    entry = {"name": name, "direct_url": None, "from_checkout": False, "error": None}
    metadata = _metadata()
    if metadata is None:
        entry["error"] = "no importlib.metadata"
        return entry
    try:
        dist = metadata.distribution(name)
    except Exception as exc:  # PackageNotFoundError, or a broken METADATA
        entry["error"] = (type(exc).__name__ + ": " + str(exc))[:ERROR_CHARS]
        return entry
    entry["direct_url"] = _direct_url(dist)
    entry["from_checkout"] = _from_project(entry["direct_url"], project)
    return entry


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--project", required=True)
    parser.add_argument("--distribution", default="")
    parser.add_argument("modules", nargs="*")
    args = parser.parse_args(argv)
    result = {"project": args.project, "modules": [], "distribution": None, "error": None}
    try:
        project = os.path.abspath(args.project)
        script_dir = os.path.dirname(os.path.abspath(__file__))
        sys.path[:] = neutral_path(
            sys.path, project, os.getcwd(), script_dir, os.environ.get("PYTHONPATH")
        )
        importlib.invalidate_caches()
        result["modules"] = [locate(name, project) for name in args.modules]
        if args.distribution:
            result["distribution"] = distribution(args.distribution, project)
    except Exception:
        result["error"] = traceback.format_exc()[-ERROR_CHARS:]
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
