"""Label audit of an imported EnConda-Bench dataset: which golden answers can be trusted.

Pure functions over the cases ``enconda_import.load_dataset`` returns (nothing is re-parsed).
Each instance gets zero or more *flags*:

``no_golden_errors``
    The golden file lists no errors (``"level0"``): generation failed, or the README is the
    original; either way there is nothing to diagnose and Pass@1 tests nothing injected.
``duplicate_readme``
    Its README, normalised (line endings, a byte-order mark, runs of whitespace), is identical
    to another instance's whose labels differ (the multiset of error types and golden answers).
    The same text cannot have two correct diagnoses, so at least one label is wrong; which one
    cannot be told from the text, so every instance of the group is flagged and the others are
    named in ``duplicate_of``.
``readme_unchanged``
    Its README is identical to the repository's original README (where the dataset ships one)
    while its golden file lists errors: nothing was injected.
``error_text_absent``
    A golden error names, in quotes or backticks, commands, paths or package names on the
    *erroneous* side, and none of them occurs in the README. The golden text describes the
    error, so the wrong token should be in the README; the fix's token may not be. Tokens of
    the description that also appear in the golden answer's fix are the fix's (``misses the
    `[all]` extra``), and so are what the golden answer adds; what it says to replace,
    change, remove or move is the erroneous side. An error whose quoted tokens are all on the
    fix side (an omission) is not flagged; one that quotes nothing checkable is counted as
    ``unchecked``. Quoted prose (``'file not found'``), exception names and code calls are not
    commands, paths or package names and are left out.
``documentation_only``
    Every golden error is documentation-only: none of its tokens occurs on a README command
    line, its golden answer is not a command, and no command of the README starts with the same
    program and subcommand as one it names. No execution can detect such an instance's errors.
``same_readme_same_labels``
    Its README and labels are identical to another instance's: a duplicate that counts twice.
``trivial_reference``
    Its verified reference's PASS set passes after an empty setup (``verify``'s null setup):
    its Pass@1 measures nothing of the agent's setup (reported apart in a run's summary).
``unverified_reference``
    The sidecar's record of its repository grades nothing (``reference_reason`` says why: a
    failed setup, a checkout proof that proves nothing, ...); its ``execution`` item is skipped.

The *verified subset* is the instances with none of ``GRADING_FLAGS``: the flags that make the
golden answer wrong or unreachable from the text (no errors, contradictory duplicates, nothing
injected, errors absent from the README). ``documentation_only`` and ``same_readme_same_labels``
are reported but do not remove an instance: the label is right, only what execution can see or
how often it counts is affected.

The report's files (``audit.json``, ``audit.md``, ``verified-subset.txt``) are written and read
back by ``report.audit_files``, beside the other renderers.

Recognising a command line is the README reader's job, which belongs to a later stage
(``agents.readme_commands``); callers pass it in as ``commands`` so this module imports
nothing after ``cases``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..error_types import ERROR_TYPES
from .models import Case, GoldenError

__all__ = [
    "FLAGS",
    "GRADING_FLAGS",
    "AuditReport",
    "CommandReader",
    "ErrorAudit",
    "InstanceAudit",
    "audit_cases",
]

# (text, filename) -> the shell commands of that text, in order.
CommandReader = Callable[[str, str], list[str]]

NO_ERRORS = "no_golden_errors"
DUPLICATE = "duplicate_readme"
UNCHANGED = "readme_unchanged"
ABSENT = "error_text_absent"
DOC_ONLY = "documentation_only"
SAME_DUPLICATE = "same_readme_same_labels"
TRIVIAL = "trivial_reference"
UNVERIFIED = "unverified_reference"
FLAGS: tuple[str, ...] = (
    NO_ERRORS, DUPLICATE, UNCHANGED, ABSENT, DOC_ONLY, SAME_DUPLICATE, TRIVIAL, UNVERIFIED
)  # fmt: skip
GRADING_FLAGS: frozenset[str] = frozenset({NO_ERRORS, DUPLICATE, UNCHANGED, ABSENT})
FLAG_MEANINGS = {
    NO_ERRORS: "the golden file lists no errors",
    DUPLICATE: "README identical (normalised) to another instance's with different labels",
    UNCHANGED: "README identical to the repository's original README, yet errors are listed",
    ABSENT: "a golden error's quoted erroneous commands/paths/package names are not in the README",
    DOC_ONLY: "every golden error is documentation-only (no README command line touched)",
    SAME_DUPLICATE: "README and labels identical to another instance's (counts twice)",
    TRIVIAL: "an empty setup passes its reference's PASS set (Pass@1 there is not the agent's)",
    UNVERIFIED: "the sidecar's record of its repository is unverified (Pass@1 is not graded)",
}

Evidence = Literal["present", "absent", "fix_only", "unchecked"]

# Quoted spans: ``rst``, `markdown`, 'single' and "double" quotes (not apostrophes in words).
_QUOTED = re.compile(
    r"``(?P<a>[^`]+?)``|`(?P<b>[^`\n]+?)`"
    r"|(?<![\w])'(?P<c>[^'\n]+?)'(?![\w])|\"(?P<d>[^\"\n]+?)\""
)
# "Replace/Change X with/to Y": X is the erroneous side, Y the fix (also the passive form).
# Two searches, not one pattern: a lazy gap after the verb, tried from every verb of a text
# with no "with" after it, rescanned the rest of the text each time.
_REPLACE_VERB = re.compile(
    r"\b(?:replac|chang|correct|renam|updat|modif|fix|switch|substitut)\w*\b", re.IGNORECASE
)
_REPLACE_WITH = re.compile(r"\b(?:with|to|into|by|for)\b", re.IGNORECASE)


def _replacement(text: str) -> tuple[str, str] | None:
    """(X, Y) of the first "replace X with Y" in ``text``. Only the first verb is tried: a
    later one has no "with" after it that the first has not."""
    verb = _REPLACE_VERB.search(text)
    if verb is None:
        return None
    word = _REPLACE_WITH.search(text, verb.end())
    if word is None:
        return None
    return text[verb.end() : word.start()], text[word.end() :]


# Verbs whose objects are in the README as it stands: removed, moved, reordered.
_IN_README_VERBS = re.compile(
    r"\b(?:remov|delet|drop|omit|strip|move|moving|reorder|swap|plac)\w*\b", re.IGNORECASE
)
_PACKAGE = re.compile(
    r"^[a-z0-9][a-z0-9._-]*(?:\[[\w,.\s-]+\])?(?:[<>=!~]=?[\w.*+-]+(?:,\s*[<>=!~]=?[\w.*+-]+)*)?$"
)
_EXCEPTION_NAME = re.compile(r"(?:error|exception|warning)$")
_FILE_SUFFIX = re.compile(r"\.[a-z][a-z0-9]{0,5}$")
_QUOTE_CHARS = re.compile(r"[\u2018\u2019\u201c\u201d\"]")
_WHITESPACE = re.compile(r"\s+")
_MISSING_BEFORE = re.compile(
    r"\b(?:missing|miss|misses|lacks?|lacking|omit\w*|without|forg[eo]t\w*|no longer)\b[^`'\"]*$",
    re.IGNORECASE,
)
_MISSING_AFTER = re.compile(
    r"^\W{0,3}(?:is|are|was|were|has been|have been)\s+(?:missing|omitted|removed|absent)"
    r"(?=\s*(?:[.,;:)!?]|$|from\b|in\b|entirely\b|altogether\b))",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9][a-z0-9._+-]*[a-z0-9]")


class ErrorAudit(BaseModel):
    """What the audit found for one golden error."""

    model_config = ConfigDict(frozen=True)

    index: int
    error_type: str
    evidence: Evidence = Field(
        description="present: an erroneous token is in the README; absent: none is; fix_only: "
        "only the fix's tokens are quoted (an omission); unchecked: nothing checkable is quoted"
    )
    error_tokens: list[str] = Field(default_factory=list)
    fix_tokens: list[str] = Field(default_factory=list)
    documentation_only: bool


class InstanceAudit(BaseModel):
    model_config = ConfigDict(frozen=True)

    case_id: str
    level: int
    error_types: list[str]
    flags: list[str] = Field(default_factory=list)
    duplicate_of: list[str] = Field(
        default_factory=list, description="instances with the same README and different labels"
    )
    same_as: list[str] = Field(
        default_factory=list, description="instances with the same README and the same labels"
    )
    errors: list[ErrorAudit] = Field(default_factory=list)
    reference_reason: str = Field(default="", description="why its reference is unverified")

    @property
    def verified(self) -> bool:
        return not GRADING_FLAGS.intersection(self.flags)


class AuditReport(BaseModel):
    """``audit.json``: counts per flag and per error type, the verified subset, every instance."""

    dataset: str
    harness_version: str = ""
    instances: int
    golden_errors: int
    flag_meanings: dict[str, str] = Field(default_factory=lambda: dict(FLAG_MEANINGS))
    grading_flags: list[str] = Field(default_factory=lambda: sorted(GRADING_FLAGS))
    counts: dict[str, int] = Field(description="instances carrying each flag")
    errors_by_type: dict[str, dict[str, int]] = Field(
        description="golden errors per type: 'all'; for each error-level flag (error_text_absent, "
        "documentation_only) the errors it applies to; for instance-level flags the errors of "
        "the flagged instances"
    )
    evidence: dict[str, int] = Field(description="golden errors per evidence kind")
    verified_subset: list[str]
    records: list[InstanceAudit]


# ----------------------------------------------------------------------------- normalising


def normalise_readme(text: str) -> str:
    """What two READMEs must share to count as identical: whitespace runs and line endings
    are layout; every other character (a missing space in ``-e.`` included) is content."""
    return _WHITESPACE.sub(" ", text.replace("\ufeff", "")).strip()


def _searchable(text: str) -> str:
    """Text for token look-up: Markdown escapes dropped, quote styles and case unified."""
    text = text.replace("\\\n", " ")
    text = re.sub(r"\\([_*\-\[\]`#.!])", r"\1", text)
    text = _QUOTE_CHARS.sub("'", text)
    return _WHITESPACE.sub(" ", text).strip().casefold()


def _plain(searchable: str) -> str:
    """Markup a quoted sentence leaves out: link targets, emphasis, inline code, HTML tags."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", searchable)
    text = re.sub(r"<[^>]{0,200}>", " ", text)
    text = re.sub(r"[*`]+", "", text)
    return _WHITESPACE.sub(" ", text).strip()


