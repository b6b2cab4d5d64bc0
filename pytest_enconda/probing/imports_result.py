"""C0's answer: the import scan and pyright's output read into ``ImportsResult``.

Pure reading, no process is started: the host run and the container command of ``imports``
both end here, and so do the tests of every malformed output.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import HarnessError
from ..textio import JsonError, parse_json

MISSING_RULES = frozenset({"reportMissingImports", "reportMissingModuleSource"})
# Pyright's exit status: 0 no errors, 1 errors reported; 2 fatal, 3 configuration, 4 arguments.
_ANSWERED = (0, 1)
_IMPORT_NAME = re.compile(r'^Import "([^"]+)"')
# The container command's own status when the reported interpreter does not start.
INTERPRETER_FAILED = 97
# coreutils' ``timeout`` status, which the container command runs pyright under.
TIMEOUT_EXIT = 124

ErrorKind = Literal["scan", "interpreter", "pyright", "timeout"]


class ImportsError(HarnessError):
    """C0 could not be measured; the message says which half failed and why."""


class ImportScan(BaseModel):
    """What ``probes/imports_scan.py`` prints."""

    model_config = ConfigDict(extra="allow")

    total: int = Field(ge=0)
    names: list[str]
    files: int = Field(ge=0)
    paths: list[str] = Field(default_factory=list, description="scanned files, repo-relative")
    unparsable: int = Field(ge=0)
    unparsable_files: list[str] = Field(default_factory=list)
    source: str | None = Field(default=None, description="'git' (tracked files) or 'walk'")
    python: str | None = Field(default=None, description="the scanning interpreter's version")
    error: str | None = None


class PyrightReport(BaseModel):
    """What one pyright run said about imports."""

    version: str | None = None
    missing: list[str] = Field(default_factory=list, description="top-level names, sorted")
    missing_imports: list[str] = Field(
        default_factory=list, description="the full dotted names pyright reported, sorted"
    )
    files_analyzed: int | None = None
    exit_code: int | None = None
    duration: float | None = None
    error: str | None = None
    error_kind: ErrorKind | None = None


class ImportsResult(BaseModel):
    """C0 of one environment: ``missing_count`` of ``total`` names do not resolve."""

    total: int
    names: list[str]
    missing: list[str]
    missing_count: int
    missing_imports: list[str] = Field(default_factory=list)
    outside_scan: list[str] = Field(
        default_factory=list,
        description="missing names the scan did not see (expected empty: both read the same files)",
    )
    files: int = 0
    unparsable: int = 0
    unparsable_files: list[str] = Field(default_factory=list)
    pyright_version: str | None = None
    python: str | None = Field(default=None, description="the interpreter pyright resolved with")
    repo: str | None = None
    duration: float | None = Field(default=None, description="pyright's wall time, seconds")
    error: str | None = Field(default=None, description="set when C0 could not be measured")
    error_kind: ErrorKind | None = None

    @property
    def ok(self) -> bool:
        """Measured, and every import resolves."""
        return self.error is None and self.missing_count == 0

    def summary(self) -> str:
        if self.error is not None:
            return f"C0 not measured ({self.error_kind}): {self.error}"
        shown = ", ".join(self.missing[:10]) + (" …" if len(self.missing) > 10 else "")
        return f"{self.missing_count}/{self.total} imports missing" + (
            f": {shown}" if self.missing else ""
        )


# ----------------------------------------------------------------------------- parsing


def parse_scan(document: dict[str, Any] | str, *, source: str = "imports_scan.py") -> ImportScan:
    """The scan's JSON, checked; raises ``ImportsError`` naming ``source`` and the bad field."""
    if isinstance(document, str):
        try:
            document = parse_json(document)
        except JsonError as exc:
            raise ImportsError(
                f"{source}: not a JSON document ({exc.detail}): {document[:300]!r}"
            ) from None
    if not isinstance(document, dict):
        raise ImportsError(f"{source}: expected a JSON object, got {type(document).__name__}")
    if document.get("error"):
        raise ImportsError(f"{source}: the scan failed: {document['error']}")
    try:
        return ImportScan.model_validate(document)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors()[:5]
        )
        raise ImportsError(f"{source}: not an import scan: {problems}") from None


def _json_document(output: str) -> Any:
    """Pyright's JSON (or our compact one), even when a warning shares the stream."""
    text = output.strip()
    try:
        return parse_json(text)
    except JsonError:
        pass
    decoder = json.JSONDecoder()
    # Pyright pretty-prints (its document starts with a line holding only "{"); the compact
    # document is one line starting with '{"enconda_compact"'.
    for match in re.finditer(r'(?m)^\{(?:\s*$|"enconda_compact")', text):
        try:
            document, _ = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):  # ValueError: also int()'s digit limit
            continue
        if isinstance(document, dict) and (
            "generalDiagnostics" in document or "enconda_compact" in document
        ):
            return document
    raise ValueError("no pyright JSON document in its output")


