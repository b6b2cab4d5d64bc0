"""The agent's final state as an image that probes start fresh containers from.

An agent that worked in a container leaves that container's snapshot. For one that returned a
setup script (the oracle, the ``readme`` agent, replayed predictions), the script is its
environment: it runs once in a fresh container of the task image, whatever it leaves in
``/enconda/output`` (the self-report) is copied out, and the container is committed. Probes then
never touch a live container, and nothing they do reaches the next probe.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from ..errors import HarnessError

if TYPE_CHECKING:
    from ..backends.base import Backend, Box
    from ..cases.models import Case
    from ..records import CaseDir
    from ..sandbox.containers import Sandbox

SCRIPT_PATH = "/tmp/enconda/setup.sh"
OUTPUT_DIR = "/enconda/output"
WORKDIR = "/data/project"


class FinalState(BaseModel):
    """What ``environment/state.json`` holds."""

    case_id: str
    image: str = Field(description="the snapshot image probes start from")
    source: str = Field(description="'setup-script' or 'agent-container'")
    setup_exit_code: int | None = None
    setup_timed_out: bool = False
    setup_seconds: float = 0.0
    snapshot_seconds: float = 0.0
    writable_bytes: int = Field(default=0, description="what the setup added to the task image")
    report_file: str | None = Field(
        default=None, description="the self-report copied out of /enconda/output, if any"
    )


def build_final_state(
    backend: Backend | Sandbox,
    task_image: str,
    case: Case,
    setup_script: str,
    case_dir: CaseDir,
    *,
    scale: float = 1.0,
) -> FinalState:
    """Run ``setup_script`` in a fresh box of ``task_image`` and snapshot the result; the setup
    gets the case's budget times ``scale`` (``--budget-scale``)."""
    from ..backends import as_backend
    from ..backends.base import download_cache_key, started
    from .shell import setup_command

    log = case_dir.environment_log("setup")
    with started(
        as_backend(backend),
        task_image,
        case_id=case.id,
        role="agent-state",
        download_cache=download_cache_key(case),
    ) as box:
        box.copy_in(setup_script.encode(), SCRIPT_PATH)
        box.exec(f"mkdir -p {OUTPUT_DIR}", timeout=30)
        result = box.exec(
            setup_command(SCRIPT_PATH),
            timeout=case.spec.budgets.setup_seconds * scale,
            workdir=WORKDIR,
            log_path=log,
        )
        state = freeze(box, case, case_dir, source="setup-script")
    return state.model_copy(
        update={
            "setup_exit_code": result.exit_code,
            "setup_timed_out": result.timed_out,
            "setup_seconds": round(result.duration, 3),
        }
    )


def freeze(box: Box, case: Case, case_dir: CaseDir, *, source: str) -> FinalState:
    """Snapshot ``box`` as the final state, with the self-report it holds copied out."""
    report_file = None
    try:
        box.copy_out(f"{OUTPUT_DIR}/report.json", case_dir.environment_report)
        report_file = case_dir.relative(case_dir.environment_report)
    except FileNotFoundError:
        pass
    except HarnessError:
        # A link or special file where the report should be: never followed; C5 sees none.
        report_file = None
    from ..diskspace import SNAPSHOT_FACTOR, require_space

    writable = box.writable_size()
    # A research environment is gigabytes: refused before the commit, not halfway through it.
    require_space(
        box.free_bytes(),
        int(writable * SNAPSHOT_FACTOR),
        f"the final-state snapshot of {case.id}",
        "the image store",
    )
    started = time.monotonic()
    image = box.snapshot(f"{case.id}-final")
    return FinalState(
        case_id=case.id,
        image=image,
        source=source,
        snapshot_seconds=round(time.monotonic() - started, 3),
        writable_bytes=writable,
        report_file=report_file,
    )


def report_path(case_dir: CaseDir, state: FinalState) -> Path | None:
    return case_dir.root / state.report_file if state.report_file else None