def _label_key(case: Case) -> tuple[tuple[str, str], ...]:
    return tuple(
        sorted((error.error_type, _searchable(error.golden_answer)) for error in case.golden.errors)
    )


# ----------------------------------------------------------------------------- tokens


class _Tokens:
    def __init__(self, commands: CommandReader) -> None:
        self._commands = commands
        self._is_command: dict[str, bool] = {}

    def is_command(self, text: str) -> bool:
        known = self._is_command.get(text)
        if known is None:
            # A fence without a language: the reader's content heuristic decides.
            known = bool(self._commands(f"```\n{text}\n```", "README.md"))
            self._is_command[text] = known
        return known

    def checkable(self, token: str) -> bool:
        """A command, a path or a package name (with extras or a version), not prose."""
        if "(" in token:  # a code call: arguments make exact look-up meaningless
            return False
        if " " not in token and ("/" in token or _FILE_SUFFIX.search(token)):
            return True
        if " " not in token:
            return bool(_PACKAGE.match(token)) and not _EXCEPTION_NAME.search(token)
        return "/" in token or self.is_command(token)

    def quoted(
        self, text: str, *, omitted: list[str] | None = None, sentences: bool = False
    ) -> list[str]:
        """Checkable quoted tokens; those the sentence says are missing go to ``omitted``.
        ``sentences``: quoted text of three words or more counts too (what a golden answer
        says to replace or remove is quoted from the README verbatim)."""
        out: list[str] = []
        for match in _QUOTED.finditer(text):
            value = next(group for group in match.groups() if group is not None)
            value = _searchable(value).strip(" .,;:'")
            value = value.removesuffix("...").removesuffix("\u2026").strip()
            verbatim = sentences and len(value.split()) >= 3 and "(" not in value
            if len(value) < 2 or value in out or not (verbatim or self.checkable(value)):
                continue
            if omitted is not None and _said_missing(text, match.start(), match.end()):
                omitted.append(value)
            else:
                out.append(value)
        return out

    def sides(self, error: GoldenError) -> tuple[list[str], list[str]]:
        """(erroneous tokens, fix tokens) of a golden error."""
        missing: list[str] = []
        described = self.quoted(error.error_description, omitted=missing)
        answer = error.golden_answer
        replace = _replacement(answer)
        if replace:
            wrong = self.quoted(replace[0], sentences=True)
            fix_text = _searchable(replace[1])
        elif _IN_README_VERBS.search(answer):
            wrong = self.quoted(answer, sentences=True)
            fix_text = ""
        else:
            wrong = []
            fix_text = _searchable(answer)
        error_side = [token for token in described if not _occurs(token, fix_text)]
        error_side += [token for token in wrong if token not in error_side]
        fix_side = [token for token in described if _occurs(token, fix_text)]
        fix_side += [token for token in missing if token not in fix_side]
        if error_side:
            # Candidates include distractors, so what they say to replace only ever adds
            # evidence for an error already located; it never makes one absent.
            for candidate in error.correction_candidates:
                match = _replacement(candidate)
                if match:
                    error_side += [t for t in self.quoted(match[0]) if t not in error_side]
        return error_side, fix_side


