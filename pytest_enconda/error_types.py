"""EnConda-Bench's error types: the one table every module reads (codes, names, descriptions).

The paper numbers six types E1..E8 (E3 and E5 were merged into others before release). Standard
library only: the case models, the prompts, the dataset importer and the report tables read it.
"""

from __future__ import annotations

from typing import Literal, NamedTuple, get_args


class ErrorTypeInfo(NamedTuple):
    code: str
    name: str
    description: str
    # How EnConda-Bench's ``error_types.json`` spells the type; a golden file may use these.
    dataset_names: tuple[str, ...]


TABLE: tuple[ErrorTypeInfo, ...] = (
    ErrorTypeInfo(
        "E1",
        "dependency installation",
        "a package, extra or system library is missing, misnamed or wrong.",
        ("dependency installation error",),
    ),
    ErrorTypeInfo(
        "E2",
        "command usage or syntax",
        "a command, flag or option is wrong, misspelt or malformed.",
        ("command usage or syntax error",),
    ),
    ErrorTypeInfo(
        "E4",
        "file path or missing file",
        "a path, file or folder named does not exist or is wrong.",
        ("file path or missing file error",),
    ),
    ErrorTypeInfo(
        "E6",
        "logical order",
        "steps are in an order that cannot work (e.g. use before install).",
        ("logical order error",),
    ),
    ErrorTypeInfo(
        "E7",
        "version compatibility",
        "a Python or package version that cannot work with the code.",
        ("version compatibility error",),
    ),
    ErrorTypeInfo(
        "E8",
        "other",
        "any other error that stops the setup from working.",
        ("other miscellaneous errors", "other miscellaneous error"),
    ),
)
ERROR_TYPES: tuple[str, ...] = tuple(row.code for row in TABLE)
BY_CODE: dict[str, ErrorTypeInfo] = {row.code: row for row in TABLE}
# Type checkers need the codes spelled out; the assertion keeps them equal to the table's.
ErrorType = Literal["E1", "E2", "E4", "E6", "E7", "E8"]
assert get_args(ErrorType) == ERROR_TYPES, "ErrorType must list the table's codes"


def code_of_dataset_name(name: str) -> str | None:
    """``"Dependency  Installation Error"`` -> ``"E1"`` (case and spacing ignored)."""
    wanted = " ".join(name.lower().split())
    for row in TABLE:
        if wanted in row.dataset_names:
            return row.code
    return None


def prompt_lines() -> str:
    """The types as the agents' prompts list them, one ``- CODE name: description`` a line."""
    return "\n".join(f"- {row.code} {row.name}: {row.description}" for row in TABLE)
