"""The graded aspects of a case: one pytest item each. The one list every module reads.

Standard library only: the xdist scheduler and the plugin's hooks read it in every run.
"""

from __future__ import annotations

DIAGNOSIS_ASPECTS: tuple[str, ...] = ("error_types", "descriptions", "fixes")
EXECUTION = "execution"
RESEARCH_ASPECTS: tuple[str, ...] = ("C0", "C1", "C2", "C3", "C4", "C5")

# The item set of each suite, in the order items are collected.
ASPECTS: dict[str, tuple[str, ...]] = {
    "diagnosis": (EXECUTION, *DIAGNOSIS_ASPECTS),
    "research": RESEARCH_ASPECTS,
}
ALL_ASPECTS = frozenset(name for names in ASPECTS.values() for name in names)
GPU_ASPECTS = frozenset({"C2", "C3", "C4"})