def _said_missing(text: str, start: int, end: int) -> bool:
    """Whether the description says the quoted span at ``start:end`` is missing from the text
    (``missing `x```, ```x` is missing``): an omission's token is the fix's, not in the README."""
    before = text[max(0, start - 40) : start]
    before = re.split(r"[.;!?]\s", before)[-1]
    after = text[end : end + 25]
    return bool(_MISSING_BEFORE.search(before) or _MISSING_AFTER.match(after))


def _occurs(token: str, text: str) -> bool:
    """``token`` in ``text`` as a whole: ``instal`` is not found in ``install``, nor
    ``flask-security`` in ``flask-security-too``; a version may follow a dash (``trf-0.0.1``)
    and a token ending in punctuation (``scripts/``) may continue."""
    before = r"(?<![\w])" if re.match(r"[\w]", token) else ""
    # A name continues past a dash (``flask-security-too``); a version does not (``3.11-blue``).
    after = (
        r"(?![\w])" if token[-1:].isdigit() else r"(?![\w-])" if re.search(r"\w$", token) else ""
    )
    return re.search(before + re.escape(token) + after, text) is not None


def _head(text: str) -> str | None:
    """Program and subcommand: ``pip install`` of ``$ pip install -e .``."""
    words = text.removeprefix("$ ").split()
    return " ".join(words[:2]) if len(words) >= 2 else None


