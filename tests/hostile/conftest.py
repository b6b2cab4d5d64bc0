"""The hostile-input suite's tally: inputs tried per kind, and what went wrong with them.

Each test runs its inputs through ``attempt``, which times it, watches the process's peak
memory and the canary host file, and fails the test at the first crash, hang, blow-up or host
read. With ``ENCONDA_HOSTILE_FIGURES=FILE`` the tally is written there (the README's figures).
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# What one bad input may cost: a hang is anything slower, a blow-up anything bigger.
SECONDS = 5.0
WHOLE_RUN_SECONDS = 60.0
MEGABYTES = 512
CANARY = "ENCONDA-HOST-CANARY-7f3a"

TALLY: Counter[str] = Counter()
FAULTS: Counter[str] = Counter()


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Attempt:
    whole_run = WHOLE_RUN_SECONDS

    def __init__(self, canary: Path) -> None:
        self.canary = canary

    def __call__(
        self,
        kind: str,
        run: Callable[[], Any],
        expected: tuple[type[BaseException], ...],
        seconds: float = SECONDS,
    ) -> tuple[Any, BaseException | None]:
        """(result, the expected error raised or None); anything else fails the test.

        ``seconds``: a whole-run operation (a regrade with its report) is given
        ``WHOLE_RUN_SECONDS``: seconds of work on an idle machine, and many more on a loaded
        one, where 5 s would call it a hang."""
        TALLY[kind] += 1
        before = _peak_mb()
        started = time.monotonic()
        result: Any = None
        error: BaseException | None = None
        try:
            result = run()
        except expected as exc:
            error = exc
        except Exception:
            FAULTS[f"{kind}: crash"] += 1
            raise
        took = time.monotonic() - started
        grew = _peak_mb() - before
        if took > seconds:
            FAULTS[f"{kind}: hang"] += 1
            pytest.fail(f"{kind}: took {took:.1f} s")
        if grew > MEGABYTES:
            FAULTS[f"{kind}: memory"] += 1
            pytest.fail(f"{kind}: peak memory grew {grew:.0f} MB")
        if CANARY in repr(result) or (error is not None and CANARY in str(error)):
            FAULTS[f"{kind}: host read"] += 1
            pytest.fail(f"{kind}: the host file's text reached the result")
        return result, error


@pytest.fixture(scope="session")
def canary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A host file no input may make the harness read."""
    path = tmp_path_factory.mktemp("host") / "secret.txt"
    path.write_text(CANARY + "\n")
    return path


@pytest.fixture
def attempt(canary: Path) -> Attempt:
    return Attempt(canary)


@pytest.fixture(scope="session", autouse=True)
def _figures() -> Iterator[None]:
    yield
    target = os.environ.get("ENCONDA_HOSTILE_FIGURES")
    if target:
        Path(target).write_text(
            json.dumps({"inputs": dict(sorted(TALLY.items())), "faults": dict(FAULTS)}, indent=2)
        )
