"""The case format: one folder per case with ``case.toml`` and the files it names.

Field names of the golden answer follow EnConda-Bench's released ``README.json``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from ..error_types import ErrorType
from ..repo.ci_services import CiService


def _known_suite(value: str) -> str:
    """A suite is a registered task kind (``kinds.TASK_KINDS``: diagnosis, research, aec, or
    a plugin's)."""
    from ..kinds import TASK_KINDS

    if value not in TASK_KINDS:
        raise ValueError(f"expected one of {', '.join(TASK_KINDS.names())}, got {value!r}")
    return value


Suite = Annotated[str, AfterValidator(_known_suite)]
# A case with this tag has no README of its own: the agent reads the repository's.
README_FROM_REPOSITORY = "readme:repository"

_LEVEL = re.compile(r"^(?:level)?\s*(\d+)$", re.IGNORECASE)


def parse_level(value: object) -> int:
    """EnConda-Bench writes ``"level3"``; our files write ``3``."""
    if isinstance(value, bool):
        raise ValueError("expected an integer or 'levelN'")
    if isinstance(value, int):
        return value
    match = _LEVEL.match(str(value).strip())
    if not match:
        raise ValueError(f"expected an integer or 'levelN', got {value!r}")
    return int(match.group(1))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# Real golden files list at most 14 errors; matching and judging grow with this count, so a
# file far beyond it is refused rather than allowed to take the machine's memory.
MAX_GOLDEN_ERRORS = 100
MAX_CORRECTION_CANDIDATES = 50


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty: a golden error needs a description to match")
    return value


NonBlank = Annotated[str, AfterValidator(_not_blank)]


def _not_blank_text(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


# Bounds of a case file's fields: far beyond them is a mistake or an attack, refused at load
# with the field named, rather than met later as a harness failure ("Argument list too long")
# or an agent's. A command runs as one ``sh -c`` argument, and is quoted into others: the
# kernel refuses a single argument over 128 KiB.
MAX_COMMAND_CHARS = 16 * 1024
MAX_TEXT_CHARS = 16 * 1024
MAX_TITLE_CHARS = 4 * 1024
MAX_PATH_CHARS = 4 * 1024
MAX_NAME_CHARS = 200
MAX_ID_CHARS = 1_000
MAX_TAGS = 100
# pytest's parametrised ids make long test names: a verified sidecar holds one of 11,457.
MAX_TEST_NAME_CHARS = 64 * 1024
MAX_LAYER_ITEMS = 500

# C0 controls but tab, newline and carriage return, and DEL: no command, path or test name has
# them. A NUL in a command is cut short by the shell (and refused by exec), so the oracle's
# items would fail and the agent would be blamed for the case file's fault.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# ``\ud800``-``\udfff`` alone: JSON may spell them, UTF-8 cannot encode them.
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _no_controls(value: str) -> str:
    found = _CONTROL.search(value) or _SURROGATE.search(value)
    if found is not None:
        char = found.group(0)
        what = "a NUL character" if char == "\x00" else f"the control character {char!r}"
        if _SURROGATE.match(char):
            what = f"a lone surrogate {char!r} (not text)"
        raise ValueError(f"must not contain {what} (at offset {found.start()})")
    return value


Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS), AfterValidator(_no_controls)]
Title = Annotated[str, Field(max_length=MAX_TITLE_CHARS), AfterValidator(_no_controls)]
PathText = Annotated[str, Field(max_length=MAX_PATH_CHARS), AfterValidator(_no_controls)]
Name = Annotated[str, Field(max_length=MAX_NAME_CHARS), AfterValidator(_no_controls)]
Command = Annotated[str, Field(max_length=MAX_COMMAND_CHARS), AfterValidator(_no_controls)]
NonBlankCommand = Annotated[Command, AfterValidator(_not_blank_text)]
NonBlankText = Annotated[Text, AfterValidator(_not_blank_text)]
TestName = Annotated[str, Field(max_length=MAX_TEST_NAME_CHARS), AfterValidator(_no_controls)]


class GoldenError(_Strict):
    error_type: ErrorType
    error_description: NonBlank
    correction_candidates: list[str] = Field(
        default_factory=list, max_length=MAX_CORRECTION_CANDIDATES
    )
    golden_answer: str


