"""Which Python the probes grade: the one the agent actually built its environment in.

An agent that follows a README into ``.venv`` and writes no self-report must be graded in that
``.venv``, not in the image's system ``python3`` (which has none of what it installed). The
interpreter is looked for, in order, in:

1. the self-report's ``python_path``, when that file exists and runs;
2. a virtual or conda environment the agent's setup script or trajectory created or activated
   (``python -m venv X``, ``virtualenv X``, ``uv venv [X]``, ``source X/bin/activate``,
   ``conda create -n N`` / ``-p P``, ``conda activate N``), the last one mentioned first;
3. ``python`` (else ``python3``) on the final state's ``PATH``;
4. ``python3``.

Candidates are checked in one fresh box of the final state; the choice and the candidates turned
down are saved (``environment/interpreter.json``) and named in every stage's message.
"""

from __future__ import annotations

import itertools
import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from ..cases.operands import option_shaped
from ..grading.pyramid import usable_python_path

if TYPE_CHECKING:
    from .environment import Environment

FoundBy = Literal["report", "setup-script", "trajectory", "path", "system", "given"]
WORKDIR = "/data/project"
# ``conda info --base`` where conda is on PATH; the usual install folder where it is not.
_CONDA_BASE = '"$(conda info --base 2>/dev/null || echo /opt/conda)"'
_SEPARATORS = re.compile(r"&&|\|\||;|\n")
# venv/virtualenv/uv options that take a value (the folder is the first other word).
_VALUED = {"--prompt", "-p", "--python", "--seed-version", "--index-url", "--cache-dir"}


class GradedInterpreter(BaseModel):
    """What ``environment/interpreter.json`` holds."""

    path: str
    found_by: FoundBy
    detail: str = Field(description="how it was found, in words, e.g. 'venv created by ...'")
    rejected: list[str] = Field(default_factory=list, description="candidates turned down, why")

    def describe(self) -> str:
        return f"graded python: {self.path} ({self.detail})"


@dataclass(frozen=True)
class Candidate:
    """A place an interpreter may be: ``expression`` is a shell word (it may expand)."""

    expression: str
    found_by: FoundBy
    detail: str


def _absolute(folder: str) -> str:
    """A folder as a shell word, relative ones from the setup's working directory."""
    if folder.startswith("~/"):
        return '"$HOME"/' + shlex.quote(folder[2:])
    if folder.startswith("/"):
        return shlex.quote(folder)
    return shlex.quote(f"{WORKDIR}/{folder.removeprefix('./')}")


def _first_positional(words: list[str]) -> str | None:
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word in _VALUED:
            skip = True
            continue
        if not word.startswith("-"):
            return word
    return None


def _environments(words: list[str]) -> list[tuple[str, str]]:
    """(interpreter shell word, what made it) for one simple command's words."""
    found: list[tuple[str, str]] = []
    text = " ".join(words)
    for i, word in enumerate(words):
        rest = words[i + 1 :]
        if word == "-m" and rest[:1] == ["venv"]:
            folder = _first_positional(rest[1:])
            if folder:
                found.append((_absolute(folder) + "/bin/python", f"venv created by {text!r}"))
        elif word == "virtualenv" or (word == "venv" and i > 0 and words[i - 1] == "uv"):
            folder = _first_positional(rest) or (".venv" if word == "venv" else None)
            if folder:
                found.append((_absolute(folder) + "/bin/python", f"venv created by {text!r}"))
        elif word in ("source", ".") and rest and rest[0].endswith("/bin/activate"):
            folder = rest[0].removesuffix("/bin/activate")
            found.append((_absolute(folder) + "/bin/python", f"venv activated by {text!r}"))
        elif word in ("conda", "mamba", "micromamba") and rest[:1] in (["create"], ["activate"]):
            options = rest[1:]
            for flag, value in itertools.pairwise(options):
                if flag in ("-n", "--name"):
                    expression = f"{_CONDA_BASE}/envs/{shlex.quote(value)}/bin/python"
                    found.append((expression, f"conda env {value!r} from {text!r}"))
                elif flag in ("-p", "--prefix"):
                    found.append((_absolute(value) + "/bin/python", f"conda env from {text!r}"))
            if rest[0] == "activate" and options and not options[0].startswith("-"):
                name = options[0]
                expression = (
                    _absolute(name) + "/bin/python"
                    if "/" in name
                    else f"{_CONDA_BASE}/envs/{shlex.quote(name)}/bin/python"
                )
                found.append((expression, f"conda env activated by {text!r}"))
    return found


