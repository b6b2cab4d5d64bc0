"""``pytest-enconda verify``: the ground-truth workshop. For each repository of an imported
dataset it makes a reference environment (the attempt ladder, ``ladder``; one attempt,
``attempt``; the install-from-source recipes, ``recipes``), proves it uses the pinned checkout
(``checkout``) and records the tests that pass twice in the dataset's sidecar.

Everything runs in boxes of a ``Backend`` (``context``): Docker in production, the fake backend
in unit tests.
"""

from __future__ import annotations

from .context import VerifyContext, VerifyOptions
from .ladder import repositories_of, verify_dataset, verify_repository

__all__ = [
    "VerifyContext",
    "VerifyOptions",
    "repositories_of",
    "verify_dataset",
    "verify_repository",
]
