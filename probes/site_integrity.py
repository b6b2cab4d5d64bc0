"""What an interpreter runs before a test does: its site directories checked against what the
installers recorded (AEC's graded step, ``aec.graded_env``).

Usage: ``<the graded shell's python> -I -S site_integrity.py``. ``-I -S``: nothing of the
setup's runs while this reads (no ``sitecustomize``, no ``.pth``, no ``PYTHONPATH``), so a
monkeypatch cannot lie to it. Prints one line per finding, tab-separated::

    problem <TAB> path <TAB> why <TAB> sha256   a file that runs code, or was changed
    system  <TAB> path <TAB> why <TAB> sha256   the same, unless dpkg owns it (the caller asks)
    checked <TAB> files <TAB> bytes   how much was verified

It finds the site directories (the venv's, the base interpreter's, the user's, PYTHONPATH's and
the folders their ``.pth`` files add) and there:

- every file a distribution's ``RECORD`` lists with a hash is hashed and compared: a patched
  ``_pytest/terminal.py`` or a forged ``.pyc`` beside it differs;
- every ``.pth`` file with an ``import`` line (Python runs those lines at start-up) and every
  ``sitecustomize``/``usercustomize`` must be listed in a ``RECORD`` with that hash: pip's own
  (``distutils-precedence.pth``, an editable install's ``__editable__*.pth``) are, a hand-written
  one is not;
- a distribution whose ``entry_points.txt`` plugs into pytest (``[pytest11]``) must have a
  ``RECORD`` listing it.

Standard library only, Python 3.6 or newer, never raises: an error is a ``problem`` line.
"""

import base64
import contextlib
import hashlib
import os
import site
import sys
import sysconfig

# A file past this size is not hashed (a wheel's 200 MB shared library); its size is compared.
MAX_HASHED = 64 * 1024 * 1024
MAX_TOTAL = 16 * 1024 * 1024
# What Python runs: sources, bytecode (a forged .pyc beside an unchanged source is loaded) and
# start-up files. A patched shared library is left to the trajectory judge.
HASHED = (".py", ".pyc", ".pth")
# The test runners' own files are hashed first, whatever else the budget leaves.
RUNNERS = ("pytest", "pluggy", "unittest", "nose")
CUSTOMIZE = ("sitecustomize", "usercustomize")
# What `python -m pytest` (or unittest) imports: a module of that name found first is the run.
RUNNER_MODULES = ("pytest", "_pytest", "pluggy", "unittest")
# virtualenv's and uv's own start-up hook: written by the tool, listed in no RECORD.
VIRTUALENV_PTH = "import _virtualenv"


def say(kind, path, why):
    """One line; a finding's file also with its sha256 (hex), so that the caller can tell a
    file the image had from one the setup wrote."""
    if kind == "system":
        path = os.path.realpath(path)  # Debian's sitecustomize.py is a link into /etc
    line = [kind, str(path), str(why)]
    if kind in ("problem", "system"):
        try:
            line.append(hexdigest(path))
        except OSError:
            line.append("-")
    print("\t".join(part.replace("\t", " ").replace("\n", " ") for part in line))


def venv_prefix():
    """The virtual environment this interpreter runs in: under -S, site.py's venv() never ran,
    so sys.prefix is the base interpreter's. Found as site.py finds it, by pyvenv.cfg."""
    executable = os.path.dirname(os.path.abspath(sys.executable))
    for folder in (executable, os.path.dirname(executable)):
        if os.path.isfile(os.path.join(folder, "pyvenv.cfg")):
            return [folder]
    return []


def site_dirs():
    found = []
    # An old virtualenv's site module has no getsitepackages.
    with contextlib.suppress(Exception):
        found += site.getsitepackages()
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, *venv_prefix()}:
        # A venv's own layout: Debian's site module and default scheme name only dist-packages.
        for lib in ("lib", "lib64"):
            found.append(os.path.join(prefix, lib, version, "site-packages"))
        for scheme in ("purelib", "platlib"):
            with contextlib.suppress(Exception):
                found.append(sysconfig.get_path(scheme, vars={"base": prefix, "platbase": prefix}))
        with contextlib.suppress(Exception):
            found += site.getsitepackages([prefix])
    with contextlib.suppress(Exception):
        found.append(site.getusersitepackages())
    found += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    unique = []
    for path in found:
        real = os.path.realpath(path)
        if os.path.isdir(real) and real not in unique:
            unique.append(real)
    return unique


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


def hexdigest(path):
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def digest(path):
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return base64.urlsafe_b64encode(sha.digest()).rstrip(b"=").decode()


