"""The parsed options of a benchmark run, frozen into ``EncondaSettings``.

Options are declared in ``options.py``; this module (and pydantic) loads only when a benchmark
runs.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict

from .options import declared


class EncondaSettings(BaseModel):
    """Every option of a benchmark run; workers receive the same values as the controller."""

    model_config = ConfigDict(frozen=True)

    agent: str = "oracle"
    agent_options: dict[str, str] = {}
    model: str | None = None
    api_base: str | None = None
    max_cost: float | None = None
    model_price: tuple[float, float] | None = None
    judge_price: tuple[float, float] | None = None
    budget_scale: float = 1.0
    judge: str = "offline"
    judge_api_base: str | None = None
    judge_concurrency: int = 4
    run_dir: Path
    resume: bool = False
    cases: tuple[Path, ...] = ()
    predictions: Path | None = None
    verification: Path | None = None
    subset: Path | None = None
    repo_mirror: Path | None = None
    allow_path: tuple[Path, ...] = ()
    allow_import_problems: bool = False
    probes: tuple[Path, ...] = ()
    python: Path | None = None
    repo: Path | None = None
    report: Path | None = None
    ddp_cpu: bool = False
    exact_versions: bool = False
    readme_variant: Literal["erroneous", "original"] = "erroneous"
    backend: str | None = None
    network_mode: str = "bridge"
    ca_bundle: Path | None = None
    base_image: str | None = None
    image_registry: str | None = None
    gpus: str = "none"
    keep_containers: bool = False
    keep_snapshots: bool = False
    strip_proxy_credentials: bool = False
    memory: Path | None = None
    embedder: str | None = None
    embedding_api_base: str | None = None
    dispatch: str | None = None

    @property
    def backend_name(self) -> str:
        """The registered backend the run's cases run on: ``--backend``, else host for an
        existing environment, else Docker."""
        if self.backend is not None:
            return self.backend
        return "host" if self.python is not None else "docker"

    @property
    def agent_label(self) -> str:
        """Who built what is graded, as reports name it: with ``--python`` no agent ran."""
        if self.python is not None:
            return f"existing environment {self.python} (host backend)"
        return self.agent


# Options are declared in ``options.py`` (no pydantic there: it loads in every pytest run).


def takes_memory(agent: str) -> bool:
    """Whether the agent's options include a memory file (``--memory``)."""
    from .agents import registry

    try:
        model = getattr(registry.factory_of(agent), "config_model", None)
    except Exception:  # an entry point that does not import: it cannot take memory either
        return False
    return model is not None and "memory" in getattr(model, "model_fields", {})


def _check_backend(opt: Any) -> None:
    """An unknown ``--backend``, or one that does not fit ``--python``, stops the run here.
    Looked up now, not as the option is parsed: a conftest.py registers its backends later."""
    name: str | None = opt("backend")
    if name is None:
        return
    from .backends import BACKENDS

    try:
        record = BACKENDS.get(name)
    except KeyError as exc:
        raise pytest.UsageError(f"--backend: {exc.args[0]}") from None
    existing = opt("python") is not None
    if record.existing_environment and not existing:
        raise pytest.UsageError(
            f"--backend {name} grades an existing environment: give --python and --repo"
        )
    if existing and not record.existing_environment:
        raise pytest.UsageError(
            f"--python grades an existing environment, which --backend {name} does not take "
            "(leave --backend out, or use --backend host)"
        )


def _check_judge(opt: Any) -> None:
    """An unknown ``--judge`` name, or an argument its record refuses or needs, stops the run
    here, before any agent runs. Looked up now, not as the option is parsed: a conftest.py
    registers its judges later."""
    from .grading.judges import check_spec

    try:
        check_spec(str(opt("judge")))
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def _check_agent(agent: str, opt: Any) -> None:
    """A model-driven agent without ``--model``, or with options it rejects, stops the run here:
    nothing is collected and no container starts."""
    from .agents import registry
    from .agents.memory_options import embedder_options

    needs_model = registry.needs_model(agent)
    if needs_model is not None and not opt("model"):
        raise pytest.UsageError(f"--agent={agent} needs --model MODEL: {needs_model}")
    options: dict[str, Any] = dict(opt("agent_option"))
    if opt("model"):
        options["model"] = opt("model")
    if opt("api_base"):
        options["api_base"] = opt("api_base")
    if opt("memory") is not None:
        if not takes_memory(agent):
            raise pytest.UsageError(
                f"--memory: --agent={agent} takes no prior knowledge (agents that do: "
                f"{', '.join(name for name in registry.available() if takes_memory(name))})"
            )
        options["memory"] = str(opt("memory"))
        try:
            options.update(embedder_options(agent, opt("embedder"), opt("embedding_api_base")))
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
    try:
        registry.check_options(agent, **options)
    except KeyError as exc:
        raise pytest.UsageError(str(exc.args[0])) from None
    except (TypeError, ValueError) as exc:
        raise pytest.UsageError(str(exc)) from None


def default_run_dir(rootpath: Path, agent: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return rootpath / "reports" / f"{stamp}-{agent}"


def from_config(config: pytest.Config, run_dir: Path | None = None) -> EncondaSettings:
    """Build the settings; ``run_dir`` is given on xdist workers so all share the controller's."""
    opt = config.getoption
    resume: Path | None = opt("resume")
    agent = str(opt("agent"))  # declared with a default: always a name
    if run_dir is None:
        given: Path | None = resume or opt("run_dir")
        run_dir = given or default_run_dir(config.rootpath, agent)
    if (opt("python") is None) != (opt("repo") is None):
        raise pytest.UsageError("--python and --repo go together: the existing environment")
    if agent == "replay" and opt("predictions") is None:
        raise pytest.UsageError("--agent=replay needs --predictions PATH")
    _check_agent(agent, opt)
    _check_backend(opt)
    _check_judge(opt)
    # Built from the option table: an option is declared once (options.py) and arrives here
    # under its own name; only values whose shape differs from the parsed one are named below.
    values: dict[str, Any] = {dest: opt(dest) for dest in declared()}
    values["agent_options"] = dict(values.pop("agent_option"))
    values["run_dir"] = Path(run_dir).resolve()
    values["resume"] = resume is not None
    for many in ("cases", "allow_path", "probes"):
        values[many] = tuple(values[many])
    unknown = set(values) - set(EncondaSettings.model_fields)
    if unknown:  # a new option without its setting: a programming error, caught by the tests
        raise RuntimeError(f"options without a setting: {sorted(unknown)}")
    return EncondaSettings(**values)