class GoldenAnswer(BaseModel):
    """EnConda-Bench's golden file; unknown keys (``readme``, ``repo_name``) are kept."""

    model_config = ConfigDict(extra="allow", frozen=True)

    errors: list[GoldenError] = Field(default_factory=list, max_length=MAX_GOLDEN_ERRORS)
    level: int | None = None

    @field_validator("level", mode="before")
    @classmethod
    def _level(cls, value: object) -> int | None:
        return None if value is None else parse_level(value)

    @model_validator(mode="after")
    def _distinct(self) -> GoldenAnswer:
        # A golden error listed twice can never be matched twice by one prediction: a correct
        # diagnosis would fail every aspect. That is the label's fault, refused at load.
        seen: dict[tuple[str, str], int] = {}
        for index, error in enumerate(self.errors):
            key = (error.error_type, " ".join(error.error_description.split()))
            if key in seen:
                raise ValueError(f"errors.{index}: the same error as errors.{seen[key]}")
            seen[key] = index
        return self

    @property
    def error_types(self) -> list[str]:
        return [error.error_type for error in self.errors]


class RepoSource(_Strict):
    """Where the repository comes from.

    ``folder``: a directory (relative to the case folder); ``git``: a local git repository at
    ``revision``; ``url``: a remote git URL at ``revision`` (consults ``--repo-mirror`` first).
    """

    kind: Literal["folder", "git", "url"]
    path: PathText | None = None
    url: PathText | None = None
    revision: Name | None = None

    @model_validator(mode="after")
    def _complete(self) -> RepoSource:
        if self.kind in ("folder", "git") and not self.path:
            raise ValueError(f"kind={self.kind!r} needs 'path'")
        if self.kind == "url" and not self.url:
            raise ValueError("kind='url' needs 'url'")
        if self.kind in ("git", "url") and not self.revision:
            raise ValueError(f"kind={self.kind!r} needs 'revision'")
        return self

    @property
    def name(self) -> str:
        """The repository as a run records it (its URL, else its path): the memory's leakage
        guard reads the project from it (``memory.normalise.project_key``)."""
        return str(self.url or self.path or "")


# A week: beyond it a budget is a typo, and ``inf`` or ``1e308`` overflow the item timeout.
MAX_SECONDS = 7 * 24 * 3600
# One second: no setup, test or agent finishes in less, so a smaller budget (0.001, or 1e-300,
# which the timeout machinery reads as "no limit") is a labelling fault, refused at load rather
# than graded as the agent's failure.
MIN_SECONDS = 1
# Strict: a budget written as a string or a boolean is a mistake, not a number.
PositiveSeconds = Annotated[
    float, Field(ge=MIN_SECONDS, le=MAX_SECONDS, strict=True, allow_inf_nan=False)
]


# A research setup installs torch and friends: 1,154 s was seen for one install under load.
RESEARCH_SETUP_SECONDS = 2400.0  # the research task kind's default (aspects.py)


# A plugin stage's budget key (``Stage.budget_field``): a stage's key in form, not a free name.
_STAGE_BUDGET = re.compile(r"^[a-z][a-z0-9_]{0,55}_seconds$")


class Budgets(_Strict):
    """The agent's, the setup's and the tests' budgets, and any pyramid stage's a plugin adds: a
    key named by a registered stage's ``budget_field`` (``c9_seconds = 500``). Whether such a
    stage is registered is checked at collection (``items.check_collectable``), where the
    plugins have all been loaded; here only its form and its seconds."""

    model_config = ConfigDict(extra="allow", frozen=True)
    # pydantic validates each extra key's value as this type; pyright sees the base's Any.
    __pydantic_extra__: dict[str, PositiveSeconds] = Field(init=False)  # pyright: ignore[reportIncompatibleVariableOverride]

    agent_seconds: PositiveSeconds = 1800
    setup_seconds: PositiveSeconds = 900
    test_seconds: PositiveSeconds = 600
    agent_steps: Annotated[int, Field(gt=0, le=100_000, strict=True)] = 60

    @model_validator(mode="after")
    def _stage_budget_keys(self) -> Budgets:
        for key in self.model_extra or {}:
            if not _STAGE_BUDGET.match(key):
                raise ValueError(
                    f"unknown budget {key!r}: expected agent_seconds, setup_seconds, "
                    "test_seconds, agent_steps, or a plugin stage's '<name>_seconds'"
                )
        return self

    def stage_seconds(self) -> dict[str, float]:
        """The plugin stages' budgets the case gives, by key."""
        return dict(self.model_extra or {})


class EnvironmentLayer(_Strict):
    """An optional image layer between the base and the task (system packages, tools)."""

    apt_packages: list[Name] = Field(default_factory=list, max_length=MAX_LAYER_ITEMS)
    run: list[Command] = Field(default_factory=list, max_length=MAX_LAYER_ITEMS)


_STAGE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")


def _stage_name(name: str) -> str:
    """A stage's name in form; whether such a stage is registered is checked at collection
    (``items.check_collectable``), where the registry's plugins have all been loaded."""
    if not _STAGE_NAME.match(name):
        raise ValueError(f"expected a pyramid stage name such as C2, got {name!r}")
    return name


PyramidStage = Annotated[str, AfterValidator(_stage_name)]
Framework = Literal["torch", "jax", "tensorflow"]


