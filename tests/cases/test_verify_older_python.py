"""A reference whose logs show the code using a standard-library name the base's Python removed
(google/trax on 3.11: ``cannot import name 'formatargspec' from 'inspect'``) is retried once on
the newest older base whose Python still has it, with that base's image and requirements."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
from test_verify_as_of import WHEN, _snapshot
from verifyfake import ByBase, fake_context

from pytest_enconda.cases.sidecar import RepoVerification, timing_tag
from pytest_enconda.repo.python_range import DeclaredPython
from pytest_enconda.sandbox.recipes import BASE_RECIPES, older_base
from pytest_enconda.verify import ladder
from pytest_enconda.verify.recipes import AS_OF
from pytest_enconda.verify.removed_apis import find_removal, removal_in_logs

TRAX = (
    "E   ImportError: cannot import name 'formatargspec' from 'inspect' "
    "(/usr/lib/python3.11/inspect.py)\n"
)
LNLDB = (
    "    if isinstance(x, collections.Iterable):\n"
    "AttributeError: module 'collections' has no attribute 'Iterable'\n"
)


@pytest.mark.parametrize(
    ("text", "python", "removed_in"),
    [
        (TRAX, "3.11.2", "3.11"),
        (LNLDB, "3.11.2", "3.10"),
        ("ImportError: cannot import name 'Mapping' from 'collections' (/x)", "3.10", "3.10"),
        ("AttributeError: module 'asyncio' has no attribute 'coroutine'", "3.11.2", "3.11"),
        ("fatal error: longintrepr.h: No such file or directory", "3.11.2", "3.11"),
        ("ModuleNotFoundError: No module named 'imp'", "3.13.5", "3.12"),
        ("ModuleNotFoundError: No module named 'cgi'", "3.13.5", "3.13"),
        ("AttributeError: 'Foo' object has no attribute 'assertEquals'", "3.13.5", "3.12"),
    ],
)
def test_a_removed_name_is_read_with_the_release_that_removed_it(
    text: str, python: str, removed_in: str
) -> None:
    found = find_removal(text, python)
    assert found is not None and found.removed_in == removed_in
    assert found.evidence in text


@pytest.mark.parametrize(
    ("text", "python"),
    [
        (TRAX, "3.10"),  # 3.10 still has it
        (LNLDB, "3.9.2"),
        ("ModuleNotFoundError: No module named 'distutils'", "3.11.2"),  # Debian's split, not 3.12
        ("ModuleNotFoundError: No module named 'cgi_helpers'", "3.13.5"),  # a project's module
        ("AttributeError: module 'mylib' has no attribute 'Iterable'", "3.11.2"),
        ("", "3.11.2"),
    ],
)
def test_text_the_interpreter_explains_nothing_about_is_no_removal(text: str, python: str) -> None:
    assert find_removal(text, python) is None


def test_of_several_removals_the_earliest_decides() -> None:
    found = find_removal(TRAX + LNLDB, "3.11.2")
    assert found is not None and found.removed_in == "3.10"


def test_only_a_log_tail_is_read(tmp_path: Path) -> None:
    log = tmp_path / "test1.log"
    log.write_text(TRAX + "x" * 2_100_000)
    assert removal_in_logs([log, tmp_path / "absent.log"], "3.11.2") is None
    log.write_text("x" * 2_100_000 + TRAX)
    assert removal_in_logs([log, tmp_path / "absent.log"], "3.11.2") is not None


def test_a_linked_log_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.log"
    outside.write_text(TRAX)
    (tmp_path / "test1.log").symlink_to(outside)
    assert removal_in_logs([tmp_path / "test1.log"], "3.11.2") is None
    assert removal_in_logs([outside], "3.11.2") is not None


def test_the_older_base_is_the_newest_whose_python_has_it_and_the_range_allows() -> None:
    removal = find_removal(TRAX, "3.13.5")
    assert removal is not None
    # From trixie's 3.13 the nearest older base is bookworm's 3.11, which lacks it: bullseye.
    choice = older_base("trixie-py3.13", removal.allows, None)
    assert choice is not None and choice.name == "bullseye-py3.9"
    assert older_base("bookworm-py3.11", removal.allows, None).name == "bullseye-py3.9"  # type: ignore[union-attr]
    # A declared range excluding 3.9 leaves none; an unreadable one does not decide.
    assert older_base("bookworm-py3.11", removal.allows, DeclaredPython(">=3.10")) is None
    unreadable = DeclaredPython("~=banana", problem="not a specifier")
    assert older_base("bookworm-py3.11", removal.allows, unreadable) is not None
    time_clock = find_removal("module 'time' has no attribute 'clock'", "3.11.2")
    assert time_clock is not None and older_base("bookworm-py3.11", time_clock.allows, None) is None
    assert older_base("bullseye-py3.9", removal.allows, None) is None  # nothing older


def _run(
    tmp_path: Path,
    monkeypatch: Any,
    log_text: dict[str, str],
    verifies: set[str] = frozenset(),  # type: ignore[assignment]
    base_image: str = "bookworm-py3.11",
    step: str = "test1",
    pypi_files: Any = None,
) -> tuple[RepoVerification, list[tuple[str, str, str]], list[str], list[str]]:
    """verify on a fake whose attempts write ``log_text[label]`` as their test log and verify
    when their label is in ``verifies``: the record, (label, base, cutoff) of each attempt, the
    bases built and the progress lines."""
    snapshot, commit = _snapshot(tmp_path)
    tried: list[tuple[str, str, str]] = []
    images: list[str] = []
    logs = tmp_path / "logs"

    def attempt(ctx: Any, record: RepoVerification, image: str, label: str, *_: Any) -> bool:
        tried.append((label, record.base_image, record.packages_before))
        images.append(image)
        folder = logs / "o__n"
        (folder / f"{timing_tag(label)}-{step}.log").write_text(log_text.get(label, ""))
        if label in verifies:
            record.pass_set = ["t::a"]
            record.reference_source = label
            return True
        record.attempts.append(f"{label}: failed")
        return False

    monkeypatch.setattr(ladder, "attempt", attempt)
    monkeypatch.setattr(ladder, "_agent_script", lambda *_a, **_k: "")
    monkeypatch.setattr(ladder, "_system_packages", lambda *_a: [])
    lines: list[str] = []
    backend = ByBase(tmp_path / "fake")
    ctx = fake_context(
        tmp_path,
        snapshot,
        lines,
        backend=backend,
        logs=logs,
        base_image=base_image,
        pypi_files=pypi_files,
    )
    record = ladder.verify_repository(ctx, "o/n", commit)
    # Each attempt's boxes start from the image of its own base.
    assert images == [f"fake/task:verify-o-n-on-{base}" for _, base, _ in tried]
    return record, tried, backend.bases(), lines


def test_a_removed_name_in_the_last_attempt_retries_it_on_the_older_base(
    tmp_path: Path, monkeypatch: Any
) -> None:
    retry = f"{AS_OF}@bullseye-py3.9"
    record, tried, built, lines = _run(tmp_path, monkeypatch, {AS_OF: TRAX}, {retry})
    assert tried == [
        ("recipe", "bookworm-py3.11", ""),
        (AS_OF, "bookworm-py3.11", WHEN),
        (retry, "bullseye-py3.9", WHEN),  # the dated retry keeps its cutoff
    ]
    assert built == ["bookworm-py3.11", "bullseye-py3.9"]
    assert record.status == "verified" and record.base_image == "bullseye-py3.9"
    assert record.reference_source == retry
    said = [a for a in record.attempts if "inspect.getargspec, removed in Python 3.11" in a]
    assert said and said[0].endswith("retried on bullseye-py3.9")
    assert "o/n: base bullseye-py3.9: its Python 3.9.2 still has what the code uses" in lines


def test_the_retry_is_made_once_and_its_failure_is_recorded(
    tmp_path: Path, monkeypatch: Any
) -> None:
    retry = f"{AS_OF}@bullseye-py3.9"
    record, tried, built, _ = _run(tmp_path, monkeypatch, {AS_OF: TRAX, retry: TRAX})
    assert [label for label, _, _ in tried] == ["recipe", AS_OF, retry]
    assert record.status == "unverified" and record.reason == f"{retry}: failed"
    assert built == ["bookworm-py3.11", "bullseye-py3.9"]


def test_logs_without_a_removed_name_change_no_base(tmp_path: Path, monkeypatch: Any) -> None:
    record, tried, built, _ = _run(tmp_path, monkeypatch, {AS_OF: "E   AssertionError: 1 != 2"})
    assert [label for label, _, _ in tried] == ["recipe", AS_OF]
    assert built == ["bookworm-py3.11"] and record.base_image == "bookworm-py3.11"


def test_a_removal_no_base_predates_is_said_and_not_retried(
    tmp_path: Path, monkeypatch: Any
) -> None:
    clock = "AttributeError: module 'time' has no attribute 'clock'"
    record, tried, built, _ = _run(tmp_path, monkeypatch, {"recipe": clock})
    assert [label for label, _, _ in tried] == ["recipe", AS_OF]
    assert built == ["bookworm-py3.11"]
    assert any(
        "time.clock, removed in Python 3.8" in a and "no base has an older Python" in a
        for a in record.attempts
    )


PROGRAM = (
    "import collections, inspect\n"
    "try:\n"
    "    from inspect import formatargspec\n"
    "except ImportError as exc:\n"
    "    print(f'{type(exc).__name__}: {exc}')\n"
    "print(collections.Iterable)\n"
)


@pytest.mark.docker
def test_the_bases_own_interpreter_says_what_the_reader_reads(sandbox, base_image) -> None:
    """The text is the real interpreter's, not a copy: bookworm's 3.11 fails both names, and the
    reading points to bullseye, the base whose 3.9 has them (run there in the slow test)."""
    with sandbox.container(base_image, case_id="t/removed", role="test") as box:
        run = box.exec(f"python3 -c {shlex.quote(PROGRAM)}", timeout=60, workdir="/")
    assert run.exit_code != 0
    python = BASE_RECIPES["bookworm-py3.11"].python_release
    found = find_removal(run.output, python)
    assert found is not None, run.output
    assert (found.removed_in, found.what) == ("3.10", "collections' ABC aliases")
    line = next(line for line in run.output.splitlines() if "formatargspec" in line)
    alone = find_removal(line, python)
    assert alone is not None and alone.removed_in == "3.11", run.output
    choice = older_base("bookworm-py3.11", found.allows, None)
    assert choice is not None and choice.name == "bullseye-py3.9"


@pytest.mark.docker
@pytest.mark.slow
def test_the_older_base_runs_what_the_newer_one_refused(sandbox, image_builder) -> None:
    """Builds bullseye's base (minutes on first use) and runs the same program there."""
    older = image_builder.ensure_base("bullseye-py3.9", lambda _line: None)
    with sandbox.container(older, case_id="t/removed-old", role="test") as box:
        run = box.exec(f"python3 -c {shlex.quote(PROGRAM)}", timeout=60, workdir="/")
    assert run.exit_code == 0, run.output
    assert "<class 'collections.abc.Iterable'>" in run.output
    assert find_removal(run.output, BASE_RECIPES["bullseye-py3.9"].python_release) is None


def test_a_second_removal_after_the_retry_is_said_but_not_retried_again(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """From trixie, ``imp`` (3.12) sends the recipe to bookworm; there the code also uses
    ``collections.Iterable`` (3.10): one retry only, so bullseye is not tried."""
    imp = "ModuleNotFoundError: No module named 'imp'"
    retry = f"{AS_OF}@bookworm-py3.11"
    record, tried, built, _ = _run(
        tmp_path, monkeypatch, {AS_OF: imp, retry: LNLDB}, base_image="trixie-py3.13"
    )
    assert [(label, base) for label, base, _ in tried] == [
        ("recipe", "trixie-py3.13"),
        (AS_OF, "trixie-py3.13"),
        (retry, "bookworm-py3.11"),
    ]
    assert built == ["trixie-py3.13", "bookworm-py3.11"]
    assert record.reason == f"{retry}: failed"