# ----------------------------------------------------------------------------- the audit


def audit_cases(
    cases: Iterable[Case],
    commands: CommandReader,
    *,
    dataset: str = "",
    harness_version: str = "",
) -> AuditReport:
    """Flag every case; ``commands`` reads a README's shell commands (``extract_commands``)."""
    cases = list(cases)
    tokens = _Tokens(commands)
    groups: dict[str, list[Case]] = defaultdict(list)
    for case in cases:
        groups[normalise_readme(case.readme_text)].append(case)

    records: list[InstanceAudit] = []
    for case in cases:
        flags: list[str] = []
        if not case.golden.errors:
            flags.append(NO_ERRORS)
        group = groups[normalise_readme(case.readme_text)]
        key = _label_key(case)
        others = [other for other in group if other.id != case.id]
        differing = [other.id for other in others if _label_key(other) != key]
        same = [other.id for other in others if _label_key(other) == key]
        if differing:
            flags.append(DUPLICATE)
        elif same:
            flags.append(SAME_DUPLICATE)
        original = case.original_readme_text
        if (
            case.golden.errors
            and original is not None
            and normalise_readme(original) == normalise_readme(case.readme_text)
        ):
            flags.append(UNCHANGED)
        errors = _audit_errors(case, tokens, commands)
        if any(error.evidence == "absent" for error in errors):
            flags.append(ABSENT)
        if errors and all(error.documentation_only for error in errors):
            flags.append(DOC_ONLY)
        reference = case.reference
        if reference is not None and reference.trivial:
            flags.append(TRIVIAL)
        # Only against a sidecar: without one every instance is unverified, and says so.
        if reference is not None and reference.sidecar and not reference.verified:
            flags.append(UNVERIFIED)
        records.append(
            InstanceAudit(
                case_id=case.id,
                level=case.level,
                error_types=case.error_types,
                flags=[flag for flag in FLAGS if flag in flags],
                duplicate_of=differing,
                same_as=same,
                errors=errors,
                reference_reason=reference.reason if UNVERIFIED in flags and reference else "",
            )
        )
    return _report(records, dataset, harness_version)


