"""Command-line options, declared once, validated on parse, frozen into ``EncondaSettings``."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict

GROUP = "enconda"
_JUDGE = re.compile(r"^(offline|llm:.+|[A-Za-z_][\w.-]*)$")
_NETWORK_MODES = ("bridge", "host", "none")


class EncondaSettings(BaseModel):
    """Every option of a benchmark run; workers receive the same values as the controller."""

    model_config = ConfigDict(frozen=True)

    agent: str = "oracle"
    agent_options: dict[str, str] = {}
    model: str | None = None
    judge: str = "offline"
    judge_api_base: str | None = None
    judge_concurrency: int = 4
    run_dir: Path
    resume: bool = False
    cases: tuple[Path, ...] = ()
    predictions: Path | None = None
    repo_mirror: Path | None = None
    readme_variant: Literal["erroneous", "original"] = "erroneous"
    network_mode: str = "bridge"
    ca_bundle: Path | None = None
    base_image: str | None = None
    gpus: str = "none"
    keep_containers: bool = False


# --- option validators: argparse calls them, a UsageError stops pytest with the message ---


def _agent_name(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][\w.-]*", value):
        raise pytest.UsageError(f"--agent: expected an agent name, got {value!r}")
    from .agents.registry import available

    names = available()
    if value not in names:
        raise pytest.UsageError(f"--agent: unknown agent {value!r}; available: {', '.join(names)}")
    return value


def _key_value(value: str) -> tuple[str, str]:
    key, sep, val = value.partition("=")
    if not sep or not key:
        raise pytest.UsageError(f"--agent-option: expected KEY=VALUE, got {value!r}")
    return key, val


def _judge(value: str) -> str:
    if not _JUDGE.match(value):
        raise pytest.UsageError(f"--judge: expected 'offline' or 'llm:<model>', got {value!r}")
    return value


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise pytest.UsageError(f"expected a positive integer, got {value!r}")
    return number


def _existing_dir(value: str) -> Path:
    path = Path(value).expanduser()
    if not path.is_dir():
        raise pytest.UsageError(f"expected an existing directory, got {value!r}")
    return path.resolve()


def _existing_path(value: str) -> Path:
    path = Path(value).expanduser()
    if not path.exists():
        raise pytest.UsageError(f"no such file or directory: {value!r}")
    return path.resolve()


def _network_mode(value: str) -> str:
    if value not in _NETWORK_MODES and not value.startswith("container:"):
        raise pytest.UsageError(
            f"--network-mode: expected one of {', '.join(_NETWORK_MODES)}, got {value!r}"
        )
    return value


def _gpus(value: str) -> str:
    if value in ("none", "all") or (value.isdigit() and int(value) > 0):
        return value
    raise pytest.UsageError(f"--gpus: expected 'none', 'all' or a count, got {value!r}")


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup(GROUP, "pytest-enconda: benchmark agents at environment configuration")
    group.addoption(
        "--agent",
        type=_agent_name,
        default="oracle",
        help="agent to benchmark (built-ins: oracle, readme, replay; default: oracle)",
    )
    group.addoption(
        "--agent-option",
        type=_key_value,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="option passed to the agent (repeatable)",
    )
    group.addoption("--model", default=None, help="model name for LLM-driven agents (litellm)")
    group.addoption(
        "--judge",
        type=_judge,
        default="offline",
        help="judge of descriptions and fixes: offline (default) or llm:<model>",
    )
    group.addoption(
        "--judge-api-base",
        default=None,
        help="base URL of an OpenAI-compatible server for the llm judge",
    )
    group.addoption(
        "--judge-concurrency",
        type=_positive_int,
        default=4,
        help="parallel judge requests (default 4)",
    )
    group.addoption(
        "--run-dir",
        type=Path,
        default=None,
        help="where artifacts go (default reports/<UTC time>-<agent>/)",
    )
    group.addoption(
        "--resume",
        type=_existing_dir,
        default=None,
        metavar="RUN_DIR",
        help="continue a run: re-grade what is there, run only what is missing",
    )
    group.addoption(
        "--cases",
        type=_existing_path,
        action="append",
        default=[],
        help="collect a dataset in EnConda-Bench's released layout (repeatable)",
    )
    group.addoption(
        "--predictions",
        type=_existing_path,
        default=None,
        help="recorded predictions for --agent=replay",
    )
    group.addoption(
        "--repo-mirror",
        type=_existing_dir,
        default=None,
        help="directory of local clones consulted before any git URL",
    )
    group.addoption(
        "--readme-variant",
        choices=("erroneous", "original"),
        default="erroneous",
        help="show agents the README with injected errors (default) or the original",
    )
    group.addoption(
        "--network-mode",
        type=_network_mode,
        default="bridge",
        help="Docker network mode of task containers (default: bridge)",
    )
    group.addoption(
        "--ca-bundle",
        type=_existing_path,
        default=None,
        help="CA bundle installed into images (default: the host's)",
    )
    group.addoption(
        "--base-image",
        default=None,
        help="pullable image to use instead of a debootstrapped Debian root",
    )
    group.addoption(
        "--gpus",
        type=_gpus,
        default="none",
        help="GPUs given to task containers: none (default), all or a count",
    )
    group.addoption(
        "--keep-containers",
        action="store_true",
        default=False,
        help="do not remove task containers (debugging)",
    )


def default_run_dir(rootpath: Path, agent: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return rootpath / "reports" / f"{stamp}-{agent}"


def from_config(config: pytest.Config, run_dir: Path | None = None) -> EncondaSettings:
    """Build the settings; ``run_dir`` is given on xdist workers so all share the controller's."""
    opt = config.getoption
    resume: Path | None = opt("resume")
    agent: str = opt("agent")
    if run_dir is None:
        run_dir = resume or opt("run_dir") or default_run_dir(config.rootpath, agent)
    if agent == "replay" and opt("predictions") is None:
        raise pytest.UsageError("--agent=replay needs --predictions PATH")
    values: dict[str, Any] = {
        "agent": agent,
        "agent_options": dict(opt("agent_option")),
        "model": opt("model"),
        "judge": opt("judge"),
        "judge_api_base": opt("judge_api_base"),
        "judge_concurrency": opt("judge_concurrency"),
        "run_dir": Path(run_dir).resolve(),
        "resume": resume is not None,
        "cases": tuple(opt("cases")),
        "predictions": opt("predictions"),
        "repo_mirror": opt("repo_mirror"),
        "readme_variant": opt("readme_variant"),
        "network_mode": opt("network_mode"),
        "ca_bundle": opt("ca_bundle"),
        "base_image": opt("base_image"),
        "gpus": opt("gpus"),
        "keep_containers": opt("keep_containers"),
    }
    return EncondaSettings(**values)
