"""The label audit's files: ``audit.json``, ``audit.md`` and ``verified-subset.txt``.

``pytest-enconda audit`` writes them (``write_audit``; the markdown is ``render_markdown``, kept
here with the other renderers); ``--subset`` reads a subset back (``read_subset``), or finds the
audit's list beside a ``--cases`` dataset (``find_subset``). The audit itself, what each flag
means and which instances carry it, is ``cases.audit``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .. import textio
from ..cases.audit import ABSENT, DUPLICATE, FLAGS, SAME_DUPLICATE, UNVERIFIED, AuditReport
from ..error_types import ERROR_TYPES
from .label_noise import LabelNoise
from .label_noise import render_markdown as render_noise

__all__ = [
    "AUDIT_DIR",
    "AUDIT_JSON",
    "AUDIT_MD",
    "SUBSET_TXT",
    "find_subset",
    "read_subset",
    "render_markdown",
    "write_audit",
]

AUDIT_DIR = "enconda-audit"
AUDIT_JSON = "audit.json"
AUDIT_MD = "audit.md"
NOISE_JSON = "label-noise.json"
SUBSET_TXT = "verified-subset.txt"


def render_markdown(report: AuditReport, examples: int = 5) -> str:
    lines = [
        f"# Label audit of {report.dataset or 'the dataset'}",
        "",
        f"{report.instances} instances, {report.golden_errors} golden errors; "
        f"verified subset (no flag of {', '.join(report.grading_flags)}): "
        f"**{len(report.verified_subset)}** instances.",
        "",
        "| flag | instances | matters for grading | meaning |",
        "| --- | ---: | --- | --- |",
    ]
    for flag in FLAGS:
        grading = "yes" if flag in report.grading_flags else "no"
        meaning = report.flag_meanings[flag]
        lines.append(f"| `{flag}` | {report.counts.get(flag, 0)} | {grading} | {meaning} |")
    lines += ["", "Golden errors per type (see audit.json for what each row counts):", ""]
    lines.append("| | " + " | ".join(ERROR_TYPES) + " | total |")
    lines.append("| --- |" + " ---: |" * (len(ERROR_TYPES) + 1))
    for name, row in report.errors_by_type.items():
        cells = [str(row.get(error_type, 0)) for error_type in ERROR_TYPES]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {sum(row.values())} |")
    lines += ["", "Evidence of golden errors in the README text:", ""]
    lines += [f"- {kind}: {count}" for kind, count in report.evidence.items()]
    for flag in FLAGS:
        flagged = [record for record in report.records if flag in record.flags]
        if not flagged:
            continue
        lines += ["", f"## `{flag}` (first {min(examples, len(flagged))} of {len(flagged)})", ""]
        for record in flagged[:examples]:
            lines.append(f"- `{record.case_id}` ({', '.join(record.error_types) or 'no errors'})")
            if flag == DUPLICATE:
                lines.append(f"  - same README, other labels: {', '.join(record.duplicate_of)}")
            if flag == SAME_DUPLICATE:
                lines.append(f"  - same README and labels: {', '.join(record.same_as)}")
            if flag == UNVERIFIED:
                lines.append(f"  - {record.reference_reason}")
            if flag == ABSENT:
                for error in record.errors:
                    if error.evidence == "absent":
                        quoted = ", ".join(f"`{token}`" for token in error.error_tokens)
                        lines.append(f"  - error {error.index} ({error.error_type}): {quoted}")
    return "\n".join(lines) + "\n"


def write_audit(report: AuditReport, out_dir: Path, noise: LabelNoise | None = None) -> list[Path]:
    """``audit.json``, ``audit.md`` and ``verified-subset.txt`` (one case id a line); with
    ``noise``, ``label-noise.json`` and its section of ``audit.md``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / AUDIT_JSON
    json_path.write_text(report.model_dump_json(indent=1) + "\n", encoding="utf-8")
    md_path = out_dir / AUDIT_MD
    text = render_markdown(report)
    written = [json_path, md_path]
    if noise is not None:
        text += "\n" + render_noise(noise)
        noise_path = out_dir / NOISE_JSON
        noise_path.write_text(noise.model_dump_json(indent=1) + "\n", encoding="utf-8")
        written.append(noise_path)
    md_path.write_text(text, encoding="utf-8")
    subset_path = out_dir / SUBSET_TXT
    header = (
        f"# verified subset of {report.dataset}: {len(report.verified_subset)} of "
        f"{report.instances} instances (none of: {', '.join(report.grading_flags)})\n"
    )
    subset_path.write_text(header + "".join(f"{i}\n" for i in report.verified_subset), "utf-8")
    return [*written, subset_path]


# A subset names case ids, one a line: tens of thousands fit in a few megabytes.
MAX_SUBSET_BYTES = 16 << 20


def read_subset(path: Path) -> frozenset[str]:
    """Case ids of a subset file: ``verified-subset.txt`` (one id a line, ``#`` comments) or
    an ``audit.json`` (its ``verified_subset``). ``ValueError`` names the file and the fault."""
    try:
        # --subset may name a FIFO or /dev/zero: bounded, regular files only.
        text = textio.read_text(Path(path), MAX_SUBSET_BYTES)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read the subset file: {exc}") from None
    if text.lstrip().startswith("{"):
        try:
            data = textio.parse_json(text)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
        ids = data.get("verified_subset") if isinstance(data, dict) else None
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise ValueError(f"{path}: verified_subset: expected a list of case ids")
        return frozenset(ids)
    return frozenset(
        line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


def find_subset(paths: Iterable[Path]) -> Path | None:
    """``enconda-audit/verified-subset.txt`` beside one of the collected datasets (the folder
    given or up to two levels above it, as ``--cases`` accepts inner folders)."""
    for path in paths:
        folder = Path(path)
        for candidate in (folder, folder.parent, folder.parent.parent):
            subset = candidate / AUDIT_DIR / SUBSET_TXT
            if subset.is_file():
                return subset
    return None
