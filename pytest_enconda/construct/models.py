"""File formats of ``pytest-enconda construct``: injected errors, their labels, the report.

An injected error is a *minimal edit* of the original README (one or two lines replaced, or two
lines swapped) and its label in EnConda-Bench's golden schema (type, description, candidate
fixes, golden answer). Edits address whole lines of the original README, so errors on different
lines compose into one README (the levels) and each can be undone alone (the repair check).
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..cases.sidecar import ABSENT_FILES_KEPT
from ..error_types import ERROR_TYPES

__all__ = [
    "CONSTRUCT_TYPES",
    "ConstructReport",
    "Injection",
    "InstanceRecord",
    "LineEdit",
    "RepoOutcome",
    "Validation",
    "apply_edits",
]

# The types EnConda-Bench's release injects (E3 and E5 are not used there).
CONSTRUCT_TYPES = ("E1", "E2", "E4", "E6", "E7", "E8")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LineEdit(_Strict):
    """Line ``line`` (0-based, of the original README) reads ``new`` instead of ``old``."""

    line: int = Field(ge=0)
    old: str
    new: str

    @field_validator("old", "new")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if "\n" in value or "\r" in value:
            raise ValueError("expected one line, got text with a line break")
        return value


class ErrorLabel(_Strict):
    """EnConda-Bench's golden error (``README.json`` ``errors[]``), field names as released."""

    error_type: str
    error_description: str = Field(min_length=1)
    correction_candidates: list[str] = Field(default_factory=list, max_length=10)
    golden_answer: str = Field(min_length=1)

    @field_validator("error_type")
    @classmethod
    def _type(cls, value: str) -> str:
        if value not in CONSTRUCT_TYPES or value not in ERROR_TYPES:
            raise ValueError(f"expected one of {', '.join(CONSTRUCT_TYPES)}, got {value!r}")
        return value

    @model_validator(mode="after")
    def _golden_among_candidates(self) -> ErrorLabel:
        if self.golden_answer not in self.correction_candidates:
            raise ValueError("golden_answer: expected it among correction_candidates")
        return self


class Injection(_Strict):
    """One injected error: the edit, its label, and who made it."""

    repository: str = Field(description="owner/name")
    injector: str = Field(description="'rules' or 'llm:<model>'")
    rule: str = Field(description="which rule (or model) made the edit")
    edits: list[LineEdit] = Field(min_length=1, max_length=2)
    label: ErrorLabel

    @model_validator(mode="after")
    def _distinct_lines(self) -> Injection:
        lines = [edit.line for edit in self.edits]
        if len(set(lines)) != len(lines):
            raise ValueError("edits: expected distinct lines")
        if all(edit.old == edit.new for edit in self.edits):
            raise ValueError("edits: expected at least one line to change")
        return self

    @property
    def error_type(self) -> str:
        return self.label.error_type

    @property
    def lines(self) -> frozenset[int]:
        return frozenset(edit.line for edit in self.edits)

    @property
    def key(self) -> str:
        """A stable id of the edit: the same edit is the same error, whoever made it."""
        text = "|".join(f"{e.line}:{e.old}->{e.new}" for e in sorted(self.edits, key=_line))
        return hashlib.sha256(f"{self.error_type}|{text}".encode()).hexdigest()[:12]


def _line(edit: LineEdit) -> int:
    return edit.line


def apply_edits(original: str, edits: list[LineEdit]) -> str:
    """The README with ``edits`` applied; each edit's ``old`` must be the original line."""
    lines = original.split("\n")
    for edit in edits:
        if edit.line >= len(lines) or lines[edit.line] != edit.old:
            found = lines[edit.line] if edit.line < len(lines) else "<past the end>"
            raise ValueError(f"edit of line {edit.line + 1}: expected {edit.old!r}, got {found!r}")
    changed = list(lines)
    seen: set[int] = set()
    for edit in edits:
        if edit.line in seen:
            raise ValueError(f"line {edit.line + 1} is edited twice")
        seen.add(edit.line)
        changed[edit.line] = edit.new
    return "\n".join(changed)


Verdict = Literal["effective", "documentation-only", "ineffective", "unvalidated"]


class Validation(_Strict):
    """What running the README literally showed for one README (single error or merged)."""

    verdict: Verdict
    setup_exit: int | None = None
    failed_step: int | None = Field(
        default=None, description="0-based index of the README command the setup stopped at"
    )
    failed_command: str = ""
    tests_failed: list[str] = Field(
        default_factory=list, description="PASS-set tests that did not pass"
    )
    repair: Literal["passes", "fails", "not-checked"] = Field(
        default="not-checked",
        description="with the golden fix applied, setup gets past the erroneous step",
    )
    detail: str = ""


class InstanceRecord(_Strict):
    """One written (or dropped) instance of the constructed set."""

    instance: str = Field(description="the instance folder name")
    repository: str
    level: int
    error_keys: list[str]
    error_types: list[str]
    kept: bool
    reason: str = Field(default="", description="why dropped (empty when kept)")
    validation: Validation | None = None


class RepoOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    repository: str
    revision: str
    accepted: bool
    reason: str = Field(default="", description="why the repository was refused")
    upstream_revision: str = Field(
        default="", description="the dataset's pinned revision the snapshot was made from"
    )
    prepared: list[str] = Field(
        default_factory=list, description="README rewrites that adapt it to the checkout"
    )
    absent_files: list[str] = Field(
        default_factory=list,
        description="files whose contents the upstream snapshot lacked (the first "
        f"{ABSENT_FILES_KEPT}, sorted): the construct snapshot, its reference and its instances "
        "go without them",
    )
    absent_count: int = Field(default=0, ge=0, description="how many files it lacked in all")
    injected: list[Injection] = Field(default_factory=list)
    dropped: dict[str, str] = Field(
        default_factory=dict, description="injection key -> why it was dropped"
    )
    validations: dict[str, Validation] = Field(
        default_factory=dict, description="injection key -> single-error validation"
    )
    instances: list[InstanceRecord] = Field(default_factory=list)
    failed_proposals: list[str] = Field(
        default_factory=list, description="model answers that were not a valid injection"
    )
    notes: list[str] = Field(default_factory=list, description="levels that could not be made")
    not_injected: dict[str, str] = Field(
        default_factory=dict,
        description="error type -> why none of it was injected (what its rules need and the "
        "README lacks)",
    )


class ConstructReport(BaseModel):
    """``construct-report.json``: every repository, injection and instance, kept or dropped."""

    model_config = ConfigDict(extra="forbid")

    format: int = 1
    harness_version: str = ""
    options: dict[str, object] = Field(default_factory=dict)
    repositories: dict[str, RepoOutcome] = Field(default_factory=dict)

    def kept_share(self) -> dict[str, dict[str, dict[str, int]]]:
        """injector -> type -> {'injected', 'kept'} over single errors."""
        table: dict[str, dict[str, dict[str, int]]] = {}
        for outcome in self.repositories.values():
            for injection in outcome.injected:
                row = table.setdefault(injection.injector, {}).setdefault(
                    injection.error_type, {"injected": 0, "kept": 0}
                )
                row["injected"] += 1
                if injection.key not in outcome.dropped:
                    row["kept"] += 1
        return table
