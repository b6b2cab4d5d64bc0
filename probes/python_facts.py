"""What an interpreter is, seen from inside it: the facts C2 and the C5 audit compare against.

Usage: ``<agent's python> python_facts.py [--framework torch|jax|tensorflow]``. Prints one JSON
document on stdout::

    {"executable": "/x/.venv/bin/python", "python_version": "3.11.7", "prefix": "/x/.venv",
     "prefix_bytes": 5812345678, "prefix_bytes_complete": true,
     "framework": {"name": "torch", "importable": true, "version": "2.4.0+cu124",
                   "cuda_available": false, "device_count": 0, "cuda_version": "12.4",
                   "error": null},
     "error": null}

Runs under the agent's interpreter (3.8 or newer), standard library only, never raises: a
failure is an ``error`` field. The framework is imported in a child process of the same
interpreter, so the interpreter's own facts come back even when importing it crashes or hangs.
"""

import json
import os
import platform
import subprocess
import sys
import time
import traceback

FRAMEWORKS = ("torch", "jax", "tensorflow")
# sys.prefix of a research environment holds ~10^5 files; the walk stops at these bounds and says
# so, rather than outliving the probe's budget on a network file system.
WALK_MAX_ENTRIES = 2000000
WALK_MAX_SECONDS = 120.0
ERROR_CHARS = 2000
# CUDA initialisation on a busy GPU can take a minute; a hung driver call should not take longer.
FRAMEWORK_SECONDS = 600


def prefix_size(prefix):
    """Bytes under ``prefix`` (files' apparent sizes, links not followed), and whether complete."""
    total = 0
    entries = 0
    started = time.monotonic()
    stack = [prefix]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as listing:
                for entry in listing:
                    entries += 1
                    if entries > WALK_MAX_ENTRIES or time.monotonic() - started > WALK_MAX_SECONDS:
                        return total, False
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        elif entry.is_file(follow_symlinks=False):
                            total += entry.stat(follow_symlinks=False).st_size
                    except OSError:
                        continue
        except OSError:
            continue
    return total, True


def _error_text(exc):
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return text[-ERROR_CHARS:]


def _torch(facts):
    import torch  # pyright: ignore[reportMissingImports]  # in the environment probed

    facts["version"] = str(torch.__version__)
    facts["cuda_version"] = getattr(torch.version, "cuda", None)
    facts["cuda_available"] = bool(torch.cuda.is_available())
    facts["device_count"] = int(torch.cuda.device_count()) if facts["cuda_available"] else 0


def _jax(facts):
    import jax  # pyright: ignore[reportMissingImports]  # in the environment probed

    facts["version"] = str(jax.__version__)
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:  # jax raises when no backend of that kind exists
        gpus = []
    facts["device_count"] = len(gpus)
    facts["cuda_available"] = len(gpus) > 0


def _tensorflow(facts):
    import tensorflow as tf

    facts["version"] = str(tf.__version__)
    gpus = tf.config.list_physical_devices("GPU")
    facts["device_count"] = len(gpus)
    facts["cuda_available"] = len(gpus) > 0
    build = getattr(tf.sysconfig, "get_build_info", lambda: {})()
    facts["cuda_version"] = build.get("cuda_version")


def framework_facts(name):
    facts = _failed(name)
    probe = {"torch": _torch, "jax": _jax, "tensorflow": _tensorflow}[name]
    try:
        probe(facts)
        facts["importable"] = True
    except BaseException as exc:  # SystemExit or a KeyboardInterrupt from a broken import too
        # Imported, but a later call failed: still importable, with the error kept.
        facts["importable"] = facts["version"] is not None
        facts["error"] = _error_text(exc)
    return facts


def framework_in_child(name, timeout):
    """The framework's facts from a child process: an import that crashes the interpreter
    (a segfault in a CUDA library) or hangs must not take the interpreter's own facts with it."""
    command = [sys.executable, os.path.abspath(__file__), "--framework-child", name]
    try:
        child = subprocess.run(command, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(_failed(name), error=f"importing {name} took over {timeout}s")
    except OSError as exc:
        return dict(_failed(name), error=f"cannot start {sys.executable}: {exc}")
    out = child.stdout.decode("utf-8", "replace").strip()
    last = out.rsplit("\n", 1)[-1] if out else ""
    try:
        document = json.loads(last)
        if isinstance(document, dict) and document.get("name") == name:
            return document
    except ValueError:
        pass
    tail = child.stderr.decode("utf-8", "replace").strip()[-ERROR_CHARS:]
    return dict(
        _failed(name),
        error=f"the interpreter died importing {name} (exit {child.returncode}): {tail}",
    )


def _failed(name):
    return {
        "name": name,
        "importable": False,
        "version": None,
        "cuda_available": None,
        "device_count": None,
        "cuda_version": None,
        "error": None,
    }


def facts(framework, timeout=FRAMEWORK_SECONDS):
    document = {
        "executable": sys.executable,
        "python_version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "prefix_bytes": None,
        "prefix_bytes_complete": None,
        "framework": None,
        "error": None,
    }
    try:
        document["prefix_bytes"], document["prefix_bytes_complete"] = prefix_size(sys.prefix)
    except Exception as exc:
        document["error"] = "prefix size: " + _error_text(exc)
    if framework:
        document["framework"] = framework_in_child(framework, timeout)
    return document


def main(argv):
    if argv[:1] == ["--framework-child"] and len(argv) == 2 and argv[1] in FRAMEWORKS:
        sys.stdout.write("\n" + json.dumps(framework_facts(argv[1])) + "\n")
        sys.stdout.flush()
        return 0
    framework = None
    if argv[:1] == ["--framework"] and len(argv) == 2 and argv[1] in FRAMEWORKS:
        framework = argv[1]
    elif argv:
        document = {"error": "usage: python_facts.py [--framework torch|jax|tensorflow]"}
        sys.stdout.write(json.dumps(document) + "\n")
        return 0
    try:
        document = facts(framework)
    except BaseException as exc:
        document = {"error": _error_text(exc)}
    sys.stdout.write(json.dumps(document) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
