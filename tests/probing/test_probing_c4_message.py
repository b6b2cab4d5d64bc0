"""C4's message leads with the failing rank's error, not torchrun's ChildFailedError."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_enconda.probing.environment import ProbeRun
from pytest_enconda.probing.pyramid import failure_line
from pytest_enconda.stages.c4 import run_ddp

# What torchrun prints when rank 0 cannot import a package (shortened from a real run).
TORCHRUN_OUTPUT = """\
[rank0]: Traceback (most recent call last):
[rank0]:   File "/data/project/train.py", line 3, in <module>
[rank0]:     import einops
[rank0]: ModuleNotFoundError: No module named 'einops'
E0101 00:00:00.000 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1)
Traceback (most recent call last):
  File "/data/project/.venv/bin/torchrun", line 8, in <module>
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
"""


class _Environment:
    gpu_count = 0

    def run(self, command: str, **options: Any) -> ProbeRun:
        return ProbeRun(command=command, exit_code=1, output=TORCHRUN_OUTPUT, duration=2.0)


def test_the_root_cause_is_the_ranks_error() -> None:
    assert failure_line(TORCHRUN_OUTPUT) == "ModuleNotFoundError: No module named 'einops'"


def test_c4_message_leads_with_the_root_cause(tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin"))
    from casefactory import write_research_case

    from pytest_enconda.cases.loader import load_case

    case_dir = write_research_case(
        tmp_path,
        "ddp",
        research_extra='supports_multi_gpu = true\nddp_entry_point = "train.py"',
    )
    case = load_case(case_dir / "case.toml", [tmp_path / "cases"])
    result = run_ddp(_Environment(), case, ddp_cpu=True)  # type: ignore[arg-type]
    assert result.outcome == "failed"
    assert result.message.startswith("ModuleNotFoundError: No module named 'einops' (")
    assert "[cpu-gloo, 2 processes]" in result.message
