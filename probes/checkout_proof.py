"""Where the project's own packages are imported from: the checkout, or an installed release.

Usage: ``python checkout_proof.py --project /data/project MODULE [MODULE ...]``, run from the
project folder under the interpreter the tests use. Prints one JSON document on stdout::

    {"project": "/data/project",
     "modules": [{"name": "cantools", "file": "/data/project/src/cantools/__init__.py",
                  "under_checkout": true, "distribution": "cantools",
                  "direct_url": "file:///data/project", "from_checkout": true,
                  "error": null}],
     "error": null}

A module comes from the checkout when its file lies under the project folder, or when the
distribution that installed it records (PEP 610 ``direct_url.json``) that it was installed from
the project folder: a ``pip install .`` copies the checkout into site-packages. A release from
an index has neither. The folder is first on ``sys.path``, as under ``python -m pytest``.

Standard library only, Python 3.8 or newer; never raises: a failure is an ``error`` field.
"""

import argparse
import importlib.util
import json
import os
import sys
import traceback

ERROR_CHARS = 1000


def _distribution_of(top_level):
    """(name, direct_url or None) of the installed distribution providing ``top_level``."""
    try:
        import importlib.metadata as metadata
    except ImportError:  # Python 3.7 and older: no metadata API in the standard library
        return None, None
    owners = []
    try:
        mapping = metadata.packages_distributions()
        owners = mapping.get(top_level, [])
    except AttributeError:  # before 3.10: read each distribution's top_level.txt
        for dist in metadata.distributions():
            text = dist.read_text("top_level.txt") or ""
            if top_level in text.split():
                owners.append(dist.metadata["Name"])
    for owner in owners:
        try:
            dist = metadata.distribution(owner)
        except Exception:
            continue
        raw = dist.read_text("direct_url.json")
        url = None
        if raw:
            try:
                url = json.loads(raw).get("url")
            except ValueError:
                url = None
        return owner, url
    return None, None


def _under(path, folder):
    path = os.path.realpath(path)
    folder = os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


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
        location = next(iter(spec.submodule_search_locations))
    entry["file"] = location
    entry["under_checkout"] = bool(location) and _under(location, project)
    dist, url = _distribution_of(name)
    entry["distribution"] = dist
    entry["direct_url"] = url
    installed_from_checkout = bool(url) and url.startswith("file://") and _under(url[7:], project)
    entry["from_checkout"] = entry["under_checkout"] or installed_from_checkout
    return entry


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--project", required=True)
    parser.add_argument("modules", nargs="*")
    args = parser.parse_args(argv)
    result = {"project": args.project, "modules": [], "error": None}
    try:
        sys.path.insert(0, os.path.abspath(args.project))
        result["modules"] = [locate(name, args.project) for name in args.modules]
    except Exception:
        result["error"] = traceback.format_exc()[-ERROR_CHARS:]
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
