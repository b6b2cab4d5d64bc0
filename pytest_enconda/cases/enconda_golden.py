"""An instance's golden file (``README.json``) read into a ``GoldenAnswer``.

The released files vary in places: unambiguous variants (field spellings, ``"e1"`` for ``E1``, a
single string for a list, a ``level`` that disagrees with the errors listed) are read and noted;
anything else is a problem, and the instance does not load. Pure: the caller reads the file and
files the notes and problems under its name.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from ..error_types import ERROR_TYPES, code_of_dataset_name
from .models import GoldenAnswer, parse_level

_TYPE_CODE = re.compile(r"^\s*E\s*[-_]?\s*(\d+)\b", re.IGNORECASE)
# Other spellings of the golden error fields, mapped to EnConda-Bench's released names.
_FIELD_ALIASES = {
    "type": "error_type",
    "errortype": "error_type",
    "error-type": "error_type",
    "description": "error_description",
    "errordescription": "error_description",
    "error-description": "error_description",
    "candidates": "correction_candidates",
    "correction_candidate": "correction_candidates",
    "correctioncandidates": "correction_candidates",
    "answer": "golden_answer",
    "goldenanswer": "golden_answer",
    "golden": "golden_answer",
    "fix_answer": "golden_answer",
}
_GOLDEN_FIELDS = ("error_type", "error_description", "correction_candidates", "golden_answer")


def first_errors(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in err['loc']) or '<root>'}: {err['msg']}"
        for err in exc.errors()[:5]
    )


def _normalise_type(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    match = _TYPE_CODE.match(value)
    if match:
        code = f"E{int(match.group(1))}"
        return code if code in ERROR_TYPES else None
    return code_of_dataset_name(value)


def _normalise_error(
    index: int, raw: object, problems: list[str], notes: list[str]
) -> dict[str, Any] | None:
    where = f"errors[{index}]"
    if not isinstance(raw, dict):
        problems.append(f"{where}: expected an object, got {type(raw).__name__}")
        return None
    error: dict[str, Any] = {}
    for field, value in raw.items():
        canonical = field if field in _GOLDEN_FIELDS else _FIELD_ALIASES.get(field.lower())
        if canonical is None:
            notes.append(f"{where}.{field}: unknown field dropped")
        elif canonical in error or (canonical != field and canonical in raw):
            notes.append(f"{where}.{field}: duplicate of {canonical} dropped")
        else:
            if canonical != field:
                notes.append(f"{where}.{field}: read as {canonical}")
            error[canonical] = value
    before = len(problems)

    error_type = error.get("error_type")
    code = _normalise_type(error_type)
    if code is None:
        expected = ", ".join(ERROR_TYPES)
        if error_type is None:
            problems.append(f"{where}.error_type: required field is missing")
        else:
            problems.append(f"{where}.error_type: expected one of {expected}, got {error_type!r}")
    elif code != error_type:
        notes.append(f"{where}.error_type: {error_type!r} read as {code}")
        error["error_type"] = code

    for field in ("error_description", "golden_answer"):
        value = error.get(field)
        if value is None:
            problems.append(f"{where}.{field}: required field is missing")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            notes.append(f"{where}.{field}: number {value!r} read as text")
            error[field] = str(value)
        elif not isinstance(value, str):
            problems.append(f"{where}.{field}: expected text, got {type(value).__name__}")

    candidates = error.get("correction_candidates")
    if candidates is None:
        if "correction_candidates" not in error:
            notes.append(f"{where}.correction_candidates: missing; read as []")
        else:
            notes.append(f"{where}.correction_candidates: null read as []")
        error["correction_candidates"] = []
    elif isinstance(candidates, str):
        notes.append(f"{where}.correction_candidates: a single string read as a list of one")
        error["correction_candidates"] = [candidates]
    elif isinstance(candidates, list):
        if not all(isinstance(item, str) for item in candidates):
            if all(isinstance(item, str | int | float) for item in candidates):
                notes.append(f"{where}.correction_candidates: numbers read as text")
                error["correction_candidates"] = [str(item) for item in candidates]
            else:
                problems.append(f"{where}.correction_candidates: expected a list of text")
    else:
        problems.append(
            f"{where}.correction_candidates: expected a list of text, "
            f"got {type(candidates).__name__}"
        )
    return error if len(problems) == before else None


def normalise_golden(data: object, problems: list[str], notes: list[str]) -> GoldenAnswer | None:
    if not isinstance(data, dict):
        problems.append(f"<root>: expected a JSON object, got {type(data).__name__}")
        return None
    raw_errors = data.get("errors")
    if raw_errors is None:
        problems.append("errors: required field is missing")
        return None
    if isinstance(raw_errors, dict):
        notes.append("errors: a single object read as a list of one")
        raw_errors = [raw_errors]
    if not isinstance(raw_errors, list):
        problems.append(f"errors: expected a list, got {type(raw_errors).__name__}")
        return None
    errors = [_normalise_error(i, raw, problems, notes) for i, raw in enumerate(raw_errors)]
    if problems:
        return None

    count = len(errors)
    raw_level = data.get("level")
    if raw_level is None:
        notes.append(f"level: missing; the number of errors ({count}) is the level")
    else:
        try:
            level = parse_level(raw_level)
        except ValueError:
            notes.append(f"level: unreadable {raw_level!r}; the number of errors ({count}) is used")
        else:
            if level != count:
                notes.append(
                    f"level: file says {raw_level!r} but lists {count} errors; using {count}"
                )
    if count == 0:
        notes.append("no injected errors: the correct diagnosis is empty")

    extra = {k: v for k, v in data.items() if k not in ("errors", "level")}
    try:
        return GoldenAnswer.model_validate({**extra, "errors": errors, "level": count})
    except ValidationError as exc:
        problems.append(first_errors(exc))
        return None
