"""What an import could not read (problems) and what it read with a caveat (notes), named by
file: both dataset importers report through one ``ImportReport``."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict


class ImportProblem(BaseModel):
    """One thing the importer could not read (or, as a note, had to normalise)."""

    model_config = ConfigDict(frozen=True)

    file: str
    reason: str


class ImportReport:
    """What an import could not read (problems) and what it read with a caveat (notes)."""

    def __init__(self) -> None:
        self.problems: list[ImportProblem] = []
        self.notes: list[ImportProblem] = []

    def problem(self, file: Path | str, reason: str) -> None:
        self.problems.append(ImportProblem(file=str(file), reason=reason))

    def note(self, file: Path | str, reason: str) -> None:
        self.notes.append(ImportProblem(file=str(file), reason=reason))
