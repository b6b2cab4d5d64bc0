"""verify's setup budgets: the agent's attempt on the original README is bounded apart when the
recipe follows it (a README that starts a server in the foreground never ends)."""

from __future__ import annotations

import subprocess
import threading
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from gitutil import git

from pytest_enconda.cases.sidecar import RepoVerification
from pytest_enconda.errors import HarnessError
from pytest_enconda.sandbox.containers import ExecResult
from pytest_enconda.sandbox.recipes import BASE_RECIPES
from pytest_enconda.verify import VerifyOptions, _attempt, setup_budget, verify_repository


def _options(tmp_path: Path, **changes: Any) -> VerifyOptions:
    return VerifyOptions(dataset=tmp_path, out=tmp_path / "s.json", logs=tmp_path, **changes)


def test_the_agent_attempt_gets_its_own_budget_only_when_the_recipe_follows(
    tmp_path: Path,
) -> None:
    options = _options(tmp_path, setup_seconds=2400, agent_setup_seconds=900)
    assert setup_budget(options, "agent:readme") == 900
    assert setup_budget(options, "recipe") == 2400
    alone = _options(tmp_path, setup_seconds=2400, recipe_fallback=False)
    assert setup_budget(alone, "agent:readme") == 2400
    short = _options(tmp_path, setup_seconds=300, agent_setup_seconds=900)
    assert setup_budget(short, "agent:readme") == 300


class _Box:
    def __init__(self) -> None:
        self.timeouts: list[float] = []

    def copy_in(self, data: bytes, path: str) -> None:
        pass

    def exec(self, command: str, *, timeout: float, log_path: Path, **_: Any) -> ExecResult:
        self.timeouts.append(timeout)
        return ExecResult(
            exit_code=None,
            output="serving on 0.0.0.0:2121",
            duration=timeout,
            timed_out=True,
            truncated=False,
        )


def test_a_never_ending_agent_setup_is_stopped_at_the_agent_budget(tmp_path: Path) -> None:
    box = _Box()

    @contextmanager
    def container(*_: Any, **__: Any) -> Any:
        yield box

    ctx = SimpleNamespace(
        options=_options(tmp_path, agent_setup_seconds=5),
        progress=lambda _line: None,
        sandbox=SimpleNamespace(container=container),
        download_cache=lambda _base: None,
        stopping=threading.Event(),
    )
    record = RepoVerification(repository="o/n", revision="r", status="unverified")
    verified = _attempt(ctx, record, "img", "agent:readme", "python -m srv\n", tmp_path, [])  # type: ignore[arg-type]
    assert not verified and box.timeouts == [5]
    assert record.attempts == ["agent:readme: setup timed out after 5 s: serving on 0.0.0.0:2121"]


