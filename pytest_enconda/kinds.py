"""Task kinds: what a case's ``suite`` names, and what a case of that kind asks of its file and
of its agents. Graded items (``aspects.ASPECTS``) and pyramid stages (``stages.STAGES``) name the
kind they belong to; ``aspects.aspect_names(kind)`` and ``aspects.stage_names(kind)`` list them.

In the base layer, standard library only: the case format (``cases.models``) validates a case
against its kind, and the agents read which output files their kind asks for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .registry import Registry

# The contract's file names as agents/output.py spells them (that module is above this layer).
_REPORT = "report.json"
_TEST_COMMAND = "test_command"


@dataclass(frozen=True)
class TaskPrompt:
    """What a kind's prompts ask beyond the parts every kind shares (``agents/prompts.py`` adds
    the task line, the profile and the rules).

    ``string.Template`` text (a README's braces are never near it): ``$output_dir``, ``$setup``,
    ``$report``, ``$diagnosis``, ``$test_command``, ``$workdir``, ``$readme_name``,
    ``$report_keys`` (the self-report's keys) and ``$error_types`` (one line per type) are
    filled in.
    """

    title: str
    """The heading of the instance prompt's section on what to do and to leave behind."""
    body: str
    shows_readme: bool = False
    """The README follows the section, under a heading of its own."""
    zero_shot_answer: str = ""
    """The zero-shot agent's "Your answer" section."""


def _resolve(ref: Callable[..., Any] | str) -> Callable[..., Any]:
    """A callable, or ``"module:function"`` named by a kind whose code sits above this layer."""
    if callable(ref):
        return ref
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class ReportSection:
    """A kind's section of a run's summary: what it adds to ``summary.json`` and what
    ``report.html`` shows of it (``report/review.py`` shows each registered kind's, in turn).

    Callables, or ``"module:function"`` for a built-in kind, whose renderers live in the report
    layer above this one (``report/kind_sections.py``).
    """

    html: Callable[[Mapping[str, Any]], list[str]] | str
    """``(summary) -> HTML parts``: the section's heading and tables; none where the run has
    nothing of the kind (a run without its cases)."""
    key: str = ""
    """Where ``summarize``'s value goes in ``summary.json``: the kind's name unless given."""
    summarize: Callable[[Any], Any] | str | None = None
    """``(records: report.runrecords.RunRecords) -> JSON value or None``: the kind's numbers
    over the run's records. None for a kind whose numbers the summary has already (diagnosis's
    main table, the research pyramid over the stages)."""

    def render(self, summary: Mapping[str, Any]) -> list[str]:
        return list(_resolve(self.html)(summary))

    def summary_of(self, records: Any) -> Any:
        return None if self.summarize is None else _resolve(self.summarize)(records)


@dataclass(frozen=True)
class TaskKind:
    """A kind of case (``suite`` in ``case.toml``)."""

    name: str
    description: str = ""
    table: str | None = None
    """The ``case.toml`` table the kind needs (``[research]``, ``[aec]``), if any."""
    needs_readme: bool = True
    """Whether a case names a README file; without one the agent reads the repository's own."""
    needs_test_command: bool = False
    outputs: tuple[str, ...] = ("setup.sh",)
    """The agent's output-contract files in ``/enconda/output`` (agents/output.py)."""
    graded_by_environment: bool = False
    """Graded on the environment the setup builds: the oracle needs a golden setup."""
    setup_seconds: float | None = None
    """The kind's default setup budget, where the case does not give one."""
    prompt: TaskPrompt | None = None
    """What its prompts ask; without one, the prompt lists the ``outputs`` to write."""
    marker: str = ""
    """The pytest marker each of its items carries (``-m research``): its name unless given."""
    readme_has_injected_errors: bool = False
    """The README shown is the case's erroneous copy, so ``--readme-variant=original`` has an
    original to show instead (diagnosis)."""
    graded_by_probes: bool = False
    """Graded by the shipped pyramid probes on the environment's final state (research): the
    probes are collected for its cases, an agent acting in its container leaves its box behind
    as that state, and ``--python``/``--repo`` grade an existing environment against a case."""
    memory_bytes: int = 1 << 30
    """Memory one case asks of a cluster node (``--dispatch ray``): its build and probes."""
    report: ReportSection | None = None
    """Its section of the run's summary and of ``report.html``, if any."""

    def __post_init__(self) -> None:
        if not self.marker:
            object.__setattr__(self, "marker", self.name)
        if self.report is not None and not self.report.key:
            object.__setattr__(self, "report", replace(self.report, key=self.name))

    @property
    def writes_self_report(self) -> bool:
        """Its agent describes the environment it built (``report.json``) rather than
        diagnosing a README."""
        return _REPORT in self.outputs

    @property
    def asks_test_command(self) -> bool:
        """Its agent names the command that runs the repository's tests (AEC)."""
        return _TEST_COMMAND in self.outputs


# The instance prompt's section and the zero-shot answer of each built-in kind. AEC's agents are
# shown the diagnosis wording by the command and zero-shot agents (swe_agent has a template of
# its own, aec/prompt.py): kept as it was when the prompts moved onto the kinds.
DIAGNOSIS_PROMPT = TaskPrompt(
    title="The README (`$readme_name`) may contain injected errors",
    body="Each error is one of these types:\n"
    "$error_types"
    "\nFind every error in the README, fix the setup, and write to `$output_dir/` (create it):\n"
    '- `$diagnosis`: {"detected_errors": [{"error_type": "E1", "error_description": "what is '
    'wrong and where", "fix_suggestion": "the corrected command or step"}]}, one object per error '
    "found;\n"
    "- `$setup`: the complete, corrected bash script that sets up the environment in a fresh "
    "container (it is sourced in one `bash -eo pipefail` shell from `$workdir`; the tests run "
    "after it, with the variables it exported, an activated venv say).",
    shows_readme=True,
    zero_shot_answer="The README may contain injected errors, each of one of these types:\n"
    "$error_types"
    '\n\nAnswer with a fenced ```json block holding {"detected_errors": [{"error_type": "E1", '
    '"error_description": "...", "fix_suggestion": "..."}]} (one object per error), followed by a '
    "fenced ```bash block holding the complete, corrected setup script. Do not install the "
    "repository itself from a package index; do not modify its tests.",
)
RESEARCH_PROMPT = TaskPrompt(
    title="What to leave behind",
    body="Write to `$output_dir/` (create it):\n"
    "- `$setup`: the complete bash script that builds this environment from a fresh container "
    "(it is sourced in one `bash -eo pipefail` shell from `$workdir`; what it exports, an "
    "activated venv say, stays for the probes);\n"
    "- `$report`: a JSON object describing the environment you built, with the keys "
    "$report_keys.",
    zero_shot_answer="Answer with a fenced ```json block holding the self-report object with the "
    "keys $report_keys, followed by a fenced ```bash block holding the complete setup script.",
)

# The built-in kinds' sections, in report/kind_sections.py (the report layer, above this one).
_SECTIONS = "pytest_enconda.report.kind_sections"

TASK_KINDS: Registry[TaskKind] = Registry("task kind", "pytest_enconda.task_kinds")

TASK_KINDS.register(
    TaskKind(
        "diagnosis",
        "EnConda-Bench: find the README's injected errors",
        needs_test_command=True,
        outputs=("setup.sh", "diagnosis.json"),
        prompt=DIAGNOSIS_PROMPT,
        readme_has_injected_errors=True,
        report=ReportSection(html=f"{_SECTIONS}:diagnosis_html"),
    )
)
TASK_KINDS.register(
    TaskKind(
        "research",
        "ResearchEnvBench: the runtime pyramid, as probes",
        table="research",
        outputs=("setup.sh", "report.json"),
        graded_by_environment=True,
        # A research setup installs torch and friends: 1,154 s was seen for one install.
        setup_seconds=2400.0,
        prompt=RESEARCH_PROMPT,
        graded_by_probes=True,
        memory_bytes=4 << 30,
        report=ReportSection(html=f"{_SECTIONS}:pyramid_html"),
    )
)
TASK_KINDS.register(
    TaskKind(
        "aec",
        "automated environment configuration: set up any repository and run its tests",
        table="aec",
        needs_readme=False,
        outputs=("setup.sh", "test_command"),
        graded_by_environment=True,
        prompt=DIAGNOSIS_PROMPT,
        report=ReportSection(
            html=f"{_SECTIONS}:aec_html", summarize=f"{_SECTIONS}:aec_summary", key="aec"
        ),
    )
)


def kind_of(suite: object) -> TaskKind | None:
    """The registered kind named ``suite``, or None (a case file not yet validated)."""
    return TASK_KINDS.get(suite) if isinstance(suite, str) and suite in TASK_KINDS else None
