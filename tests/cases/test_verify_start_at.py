"""A re-run may start at a later attempt (meerkat: the agent's and the plain recipe's test runs
took an hour each before the dated recipe, the one that got furthest); the record says which
attempts were not tried."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_verify_as_of import WHEN, _snapshot
from verifyfake import fake_context

from pytest_enconda import cli
from pytest_enconda.cases.sidecar import RepoVerification
from pytest_enconda.verify import ladder
from pytest_enconda.verify.recipes import AS_OF


def _run(tmp_path: Path, monkeypatch: Any, **options: Any) -> tuple[RepoVerification, list[str]]:
    snapshot, commit = _snapshot(tmp_path)
    tried: list[str] = []
    agent_asked: list[bool] = []

    def attempt(ctx: Any, record: RepoVerification, image: str, label: str, *_: Any) -> bool:
        tried.append(label)
        record.attempts.append(f"{label}: failed")
        return False

    def agent(*_a: Any, **_k: Any) -> str:
        agent_asked.append(True)
        return "#!/bin/bash\ntrue\n"

    monkeypatch.setattr(ladder, "attempt", attempt)
    monkeypatch.setattr(ladder, "_agent_script", agent)
    monkeypatch.setattr(ladder, "_system_packages", lambda *_a: [])
    ctx = fake_context(tmp_path, snapshot, [], logs=tmp_path / "logs", **options)
    record = ladder.verify_repository(ctx, "o/n", commit)  # type: ignore[arg-type]
    assert bool(agent_asked) == (tried[:1] == ["agent:readme"])  # a skipped agent is never asked
    return record, tried


@pytest.mark.parametrize(
    ("first", "expected", "skipped"),
    [
        ("agent", ["agent:readme", "recipe", AS_OF], ""),
        ("recipe", ["recipe", AS_OF], "agent:readme"),
        ("as-of", [AS_OF], "agent:readme, recipe"),
    ],
)
def test_the_attempts_before_the_first_are_not_tried_and_said(
    tmp_path: Path, monkeypatch: Any, first: str, expected: list[str], skipped: str
) -> None:
    record, tried = _run(tmp_path, monkeypatch, first_attempt=first)
    assert tried == expected
    assert record.revision_date == WHEN
    said = [a for a in record.attempts if a.startswith("not tried")]
    assert said == ([f"not tried (started at {first}): {skipped}"] if skipped else [])
    assert record.status == "unverified" and record.reason == f"{expected[-1]}: failed"


def test_an_attempt_switched_off_is_no_place_to_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for flags in (["--start-at", "as-of", "--no-as-of"], ["--start-at", "recipe", "--no-recipe"]):
        # A usage error: exit 2, as argparse's own.
        assert cli.main(["verify", str(tmp_path), *flags]) == 2
        assert "pytest-enconda verify: error: --start-at" in capsys.readouterr().err


def test_a_start_no_attempt_has_is_the_repositorys_reason_alone(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The dated recipe is not there when it is switched off (or the snapshot has no date)."""
    snapshot, commit = _snapshot(tmp_path)
    monkeypatch.setattr(ladder, "_agent_script", lambda *_a, **_k: "")
    monkeypatch.setattr(ladder, "_system_packages", lambda *_a: [])
    ctx = fake_context(
        tmp_path, snapshot, [], logs=tmp_path / "logs", first_attempt="as-of", recipe_as_of=False
    )
    record = ladder.verify_repository(ctx, "o/n", commit)  # type: ignore[arg-type]
    assert record.status == "unverified"
    assert record.reason == "verify: no as-of attempt to start at"
