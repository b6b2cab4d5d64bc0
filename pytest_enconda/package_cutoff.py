"""The world as of a reference: the package cutoff a verified reference needed, made part of
the instance's environment.

Some references verify only with the packages of their revision's day (``verify``'s
``recipe:as-of``: pip with ``PIP_UPLOADED_PRIOR_TO``). An agent's setup that runs against
today's index cannot reach such a PASS set, whatever it does, so the cutoff is the instance's,
not the reference's alone: the agent's box, the execution replay (setup and tests) and the
golden timing all run with it, and the agent's task says the date.

pip honours ``PIP_UPLOADED_PRIOR_TO`` from version 26; uv honours ``UV_EXCLUDE_NEWER``. Poetry
has no such setting: a Poetry install resolves against today's index (the task's text says the
date, so an agent can pin by hand).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .cases.models import Case

# The variables each installer reads its upload cutoff from (ISO 8601 / RFC 3339 timestamps).
CUTOFF_VARIABLES = ("PIP_UPLOADED_PRIOR_TO", "UV_EXCLUDE_NEWER")


def cutoff_of(case: Case) -> str:
    """The moment the case's verified reference held its installs to, or ``""`` (today's)."""
    reference = case.reference
    if reference is None or not reference.verified:
        return ""
    return reference.packages_before


def cutoff_env(case: Case) -> dict[str, str]:
    """The variables every box of the case gets: the agent's, the replay's, the golden's."""
    moment = cutoff_of(case)
    return {name: moment for name in CUTOFF_VARIABLES} if moment else {}


def cutoff_note(moment: str) -> str:
    """What the agent's task says of the cutoff (empty without one)."""
    if not moment:
        return ""
    return (
        f"This instance is set in the world of {moment}: its reference environment was built "
        f"with the packages published before that moment, and its tests pass with them. Your "
        f"container has PIP_UPLOADED_PRIOR_TO and UV_EXCLUDE_NEWER set to it, and the graded "
        "replay of your setup runs with the same. pip honours the variable from version 26 "
        "(Debian's pip 23 ignores it: run `PIP_UPLOADED_PRIOR_TO= python -m pip install "
        "'pip>=26'` first); uv honours its own; Poetry does not, so pin versions of that time "
        "by hand there."
    )
