"""verify's setup budgets: the agent's attempt on the original README is bounded apart when the
recipe follows it (a README that starts a server in the foreground never ends)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from gitutil import git
from verifyfake import NoImage, fake_context

from pytest_enconda.backends.fake import FakeBackend, canned
from pytest_enconda.cases.sidecar import RepoVerification
from pytest_enconda.verify import VerifyOptions, verify_repository
from pytest_enconda.verify.attempt import attempt, setup_budget


def _options(tmp_path: Path, **changes: Any) -> VerifyOptions:
    return VerifyOptions(dataset=tmp_path, out=tmp_path / "s.json", logs=tmp_path, **changes)


class _Closing(FakeBackend):
    """The fake backend, counting how often verify closes it."""

    closed = 0

    def close(self) -> None:
        self.closed += 1
        super().close()


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


def test_a_never_ending_agent_setup_is_stopped_at_the_agent_budget(tmp_path: Path) -> None:
    backend = FakeBackend(
        tmp_path / "fake",
        responder=lambda *_a: canned("serving on 0.0.0.0:2121", timed_out=True),
    )
    image = backend.add_image("img")
    ctx = fake_context(tmp_path, None, [], backend=backend, agent_setup_seconds=5)
    record = RepoVerification(repository="o/n", revision="r", status="unverified")
    verified = attempt(ctx, record, image, "agent:readme", "python -m srv\n", tmp_path, [])
    assert not verified
    assert [call.detail["timeout"] for call in backend.ops("exec")] == [5]
    assert record.attempts == ["agent:readme: setup timed out after 5 s: serving on 0.0.0.0:2121"]


def test_ctrl_c_cancels_the_queued_repositories_and_removes_containers(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The executor's own exit would have waited for the running setup and then verified every
    queued repository; interrupted, verify runs no further repository and closes its sandbox."""
    import pytest

    from pytest_enconda.verify import ladder

    started: list[str] = []
    backend = _Closing(tmp_path / "fake")

    def fake_verify(ctx: Any, name: str, revision: str) -> RepoVerification:
        started.append(name)
        raise KeyboardInterrupt

    monkeypatch.setattr(ladder, "verify_repository", fake_verify)
    monkeypatch.setattr(
        ladder, "repositories_of", lambda _d: [("a/one", "1"), ("b/two", "2"), ("c/three", "3")]
    )
    lines: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        ladder.verify_dataset(_options(tmp_path, workers=1), progress=lines.append, backend=backend)
    assert started == ["a/one"] and backend.closed == 1
    assert lines[-1] == "verify: interrupted: queued repositories cancelled, containers removed"


def test_sigterm_stops_verify_like_ctrl_c(tmp_path: Path, monkeypatch: Any) -> None:
    """``kill`` (a CI timeout, a scheduler) used to end verify at once, leaving the running
    setup's container and the queued repositories; a real SIGTERM now takes the Ctrl-C path."""
    import os
    import signal
    import threading

    import pytest

    from pytest_enconda.verify import ladder

    started: list[str] = []
    backend = _Closing(tmp_path / "fake")
    release = threading.Event()

    def fake_verify(ctx: Any, name: str, revision: str) -> RepoVerification:
        started.append(name)
        os.kill(os.getpid(), signal.SIGTERM)
        release.wait(30)  # a setup still running when the signal arrives
        return RepoVerification(repository=name, revision=revision, status="unverified")

    monkeypatch.setattr(ladder, "verify_repository", fake_verify)
    monkeypatch.setattr(
        ladder, "repositories_of", lambda _d: [("a/one", "1"), ("b/two", "2"), ("c/three", "3")]
    )
    before = signal.getsignal(signal.SIGTERM)
    lines: list[str] = []
    try:
        with pytest.raises(KeyboardInterrupt):
            ladder.verify_dataset(
                _options(tmp_path, workers=1), progress=lines.append, backend=backend
            )
    finally:
        release.set()
    assert started == ["a/one"] and backend.closed == 1
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

    lines: list[str] = []
    ctx = fake_context(tmp_path, snapshot, lines, backend=NoImage(tmp_path / "fake"))
    record = verify_repository(ctx, "o/n", commit)
    assert record.absent_files == ["big.dat"] and record.absent_count == 1
    # The checkout went on: verify got as far as the image.
    assert record.status == "unverified" and record.reason == "no Docker in this test"
    assert "o/n: the snapshot lacks 1 file(s), checked out without them: big.dat" in lines


def test_a_failed_setup_is_named_by_its_cause_not_pips_closing_note() -> None:
    from pytest_enconda.verify.attempt import _failure_line

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
from pytest_enconda import cli
from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.sidecar import RepoVerification
from pytest_enconda.verify import context, ladder

started = Path(sys.argv[1])

def fake(ctx, name, revision):
    if name == "b/blocked":
        started.write_text(name)
        threading.Event().wait()
    return RepoVerification(repository=name, revision=revision, status="unverified", reason="x")

context.default_backend = lambda _settings: (FakeBackend(), None)
ladder.verify_repository = fake
ladder.repositories_of = lambda _d: [("a/done", "1"), ("b/blocked", "2"), ("c/queued", "3")]
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

    from pytest_enconda.verify.context import Stopped

    backend = FakeBackend(tmp_path / "fake")
    ctx = fake_context(tmp_path, None, [], backend=backend)
    events: list[str] = []
    record = RepoVerification(repository="o/n", revision="r", status="unverified")
    with ctx.box(record, backend.add_image("setup"), "verify-setup"):
        events.append("ran setup")
    ctx.stopping.set()
    stopped = ctx.box(record, backend.add_image("test"), "verify-test")
    with pytest.raises(Stopped, match="verify was interrupted"), stopped:
        events.append("ran tests")
    assert events == ["ran setup"]
    made = [call.detail["image"] for call in backend.ops("start")]
    assert made == ["setup", "test"] and len(backend.ops("remove")) == 2 and not backend.live


def test_repo_selects_ignoring_case_and_an_unknown_one_is_an_error(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """``--repo lightning-ai/litgpt`` verified nothing and said only "0 repositories to verify":
    the dataset writes ``Lightning-AI/litgpt``."""
    import pytest

    from pytest_enconda.errors import EncondaError
    from pytest_enconda.verify import ladder

    started: list[str] = []

    def fake_verify(ctx: Any, name: str, revision: str) -> RepoVerification:
        started.append(name)
        return RepoVerification(repository=name, revision=revision, status="unverified")

    monkeypatch.setattr(ladder, "verify_repository", fake_verify)
    monkeypatch.setattr(
        ladder, "repositories_of", lambda _d: [("Lightning-AI/litgpt", "1"), ("b/two", "2")]
    )
    lines: list[str] = []
    ladder.verify_dataset(
        _options(tmp_path, workers=1, only=("lightning-ai/LITGPT",)),
        progress=lines.append,
        backend=FakeBackend(tmp_path / "fake"),
    )
    assert started == ["Lightning-AI/litgpt"]
    with pytest.raises(EncondaError, match=r"--repo b/twoo: no such repository"):
        ladder.verify_dataset(
            _options(tmp_path, workers=1, only=("b/twoo", "b/two")),
            backend=FakeBackend(tmp_path / "fake2"),
        )
    assert started == ["Lightning-AI/litgpt"]
