"""The ecosystems AEC tasks come from, one module each, in one registry (``ECOSYSTEMS``).

Registration order is the order runners are read in a log (a log of two runners names them in
it) and, fallbacks last, the order a repository's language is decided. A third party adds one
through the ``pytest_enconda.ecosystems`` entry-point group or by calling
``ECOSYSTEMS.register(Ecosystem(...))`` from a pytest plugin or ``conftest.py``.
"""

from __future__ import annotations

from .cfamily import C_FAMILY
from .go import GO
from .java import JAVA
from .javascript import JAVASCRIPT
from .php import PHP
from .python import PYTHON
from .record import (
    ECOSYSTEMS,
    ENTRY_POINT_GROUP,
    MAX_EVIDENCE,
    Checkout,
    Ecosystem,
    Found,
    LogParser,
    NameParser,
    Outcome,
    ProfileFields,
    any_of,
    canonical_language,
    detection_order,
    languages,
    of_language,
)
from .rust import RUST

for _builtin in (PYTHON, RUST, GO, C_FAMILY, JAVA, JAVASCRIPT, PHP):
    ECOSYSTEMS.register(_builtin)

__all__ = [
    "ECOSYSTEMS",
    "ENTRY_POINT_GROUP",
    "MAX_EVIDENCE",
    "Checkout",
    "Ecosystem",
    "Found",
    "LogParser",
    "NameParser",
    "Outcome",
    "ProfileFields",
    "any_of",
    "canonical_language",
    "detection_order",
    "languages",
    "of_language",
]
