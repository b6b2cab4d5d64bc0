"""The run's session in ``config.stash``: made on first need, reached by every hook and node.

Below the plugin and the collection nodes in the import order, so both reach the session without
importing each other. Standard library and pytest only: the plugin imports this in every run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from . import options as options_mod

if TYPE_CHECKING:
    from .session import EncondaSession
    from .settings import EncondaSettings

WORKER_RUN_DIR = "enconda_run_dir"


def workerinput(config: pytest.Config) -> dict[str, Any]:
    """What an xdist controller handed this worker (empty outside xdist workers)."""
    return getattr(config, "workerinput", None) or {}


class PluginState:
    """What the plugin knows before a benchmark is certain: the session is made on first need."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.session: EncondaSession | None = None
        self.repo_dirs: set[Path] = set()

    @property
    def requested(self) -> bool:
        """Any benchmark option given (xdist workers of a benchmark run get the run directory)."""
        return options_mod.any_given(self.config) or WORKER_RUN_DIR in workerinput(self.config)

    def get(self) -> EncondaSession:
        if self.session is None:
            self.session = _make_session(self.config)
        return self.session


STATE_KEY = pytest.StashKey[PluginState]()


def session_of(config: pytest.Config) -> EncondaSession:
    """The run's session, created (and its settings validated) on first use."""
    return config.stash[STATE_KEY].get()


def active_session(config: pytest.Config) -> EncondaSession | None:
    """The session if this run is a benchmark, without making one for other test suites."""
    state = config.stash.get(STATE_KEY, None)
    if state is None:
        return None
    return state.session or (state.get() if state.requested else None)


def _make_session(config: pytest.Config) -> EncondaSession:
    from . import settings as settings_mod
    from .session import EncondaSession

    given = workerinput(config)
    run_dir = Path(given[WORKER_RUN_DIR]) if WORKER_RUN_DIR in given else None
    settings = settings_mod.from_config(config, run_dir=run_dir)
    if not given:
        check_run_dir(settings)
    return EncondaSession(config, settings)


def check_run_dir(settings: EncondaSettings) -> None:
    """A new run never writes into an old one; a resumed run keeps the settings it was made with."""
    from .artifacts import ArtifactError
    from .records import RunDir, read_run_info

    run = RunDir(settings.run_dir)
    if not settings.resume and run.results.exists():
        raise pytest.UsageError(
            f"{settings.run_dir} already holds a run: use --resume {settings.run_dir} "
            "to continue it, or another --run-dir"
        )
    if settings.resume:
        foreign = run.foreign_entries()
        if foreign:
            raise pytest.UsageError(
                f"--resume {settings.run_dir}: a run directory this harness wrote holds no links "
                "or special files, and these would be followed or hang the run: "
                + "; ".join(foreign)
                + " (remove them, or start a new run)"
            )
    info = run.run_info
    if settings.resume and info.is_file():
        try:
            recorded = read_run_info(run)
        except ArtifactError as exc:
            raise pytest.UsageError(str(exc)) from None
        before = recorded.settings if recorded is not None else {}
        for key in ("agent", "model", "judge", "readme_variant"):
            if before.get(key) != getattr(settings, key):
                raise pytest.UsageError(
                    f"{info}: the run was made with {key}={before.get(key)!r}; "
                    f"resume it with the same {key} (got {getattr(settings, key)!r})"
                )