class ResearchSpec(_Strict):
    """A research case's runtime pyramid (ResearchEnvBench): entry points and applicability.

    Commands run from the repository root with the agent's reported interpreter first on
    ``PATH`` (``python`` is that interpreter). Each should take one step on a tiny synthetic
    batch.
    """

    entry_point: Command | None = Field(
        default=None,
        description="C1 (GPUs hidden) and C3 (GPU 0): e.g. 'python train.py --steps 1'",
    )
    ddp_entry_point: Command | None = Field(
        default=None,
        description="C4: the script and arguments given to 'torchrun --standalone "
        "--nproc_per_node=N'; it reads ENCONDA_DDP_BACKEND (nccl, or gloo in CPU mode)",
    )
    framework: Framework = "torch"
    supports_cpu: bool = True
    supports_single_gpu: bool = True
    supports_multi_gpu: bool = True
    skip_reasons: dict[PyramidStage, Text] = Field(
        default_factory=dict, description="why a stage does not apply (shown as its skip reason)"
    )
    c1_seconds: PositiveSeconds = 600
    c3_seconds: PositiveSeconds = 600
    c4_seconds: PositiveSeconds = 1200
    c0_seconds: PositiveSeconds = 600


AEC_TASK = (
    "configure the environment and install this project on an Ubuntu machine from source code "
    "and run test cases"
)


def _language(value: str) -> str:
    """A language hint an ecosystem answers to (lower case; aliases such as ``cpp`` become theirs):
    free text would not group in the report."""
    from ..ecosystems import canonical_language, languages

    language = canonical_language(value)
    if language is None:
        raise ValueError(f"expected one of {', '.join(languages())}, got {value!r}")
    return language


# A PASS set of a real repository has thousands of tests, not millions.
MAX_PASS_SET = 100_000


class AecReference(_Strict):
    """What a correct environment does: the test command a maintainer would run, and the tests
    that pass there (names as the runner's verbose log prints them, ``aec/testnames.py``)."""

    test_command: NonBlankCommand
    pass_set: list[TestName] = Field(
        default_factory=list,
        max_length=MAX_PASS_SET,
        description="tests that pass in the reference environment; empty: not measured",
    )

    @field_validator("pass_set")
    @classmethod
    def _distinct_tests(cls, value: list[str]) -> list[str]:
        seen = set()
        for index, name in enumerate(value):
            if not name.strip():
                raise ValueError(f"pass_set.{index}: a test name must not be empty")
            if name in seen:
                raise ValueError(f"pass_set.{index}: {name!r} is listed twice")
            seen.add(name)
        return value


class AecSpec(_Strict):
    """An AEC case: the agent sees only the repository and ``task``; nothing tells it the test
    command. ``language`` groups results in the report and may be given to the agent as a hint."""

    task: NonBlankText = AEC_TASK
    language: Annotated[Name, AfterValidator(_language)] | None = None
    reference: AecReference | None = None