def _audit_errors(case: Case, tokens: _Tokens, commands: CommandReader) -> list[ErrorAudit]:
    readme = _searchable(case.readme_text)
    plain = _plain(readme)
    filename = case.spec.readme_target or "README.md"
    command_lines = [_searchable(line) for line in commands(case.readme_text, filename)]
    command_text = "\n".join(command_lines)
    heads = {head for line in command_lines if (head := _head(line))}
    # Words a command takes as arguments (``tensorflow`` of ``pip install numpy tensorflow``):
    # a description that names one unquoted still speaks of that command line.
    arguments = {word for line in command_lines for word in line.split()[2:] if len(word) > 2}
    out = []
    for index, error in enumerate(case.golden.errors):
        error_side, fix_side = tokens.sides(error)
        evidence: Evidence
        if error_side:
            found = any(_occurs(t, readme) or _occurs(t, plain) for t in error_side)
            evidence = "present" if found else "absent"
        else:
            evidence = "fix_only" if fix_side else "unchecked"
        answer_lines = [
            _searchable(line).removeprefix("$ ")
            for line in error.golden_answer.splitlines()
            if line.strip()
        ]
        named = error_side + fix_side + tokens.quoted(error.golden_answer) + answer_lines
        touches = (
            any(_occurs(token, command_text) for token in error_side + fix_side)
            or bool(commands(f"```\n{error.golden_answer}\n```", "README.md"))
            or any(_head(text) in heads for text in named if _head(text))
            or any(
                word in arguments for word in _WORD.findall(_searchable(error.error_description))
            )
        )
        out.append(
            ErrorAudit(
                index=index,
                error_type=error.error_type,
                evidence=evidence,
                error_tokens=error_side,
                fix_tokens=fix_side,
                documentation_only=not touches,
            )
        )
    return out


def _report(records: list[InstanceAudit], dataset: str, harness_version: str) -> AuditReport:
    counts = {flag: sum(flag in record.flags for record in records) for flag in FLAGS}
    by_type: dict[str, Counter[str]] = {name: Counter() for name in ("all", *FLAGS)}
    evidence: Counter[str] = Counter()
    for record in records:
        for error in record.errors:
            by_type["all"][error.error_type] += 1
            evidence[error.evidence] += 1
            if error.evidence == "absent":
                by_type[ABSENT][error.error_type] += 1
            if error.documentation_only:
                by_type[DOC_ONLY][error.error_type] += 1
            for flag in record.flags:
                if flag not in (ABSENT, DOC_ONLY):
                    by_type[flag][error.error_type] += 1
    return AuditReport(
        dataset=dataset,
        harness_version=harness_version,
        instances=len(records),
        golden_errors=sum(len(record.errors) for record in records),
        counts=counts,
        errors_by_type={
            name: {error_type: counter.get(error_type, 0) for error_type in ERROR_TYPES}
            for name, counter in by_type.items()
        },
        evidence={
            kind: evidence.get(kind, 0) for kind in ("present", "absent", "fix_only", "unchecked")
        },
        verified_subset=[record.case_id for record in records if record.verified],
        records=records,
    )
