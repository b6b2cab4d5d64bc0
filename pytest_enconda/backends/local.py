"""Commands run as processes of this host: the host backend's and the fake backend's ``exec``."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from ..errors import HarnessError
from ..sandbox.containers import ExecResult, _Tail


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def run_local(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    log_path: Path | None = None,
    max_output: int = 64_000,
) -> ExecResult:
    """``bash -c command`` in its own session: at the deadline, and when it ends, the whole
    group dies, so a daemon it started cannot hold the output pipe open (or outlive the box)."""
    if timeout <= 0:
        raise ValueError(f"timeout must be positive, got {timeout}")
    tail = _Tail(max_output)
    with contextlib.ExitStack() as stack:
        log = None
        if log_path is not None:
            Path(log_path).parent.mkdir(parents=True, exist_ok=True)
            log = stack.enter_context(Path(log_path).open("ab"))
        return _run(command, cwd, env, timeout, tail, log)


def _run(
    command: str,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    tail: _Tail,
    log: IO[bytes] | None,
) -> ExecResult:
    started = time.monotonic()
    process = subprocess.Popen(
        # "--": a command beginning with '-' is run as a command, not read as bash's options.
        ["bash", "-c", "--", command],
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None

    def pump() -> None:
        assert process.stdout is not None
        for chunk in iter(lambda: process.stdout.read1(65536), b""):  # type: ignore[union-attr]
            tail.add(chunk)
            if log is not None:
                log.write(chunk)
                log.flush()

    reader = threading.Thread(target=pump, name="exec-local", daemon=True)
    reader.start()
    timed_out = False
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    except BaseException:
        _kill_group(process)
        process.wait()
        raise
    finally:
        _kill_group(process)
        process.wait()
        reader.join(10)
        process.stdout.close()
    duration = time.monotonic() - started
    output, truncated = tail.text()
    return ExecResult(
        exit_code=None if timed_out else process.returncode,
        output=output,
        duration=duration,
        timed_out=timed_out,
        truncated=truncated,
        output_bytes=tail.total,
    )


def _refuse(path: Path, root: Path, label: str) -> None:
    """Links that leave the copied tree and anything but files and folders are refused, as the
    Docker path's tar filter refuses them: a box must not make the harness read host files."""
    if path.is_symlink():
        target = (path.parent / os.readlink(path)).resolve()
        if os.path.isabs(os.readlink(path)) or not target.is_relative_to(root.resolve()):
            raise HarnessError(f"copy out of {label}: {path.name} links outside what is copied")
    elif not (path.is_file() or path.is_dir()):
        raise HarnessError(f"copy out of {label}: {path.name} is not a regular file or folder")


def copy_tree_out(src: Path, dest: Path, *, label: str, limit: int | None = None) -> None:
    """A file to file ``dest`` or a folder into folder ``dest``; links kept as links. With
    ``limit``, more bytes than that in all are refused before anything is copied, as the
    Docker path refuses them."""
    if not src.exists() and not src.is_symlink():
        raise FileNotFoundError(f"copy_out: {label} does not exist")
    if src.is_symlink() or not src.is_dir():
        if src.is_symlink() or not src.is_file():
            raise HarnessError(f"copy out of {label}: not a regular file")
        size = src.stat().st_size
        if limit is not None and size > limit:
            raise HarnessError(
                f"copy out of {label}: {src.name} is {size} bytes, more than the {limit} allowed"
            )
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        return
    total = 0
    for path in src.rglob("*"):
        _refuse(path, src, label)
        if limit is not None and path.is_file() and not path.is_symlink():
            total += path.stat().st_size
            if total > limit:
                raise HarnessError(
                    f"copy out of {label}: more than the {limit} bytes allowed in all (at "
                    f"{path.relative_to(src)})"
                )
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True)