class CaseSpec(_Strict):
    """What ``case.toml`` holds. Paths are relative to the case folder."""

    id: Annotated[
        str, Field(min_length=1, max_length=MAX_ID_CHARS, pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")
    ]
    suite: Suite
    title: Title = ""
    repository: RepoSource
    readme: PathText | None = Field(
        default=None,
        description="README shown to the agent (with injected errors); a task kind that needs "
        "none (aec) reads the repository's own",
    )
    readme_target: PathText = Field(
        default="README.md", description="where that README is placed inside the repository"
    )
    original_readme: PathText | None = None
    golden: PathText | None = Field(default=None, description="golden answer JSON (EnConda schema)")
    golden_setup: PathText | None = Field(default=None, description="correct setup shell script")
    test_command: Command | None = Field(
        default=None, description="Pass@1's test command (diagnosis cases need one)"
    )
    research: ResearchSpec | None = None
    aec: AecSpec | None = None
    base_image: Name = "bookworm-py3.11"
    environment: EnvironmentLayer | None = None
    budgets: Budgets = Field(default_factory=Budgets)
    tags: list[Name] = Field(default_factory=list, max_length=MAX_TAGS)

    @model_validator(mode="after")
    def _suite_fields(self) -> CaseSpec:
        """What the case's task kind asks of the file (``kinds.TaskKind``)."""
        from ..kinds import TASK_KINDS

        kind = TASK_KINDS.get(self.suite)
        if kind.needs_test_command and not self.test_command:
            raise ValueError(f"a {self.suite} case needs 'test_command'")
        if kind.needs_readme and self.readme is None:
            raise ValueError(f"a {self.suite} case needs 'readme' (the README the agent is shown)")
        for table in ("research", "aec"):
            given = getattr(self, table) is not None
            if kind.table == table and not given:
                if table == "aec":
                    # Every field has a default: an AEC case may leave the table out.
                    object.__setattr__(self, "aec", AecSpec())
                else:
                    raise ValueError(f"a {self.suite} case needs a [{table}] table")
            elif given and kind.table != table:
                raise ValueError(
                    f"a [{table}] table belongs to suite = {table!r}, not {self.suite!r}"
                )
        if kind.setup_seconds is not None and "setup_seconds" not in self.budgets.model_fields_set:
            # The diagnosis default (900 s) killed torch installs under load.
            budgets = self.budgets.model_copy(update={"setup_seconds": kind.setup_seconds})
            object.__setattr__(self, "budgets", budgets)  # frozen: set once, while validating
        return self

    def stage_budget(self, field: str) -> float | None:
        """The seconds the case gives the stage budget named ``field`` (``Stage.budget_field``):
        a ``[research]`` field for C0-C4, as the released cases write them, else a ``[budgets]``
        key a plugin's stage declares; None where the case gives none."""
        if self.research is not None and field in ResearchSpec.model_fields:
            return float(getattr(self.research, field))
        return self.budgets.stage_seconds().get(field)

    @field_validator("readme_target")
    @classmethod
    def _inside_repository(cls, value: str) -> str:
        parts = Path(value).parts
        if not parts or Path(value).is_absolute() or ".." in parts or "\\" in value:
            raise ValueError(
                f"expected a relative path inside the repository without '..', got {value!r}"
            )
        return value


class ExecutionReference(BaseModel):
    """Pass@1's ground truth for an imported instance, from the verification sidecar.

    Verified: the test command's result counts only on ``pass_set`` (the tests that passed twice
    in the reference environment); ``test_tools`` (pytest and plugins) are installed by the
    harness before it, with ``test_requirements`` (what only the tests import) but those named in
    ``runtime_requirements``.
    Unverified: the execution item is skipped with ``reason``.
    """

    model_config = ConfigDict(frozen=True)

    verified: bool
    reason: str = ""
    test_tools: tuple[str, ...] = ()
    test_requirements: tuple[str, ...] = ()
    runtime_requirements: tuple[str, ...] = ()
    services: tuple[CiService, ...] = Field(
        default=(), description="services the test step starts, as the reference's did"
    )
    pass_set: frozenset[str] = frozenset()
    # The test step's pip installs consider only packages uploaded before this time, as the
    # reference's did (PIP_UPLOADED_PRIOR_TO; empty: today's).
    packages_before: str = ""
    sidecar: str = Field(default="", description="the sidecar file it came from")
    trivial: bool = False  # an empty setup reached the PASS set (verify's null setup)
    # The reference setup's duration when verified: a shorter setup budget cannot be passed.
    setup_seconds: float | None = None
    # What verify's checkout said of each submodule (``sandbox.submodules``): the PASS set was
    # measured with those it had from the mirror.
    submodules: tuple[str, ...] = ()


class Case(BaseModel):
    """A case with its files read: what every later stage consumes."""

    model_config = ConfigDict(frozen=True)

    spec: CaseSpec
    case_dir: Path
    readme_text: str
    original_readme_text: str | None = None
    golden: GoldenAnswer = Field(default_factory=GoldenAnswer)
    golden_setup_text: str | None = None
    variant: Literal["erroneous", "original"] = "erroneous"
    reference: ExecutionReference | None = Field(
        default=None, description="imported instances: the verified PASS set, or why there is none"
    )

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def level(self) -> int:
        return len(self.golden.errors)

    @property
    def error_types(self) -> list[str]:
        return self.golden.error_types

    def keywords(self) -> set[str]:
        """What ``-k`` matches on besides the node name."""
        words = {self.spec.suite, f"level{self.level}", self.spec.id, *self.error_types}
        words.update(self.spec.tags)
        if self.spec.aec is not None and self.spec.aec.language:
            words.add(self.spec.aec.language)
        return words

    def with_repository_readme(self) -> Case:
        """The original variant read from the repository itself at its pinned revision: what a
        dataset without the original README file still has (the README before injection)."""
        tags = [*self.spec.tags, README_FROM_REPOSITORY]
        return self.model_copy(
            update={
                "spec": self.spec.model_copy(update={"tags": tags}),
                "readme_text": "",
                "golden": GoldenAnswer(errors=[], level=0),
                "variant": "original",
            }
        )

    def with_original_readme(self) -> Case:
        """The same case with its original README: no injected errors, so no golden errors."""
        if self.original_readme_text is None:
            raise ValueError(f"case {self.id} has no original_readme")
        return self.model_copy(
            update={
                "readme_text": self.original_readme_text,
                "golden": GoldenAnswer(errors=[], level=0),
                "variant": "original",
            }
        )