def parse_pyright_output(
    output: str,
    exit_code: int | None,
    *,
    files: list[str] | None = None,
    duration: float | None = None,
) -> PyrightReport:
    """Missing top-level names from pyright's ``--outputjson`` (or the compact document of
    ``container_pyright``'s command), or the reason there are none.

    ``files``: absolute paths of the scanned files; diagnostics naming another file are not
    counted.
    """
    if exit_code == INTERPRETER_FAILED:
        return PyrightReport(
            exit_code=exit_code,
            duration=duration,
            error=f"the interpreter does not run: {tail(output)}",
            error_kind="interpreter",
        )
    if exit_code is None or exit_code == TIMEOUT_EXIT:
        return PyrightReport(
            duration=duration, error=f"pyright timed out: {tail(output)}", error_kind="timeout"
        )
    if exit_code not in _ANSWERED:
        return PyrightReport(
            exit_code=exit_code,
            duration=duration,
            error=f"pyright exited with {exit_code}: {tail(output)}",
            error_kind="pyright",
        )

    def failed(reason: str, version: Any = None) -> PyrightReport:
        return PyrightReport(
            exit_code=exit_code,
            duration=duration,
            version=version if isinstance(version, str) else None,
            error=reason,
            error_kind="pyright",
        )

    try:
        document = _json_document(output)
    except ValueError as exc:
        return failed(f"pyright's output is not its JSON ({exc}): {tail(output)}")
    version = document.get("version")
    if "enconda_compact" in document:
        if document.get("error"):
            return failed(f"pyright's output is not its JSON: {document['error']}", version)
        dotted, unreadable = document.get("missing"), document.get("unreadable")
        if not isinstance(dotted, list) or not isinstance(unreadable, list):
            return failed(f"the compact document lacks 'missing'/'unreadable': {tail(output)}")
        messages: list[str] = [str(m) for m in unreadable]
        full = {str(name) for name in dotted}
        analyzed = document.get("filesAnalyzed")
    else:
        diagnostics = document.get("generalDiagnostics")
        if not isinstance(diagnostics, list):
            return failed(f"pyright's 'generalDiagnostics' is not a list: {tail(output)}")
        wanted = {os.path.normpath(path) for path in files} if files is not None else None
        full, messages = set(), []
        for diagnostic in diagnostics:
            if not isinstance(diagnostic, dict) or diagnostic.get("rule") not in MISSING_RULES:
                continue
            file = diagnostic.get("file")
            elsewhere = isinstance(file, str) and os.path.normpath(file) not in (wanted or ())
            if wanted is not None and elsewhere:
                continue
            message = str(diagnostic.get("message", ""))
            match = _IMPORT_NAME.match(message)
            if match is None:
                messages.append(message[:200])
            else:
                full.add(match.group(1))
        summary = document.get("summary")
        analyzed = summary.get("filesAnalyzed") if isinstance(summary, dict) else None
    if messages:
        return failed(
            f"cannot read the module name from pyright's message {messages[0]!r}", version
        )
    absolute = sorted(name for name in full if not name.startswith("."))
    return PyrightReport(
        version=version if isinstance(version, str) else None,
        missing=sorted({name.split(".")[0] for name in absolute}),
        missing_imports=absolute,
        files_analyzed=analyzed if isinstance(analyzed, int) else None,
        exit_code=exit_code,
        duration=duration,
    )


def imports_result(
    scan: ImportScan,
    pyright: PyrightReport,
    *,
    python: str | None = None,
    repo: str | None = None,
) -> ImportsResult:
    """C0 from the two halves. A pyright error stays an error: ``missing`` is then empty but
    the result says it was not measured (``error``), never that nothing is missing."""
    return ImportsResult(
        total=scan.total,
        names=sorted(scan.names),
        outside_scan=sorted(set(pyright.missing) - set(scan.names)),
        missing=pyright.missing,
        missing_count=len(pyright.missing),
        missing_imports=pyright.missing_imports,
        files=scan.files,
        unparsable=scan.unparsable,
        unparsable_files=scan.unparsable_files,
        pyright_version=pyright.version,
        python=python,
        repo=repo,
        duration=pyright.duration,
        error=pyright.error,
        error_kind=pyright.error_kind,
    )


def tail(text: str, limit: int = 600) -> str:
    text = text.strip()
    return text if len(text) <= limit else "…" + text[-limit:]