def environments_in(text: str, found_by: FoundBy) -> list[Candidate]:
    """Environments ``text`` (a shell script or a trajectory) creates or activates, the last
    mentioned first: an agent that made two graded the one it ended in."""
    candidates: list[Candidate] = []
    # A trajectory is JSON: commands sit in strings with escaped newlines and quotes.
    text = text.replace("\\n", "\n").replace('\\"', '"')
    for part in _SEPARATORS.split(text):
        try:
            words = shlex.split(part, comments=True)
        except ValueError:
            words = part.split()
        for expression, detail in _environments(words):
            candidates.append(Candidate(expression, found_by, detail))
    seen: set[str] = set()
    ordered: list[Candidate] = []
    for candidate in reversed(candidates):
        if candidate.expression not in seen:
            seen.add(candidate.expression)
            ordered.append(candidate)
    return ordered


def candidates(
    report: dict[str, Any] | None, setup_script: str, trajectory: str = ""
) -> list[Candidate]:
    """Every place to look, in the order they are preferred."""
    found: list[Candidate] = []
    python_path = report.get("python_path") if isinstance(report, dict) else None
    # The agent's word: one beginning with '-' would reach pyright's --pythonpath as an option;
    # one the self-report's model refuses (100,000 characters, a NUL) is C5's finding, and
    # quoted into the search's command it would make the harness fail instead.
    if usable_python_path(python_path) and not option_shaped(str(python_path)):
        found.append(Candidate(shlex.quote(python_path), "report", "report.json's python_path"))
    found += environments_in(setup_script, "setup-script")
    found += environments_in(trajectory, "trajectory")
    found.append(Candidate("$(command -v python)", "path", "python on the final state's PATH"))
    found.append(Candidate("$(command -v python3)", "path", "python3 on the final state's PATH"))
    return found


def _check_script(found: list[Candidate]) -> str:
    """One shell command printing ``<index>\\t<path>\\t<verdict>`` per candidate."""
    lines = []
    for index, candidate in enumerate(found):
        lines.append(
            f"c={candidate.expression}; "
            f'if [ -z "$c" ]; then v=absent; elif [ ! -e "$c" ]; then v=absent; '
            f'elif [ ! -x "$c" ]; then v=not-executable; '
            f'elif "$c" -c pass >/dev/null 2>&1; then v=ok; else v=broken; fi; '
            f'printf "%s\\t%s\\t%s\\n" {index} "$c" "$v"'
        )
    return "\n".join(lines)


_VERDICTS = {
    "absent": "does not exist",
    "not-executable": "is not executable",
    "broken": "does not run",
}


def resolve(environment: Environment, found: list[Candidate]) -> GradedInterpreter:
    """The first candidate that exists and runs in ``environment`` (system ``python3`` when
    none does), with the reasons the others before it were turned down."""
    run = environment.run(_check_script(found), timeout=120)
    checked: dict[int, tuple[str, str]] = {}
    for line in run.output.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[0].isdigit():
            checked[int(parts[0])] = (parts[1], parts[2])
    rejected: list[str] = []
    for index, candidate in enumerate(found):
        path, verdict = checked.get(index, ("", "absent"))
        # A literal path is kept as written: the box's own spelling of it, not the host's
        # (a fake box lives in a host folder that is gone after this run).
        words = shlex.split(candidate.expression)
        if "$" not in candidate.expression and len(words) == 1:
            path = words[0]
        if verdict == "ok" and path:
            return GradedInterpreter(
                path=path, found_by=candidate.found_by, detail=candidate.detail, rejected=rejected
            )
        if candidate.found_by != "path":
            shown = path or candidate.expression
            rejected.append(f"{candidate.detail}: {shown} {_VERDICTS.get(verdict, verdict)}")
    return GradedInterpreter(
        path="python3",
        found_by="system",
        detail="no interpreter found; the image's python3",
        rejected=rejected,
    )
