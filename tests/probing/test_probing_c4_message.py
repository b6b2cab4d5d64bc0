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
    def __init__(self, gpu_count: int = 0, exit_code: int = 1) -> None:
        self.gpu_count = gpu_count
        self.exit_code = exit_code
        self.options: dict[str, Any] = {}

    def run(self, command: str, **options: Any) -> ProbeRun:
        self.options = options
        output = TORCHRUN_OUTPUT if self.exit_code else "step 1 loss 5.5\n"
        return ProbeRun(command=command, exit_code=self.exit_code, output=output, duration=2.0)


def test_the_root_cause_is_the_ranks_error() -> None:
    assert failure_line(TORCHRUN_OUTPUT) == "ModuleNotFoundError: No module named 'einops'"


def _ddp_case(tmp_path: Path) -> Any:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin"))
    from casefactory import write_research_case

    from pytest_enconda.cases.loader import load_case

    case_dir = write_research_case(
        tmp_path,
        "ddp",
        research_extra='supports_multi_gpu = true\nddp_entry_point = "train.py"',
    )
    return load_case(case_dir / "case.toml", [tmp_path / "cases"])


def test_c4_message_leads_with_the_root_cause(tmp_path: Path) -> None:
    result = run_ddp(_Environment(), _ddp_case(tmp_path), ddp_cpu=True)  # type: ignore[arg-type]
    assert result.outcome == "failed"
    assert result.message.startswith("ModuleNotFoundError: No module named 'einops' (")
    assert "[cpu-gloo: 2 CPU processes on gloo, no GPU]" in result.message


def test_c4_says_where_it_ran_passed_or_failed(tmp_path: Path) -> None:
    case = _ddp_case(tmp_path)
    cpu = _Environment(exit_code=0)
    passed = run_ddp(cpu, case, ddp_cpu=True)  # type: ignore[arg-type]
    assert passed.outcome == "passed"
    assert passed.message.startswith("[cpu-gloo: 2 CPU processes on gloo, no GPU] ")
    assert (passed.numbers["backend"], passed.numbers["gpus_used"]) == ("gloo", 0)
    assert cpu.options["env"] == {"ENCONDA_DDP_BACKEND": "gloo"} and cpu.options["gpus"] == "none"
    gpus = _Environment(gpu_count=4, exit_code=0)
    on_gpus = run_ddp(gpus, case, ddp_cpu=True)  # type: ignore[arg-type]
    # Two or more GPUs: NCCL over all of them, --ddp-cpu or not.
    assert on_gpus.message.startswith("[gpu-nccl: 4 processes on 4 GPUs, nccl] ")
    assert "--nproc_per_node=4 " in on_gpus.message
    assert (on_gpus.numbers["backend"], on_gpus.numbers["gpus_used"]) == ("nccl", 4)
    assert gpus.options["env"] == {"ENCONDA_DDP_BACKEND": "nccl"} and gpus.options["gpus"] == "all"
    failed = run_ddp(_Environment(gpu_count=2), case, ddp_cpu=False)  # type: ignore[arg-type]
    assert "[gpu-nccl: 2 processes on 2 GPUs, nccl]" in failed.message