def test_ctrl_c_cancels_the_queued_repositories_and_removes_containers(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The executor's own exit would have waited for the running setup and then verified every
    queued repository; interrupted, verify runs no further repository and closes its sandbox."""
    import pytest

    from pytest_enconda import verify

    started: list[str] = []
    closed: list[bool] = []

    class _Ctx:
        def __init__(self, options: VerifyOptions, progress: Any) -> None:
            self.sandbox = SimpleNamespace(
                reap_orphans=lambda: [], close=lambda: closed.append(True)
            )
            self.options = options
            self.lock = threading.Lock()
            self.stopping = threading.Event()

    def fake_verify(ctx: Any, name: str, revision: str) -> RepoVerification:
        started.append(name)
        raise KeyboardInterrupt

    monkeypatch.setattr(verify, "_Context", _Ctx)
    monkeypatch.setattr(verify, "verify_repository", fake_verify)
    monkeypatch.setattr(
        verify, "repositories_of", lambda _d: [("a/one", "1"), ("b/two", "2"), ("c/three", "3")]
    )
    lines: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        verify.verify_dataset(_options(tmp_path, workers=1), progress=lines.append)
    assert started == ["a/one"] and closed == [True]
    assert lines[-1] == "verify: interrupted: queued repositories cancelled, containers removed"


def test_sigterm_stops_verify_like_ctrl_c(tmp_path: Path, monkeypatch: Any) -> None:
    """``kill`` (a CI timeout, a scheduler) used to end verify at once, leaving the running
    setup's container and the queued repositories; a real SIGTERM now takes the Ctrl-C path."""
    import os
    import signal

    import pytest

    from pytest_enconda import verify

    started: list[str] = []
    closed: list[bool] = []
    release = threading.Event()

    class _Ctx:
        def __init__(self, options: VerifyOptions, progress: Any) -> None:
            self.options = options
            self.sandbox = SimpleNamespace(
                reap_orphans=lambda: [], close=lambda: closed.append(True)
            )
            self.lock = threading.Lock()
            self.stopping = threading.Event()

    def fake_verify(ctx: Any, name: str, revision: str) -> RepoVerification:
        started.append(name)
        os.kill(os.getpid(), signal.SIGTERM)
        release.wait(30)  # a setup still running when the signal arrives
        return RepoVerification(repository=name, revision=revision, status="unverified")

    monkeypatch.setattr(verify, "_Context", _Ctx)
    monkeypatch.setattr(verify, "verify_repository", fake_verify)
    monkeypatch.setattr(
        verify, "repositories_of", lambda _d: [("a/one", "1"), ("b/two", "2"), ("c/three", "3")]
    )
    before = signal.getsignal(signal.SIGTERM)
    lines: list[str] = []
    try:
        with pytest.raises(KeyboardInterrupt):
            verify.verify_dataset(_options(tmp_path, workers=1), progress=lines.append)
    finally:
        release.set()
    assert started == ["a/one"] and closed == [True]
    assert lines[-1] == "verify: interrupted: queued repositories cancelled, containers removed"
    assert signal.getsignal(signal.SIGTERM) is before


def test_verify_records_the_files_the_snapshot_lacked(tmp_path: Path) -> None:
    """The reference is made on the same partial tree the agents get: the record names what
    was missing instead of refusing the repository."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "--quiet", "--initial-branch=main")
    (origin / "app.py").write_text("VERSION = 1\n")
    (origin / "big.dat").write_bytes(b"\2" * 2048)
    git(origin, "add", "-A")
    git(origin, "commit", "--quiet", "-m", "one")
    commit = git(origin, "rev-parse", "HEAD")
    snapshot = tmp_path / "o+n" / "repo"
    git(tmp_path, "clone", "--quiet", "--bare", str(origin), str(snapshot))
    sha = git(snapshot, "rev-parse", f"{commit}:big.dat")
    (snapshot / "objects" / sha[:2] / sha[2:]).unlink()
    assert subprocess.run(
        ["git", "--git-dir", str(snapshot), "cat-file", "-e", sha], check=False
    ).returncode

    def no_image(*_: Any, **__: Any) -> str:
        raise HarnessError("no Docker in this test")

    lines: list[str] = []
    ctx = SimpleNamespace(
        options=_options(tmp_path, repo_mirror=snapshot),
        progress=lines.append,
        images=SimpleNamespace(
            settings=SimpleNamespace(cache_dir=tmp_path / "cache", pull_base=None),
            recipes=BASE_RECIPES,
            ensure_base=no_image,
        ),
    )
    record = verify_repository(ctx, "o/n", commit)  # type: ignore[arg-type]
    assert record.absent_files == ["big.dat"] and record.absent_count == 1
    # The checkout went on: verify got as far as the image.
    assert record.status == "unverified" and record.reason == "no Docker in this test"
    assert "o/n: the snapshot lacks 1 file(s), checked out without them: big.dat" in lines


def test_a_failed_setup_is_named_by_its_cause_not_pips_closing_note() -> None:
    from pytest_enconda.verify import _failure_line

    pip = """\
  Building wheel for menpo (pyproject.toml) ... error
  error: subprocess-exited-with-error
  ModuleNotFoundError: No module named 'numpy'
  [end of output]
note: This error originates from a subprocess, and is likely not a problem with pip.
ERROR: Failed building wheel for menpo
"""
    assert _failure_line(pip) == "ModuleNotFoundError: No module named 'numpy'"
    # Nothing that names a failure: the last line, as before.
    assert _failure_line("step one\nstep two\n") == "step two"


# The child of the test below: the CLI's verify with the Docker context and each repository's
# work replaced, "b/blocked" never returning (a setup whose container no signal reaches).
_BLOCKED_VERIFY = """
import sys, threading
from pathlib import Path
from types import SimpleNamespace
from pytest_enconda import cli, verify
from pytest_enconda.cases.sidecar import RepoVerification

started = Path(sys.argv[1])

class Ctx:
    def __init__(self, options, progress):
        self.options, self.progress = options, progress
        self.sandbox = SimpleNamespace(reap_orphans=lambda: [], close=lambda: None)
        self.lock = threading.Lock()
        self.stopping = threading.Event()

def fake(ctx, name, revision):
    if name == "b/blocked":
        started.write_text(name)
        threading.Event().wait()
    return RepoVerification(repository=name, revision=revision, status="unverified", reason="x")

verify._Context = Ctx
verify.verify_repository = fake
verify.repositories_of = lambda _d: [("a/done", "1"), ("b/blocked", "2"), ("c/queued", "3")]
sys.exit(cli.main(sys.argv[2:]))
"""


def test_sigterm_ends_the_verify_process_while_a_setup_still_runs(tmp_path: Path) -> None:
    """In-process, the test above sees KeyboardInterrupt; the real process then waited at exit
    for the executor's worker, blocked in a setup of up to 2,400 s, before it ended. It must end
    within seconds with the repositories recorded before the signal intact in the sidecar."""
    import os
    import signal
    import sys
    import time

    from pytest_enconda.cases.sidecar import read_sidecar

    started = tmp_path / "started"
    out = tmp_path / "sidecar.json"
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    argv = ["verify", str(dataset), "--out", str(out), "--logs", str(tmp_path / "logs")]
    child = subprocess.Popen(
        [sys.executable, "-c", _BLOCKED_VERIFY, str(started), *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        # The first record is written by the main thread, perhaps after the worker moved on.
        while not (started.exists() and out.exists()) and child.poll() is None:
            assert time.monotonic() < deadline, "the child never reached the blocked setup"
            time.sleep(0.05)
        assert started.exists(), child.communicate(timeout=5)
        child.send_signal(signal.SIGTERM)
        try:
            stdout, stderr = child.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            raise AssertionError("verify did not end within 10 s of SIGTERM") from None
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 130, stderr
    assert "verify: interrupted" in stdout and "pytest-enconda: interrupted" in stderr
    assert list(read_sidecar(out).repositories) == ["a/done"]


def test_an_interrupted_verify_makes_no_container_that_outlives_the_sandbox(tmp_path: Path) -> None:
    """A worker abandoned at exit goes on to its next step; the container it makes after the
    sandbox closed is removed at once instead of running on."""
    import pytest

    from pytest_enconda.verify import _container

    events: list[str] = []

    @contextmanager
    def container(image: str, **_: Any) -> Any:
        events.append(f"made {image}")
        try:
            yield object()
        finally:
            events.append(f"removed {image}")

    ctx = SimpleNamespace(
        sandbox=SimpleNamespace(container=container),
        stopping=threading.Event(),
        download_cache=lambda _base: None,
    )
    record = RepoVerification(repository="o/n", revision="r", status="unverified")
    with _container(ctx, record, "setup", "verify-setup"):  # type: ignore[arg-type]
        events.append("ran setup")
    ctx.stopping.set()
    stopped = _container(ctx, record, "test", "verify-test")  # type: ignore[arg-type]
    with pytest.raises(Exception, match="verify was interrupted"), stopped:
        events.append("ran tests")
    assert events == ["made setup", "ran setup", "removed setup", "made test", "removed test"]


def test_repo_selects_ignoring_case_and_an_unknown_one_is_an_error(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """``--repo lightning-ai/litgpt`` verified nothing and said only "0 repositories to verify":
    the dataset writes ``Lightning-AI/litgpt``."""
    import pytest

    from pytest_enconda import verify
    from pytest_enconda.errors import EncondaError

    started: list[str] = []

    class _Ctx:
        def __init__(self, options: VerifyOptions, progress: Any) -> None:
            self.sandbox = SimpleNamespace(reap_orphans=lambda: [], close=lambda: None)
            self.options = options
            self.lock = threading.Lock()
            self.stopping = threading.Event()

    def fake_verify(ctx: Any, name: str, revision: str) -> RepoVerification:
        started.append(name)
        return RepoVerification(repository=name, revision=revision, status="unverified")

    monkeypatch.setattr(verify, "_Context", _Ctx)
    monkeypatch.setattr(verify, "verify_repository", fake_verify)
    monkeypatch.setattr(
        verify, "repositories_of", lambda _d: [("Lightning-AI/litgpt", "1"), ("b/two", "2")]
    )
    lines: list[str] = []
    verify.verify_dataset(
        _options(tmp_path, workers=1, only=("lightning-ai/LITGPT",)), progress=lines.append
    )
    assert started == ["Lightning-AI/litgpt"]
    with pytest.raises(EncondaError, match=r"--repo b/twoo: no such repository"):
        verify.verify_dataset(_options(tmp_path, workers=1, only=("b/twoo", "b/two")))
    assert started == ["Lightning-AI/litgpt"]