def records(folder):
    """Each RECORD of ``folder``'s distributions: {absolute path: (hash, size)}."""
    listed = {}
    missing = []
    for entry in sorted(os.listdir(folder)):
        if not entry.endswith(".dist-info"):
            continue
        record = os.path.join(folder, entry, "RECORD")
        if not os.path.isfile(record):
            missing.append(os.path.join(folder, entry))
            continue
        with open(record, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                parts = line.rstrip("\n").rsplit(",", 2)
                if len(parts) != 3 or not parts[0]:
                    continue
                # normpath, not realpath: a lstat per path component of 10^5 files is a minute.
                path = os.path.normpath(os.path.join(folder, parts[0]))
                listed[path] = (parts[1], parts[2])
    return listed, missing


def verify(listed, budget):
    """Listed files with a sha256 hash compared, the test runners' first, until ``budget`` bytes
    are read (a research venv lists 10^5 files: each stat costs); the bytes read."""
    read = 0
    order = sorted(listed, key=lambda p: (not any(r in p for r in RUNNERS), p))
    for path in order:
        recorded, size = listed[path]
        if not path.endswith(HASHED) or not recorded.startswith("sha256="):
            continue
        try:
            actual = os.path.getsize(path)
        except OSError:
            continue
        if size.isdigit() and int(size) != actual:
            say("problem", path, f"differs from its RECORD (size {actual}, recorded {size})")
            continue
        if actual > MAX_HASHED:
            continue
        if read + actual > budget:
            break
        read += actual
        if digest(path) != recorded[len("sha256=") :]:
            say("problem", path, "differs from its RECORD (sha256)")
    return read


def runs_code(pth):
    try:
        with open(pth, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return False, []
    code = [line for line in lines if line.startswith(("import ", "import\t"))]
    paths = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    return bool(code), [p for p in paths if p not in code]


def recorded_ok(path, listed):
    entry = listed.get(os.path.normpath(path))
    if entry is None or not entry[0].startswith("sha256="):
        return False
    return digest(path) == entry[0][len("sha256=") :]


def is_virtualenv_hook(folder, name):
    if name != "_virtualenv.pth":
        return False
    with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
        if handle.read().strip() != VIRTUALENV_PTH:
            return False
    module = os.path.join(folder, "_virtualenv.py")
    try:
        with open(module, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return True
    # virtualenv's hook patches distutils' install paths; a test runner's name has no place there.
    return not any(word in text for word in ("pytest", "unittest", "_exit", "atexit", "TestCase"))


def system_dir(folder):
    return folder.startswith(("/usr/lib/python", "/usr/share/"))


site_dirs_only = []


def main():
    folders = site_dirs()
    stdlib_dir = os.path.realpath(sysconfig.get_path("stdlib") or "/")
    site_dirs_only.append(stdlib_dir)
    site_dirs_only.extend(f for f in folders if f.endswith(("site-packages", "dist-packages")))
    listed = {}
    for folder in list(folders):
        got, missing = records(folder)
        listed.update(got)
        for dist in missing:
            points = os.path.join(dist, "entry_points.txt")
            if os.path.isfile(points) and "[pytest11]" in read_text(points):
                kind = "system" if system_dir(folder) else "problem"
                say(kind, points, "a pytest plugin's distribution that no installer recorded")
    budget = MAX_TOTAL
    read = verify(listed, budget)
    for folder in list(folders):
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if name.endswith(".pth") and os.path.isfile(path):
                code, extra = runs_code(path)
                for added in extra:
                    real = os.path.realpath(os.path.join(folder, added))
                    if os.path.isdir(real) and real not in folders:
                        folders.append(real)
                if not code or recorded_ok(path, listed) or is_virtualenv_hook(folder, name):
                    continue
                kind = "system" if system_dir(folder) else "problem"
                say(kind, path, "a .pth file that runs code at start-up, in no RECORD")
    stdlib = sysconfig.get_path("stdlib")
    if stdlib and os.path.isdir(stdlib):
        say("stdlib", stdlib, "-")
        folders.append(os.path.realpath(stdlib))
    for folder in folders:
        for name in CUSTOMIZE:
            for path in (os.path.join(folder, name + ".py"), os.path.join(folder, name)):
                if not os.path.exists(path) or recorded_ok(path, listed):
                    continue
                if os.path.isdir(path) and recorded_ok(os.path.join(path, "__init__.py"), listed):
                    continue
                kind = "system" if system_dir(folder) else "problem"
                say(kind, path, f"{name} runs at start-up and no installer recorded it")
    shadowing(folders, listed)
    say("checked", len(listed), read)


def shadowing(folders, listed):
    """A test runner's module in a folder that comes before the installed one: PYTHONPATH's, a
    .pth's, or the checkout (``python -m`` puts the working folder first)."""
    sites = set(site_dirs_only)
    for folder in [os.path.realpath(os.getcwd()), *folders]:
        if folder in sites:
            continue
        for name in RUNNER_MODULES:
            for path in (os.path.join(folder, name + ".py"), os.path.join(folder, name)):
                if not os.path.exists(path):
                    continue
                if recorded_ok(path, listed) or recorded_ok(path + "/__init__.py", listed):
                    continue
                kind = "system" if system_dir(folder) else "problem"
                say(kind, path, "shadows the test runner: imported before the installed one")


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # never a traceback: the caller reads lines
        say("problem", sys.executable, f"the site check failed: {error!r}")
