"""Why a type was not injected into a repository's README: what each rule needs and the README
lacked. On a plain ``pip install`` README no E6 or E7 was injected and the report said nothing;
now each asked type with no injection has its reason, per repository."""

from __future__ import annotations

from .injection_facts import CommandLine, RepoFacts
from .injectors import candidates

__all__ = ["NEEDS", "not_injected"]

# What the rules of each type look for in the README's commands and the repository's facts.
NEEDS = {
    "E1": "an install line naming a package to misspell, or a checkout install whose declared "
    "dependencies or extras can be left out",
    "E2": "a pip install line, or a command of the project's own scripts with a long option",
    "E4": "a command naming a file or folder of the repository, or a checkout install",
    "E6": "two steps where the later needs the earlier (a virtual environment then its "
    "activation, apt-get update then install, an export then a command reading it, the checkout "
    "install then the project's own command)",
    "E7": "an install of requirements with a lower bound or pin (>=, ==) to contradict, or a "
    "python3.X command with a declared requires-python",
    "E8": "a pip install line",
}


def not_injected(
    repository: str,
    readme: str,
    cmds: list[CommandLine],
    facts: RepoFacts,
    types: list[str],
    injected: set[str],
) -> dict[str, str]:
    """Each asked type of ``types`` not in ``injected``, with why: no rule of it applies (what
    it needs, and how many command lines the README has), or its candidates were all taken."""
    reasons: dict[str, str] = {}
    for error_type in types:
        if error_type in injected:
            continue
        found = candidates(repository, readme, cmds, facts, error_type)
        if found:
            reasons[error_type] = (
                f"{len(found)} candidate(s), none picked (they edit lines already taken)"
            )
        else:
            reasons[error_type] = (
                f"no rule applies: it needs {NEEDS.get(error_type, 'a rule')}; the README has "
                f"{len(cmds)} command line(s)"
            )
    return reasons
