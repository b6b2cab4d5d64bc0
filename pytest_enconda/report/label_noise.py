"""Type-label disagreements across a dataset: one kind of error filed under different types.

EnConda-Bench's labels are not consistent: a misspelled package name is E1 (dependency
installation) in some repositories and E2 (command usage) in others. A type-F1 gap between two
agents, or between an agent and the labels, is partly that noise. Each rule below recognises a
kind of error from the golden error's own description; per rule the report counts the distinct
errors (one per repository and description: the ``_only_EX`` and merged instances repeat them)
and the repositories under each type. A rule whose errors span several types is a
disagreement; its errors outside the majority type are the noise the rule can see. The rules
read words, not intent, so the report lists examples of each type to check by hand.

Pure over loaded cases, like ``cases.audit``; ``pytest-enconda audit`` writes it beside the
label audit (``label-noise.json``, a section of ``audit.md``).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import BaseModel, Field

from ..cases.models import Case

# Examples kept per rule and type: enough to judge a rule by hand.
# Within one sentence: a dot ends it unless a name goes on (``conf/widget.yml``).
EXAMPLES = 3


@dataclass(frozen=True)
class NoiseRule:
    name: str
    title: str
    pattern: re.Pattern[str]


RULES: tuple[NoiseRule, ...] = (
    NoiseRule(
        "misspelled_package",
        "a misspelled or non-existent package name",
        re.compile(
            r"(?:misspel|typo|incorrect(?:ly)?\s+(?:spelled|named))(?:[^.\n]|\.(?=\S)){0,80}?"
            r"(?:package|module|library|dependency|extra|pypi|install)"
            r"|(?:package|module|library|dependency|extra)(?:[^.\n]|\.(?=\S)){0,40}?"
            r"(?:misspel|typo)"
            r"|(?:wrong|incorrect|invalid|non-?existent)\s+(?:package|module|library|dependency)"
            r"\s+name|(?:package|module|library|dependency)\s+name\s+(?:is\s+)?"
            r"(?:misspelled|incorrect|wrong)|non-?existent\s+(?:package|module|library)"
            r"|does not exist on pypi",
            re.IGNORECASE,
        ),
    ),
    NoiseRule(
        "missing_file",
        "a wrong or missing file, folder or path",
        re.compile(
            r"(?<![-\w])(?:file|path|directory|folder)\b(?:[^.\n]|\.(?=\S)){0,40}?"
            r"(?:does not exist|doesn't exist|not exist|missing|nonexistent|non-existent"
            r"|not found|wrong|incorrect)|no such file"
            r"|(?:wrong|incorrect|non-?existent|invalid)\s+(?:file\s+)?(?:path|directory|"
            r"folder|file)",
            re.IGNORECASE,
        ),
    ),
    NoiseRule(
        "python_version",
        "a claim about the Python version",
        re.compile(
            r"python\s*(?:version|[23]\.\d+)|requires?\s+python|python\s*(?:>=|<=|==)",
            re.IGNORECASE,
        ),
    ),
)


class RuleNoise(BaseModel):
    rule: str
    title: str
    errors: int = Field(description="distinct golden errors the rule recognises")
    by_type: dict[str, int] = Field(description="those errors per labelled type")
    repositories_by_type: dict[str, int] = Field(description="repositories per labelled type")
    majority: str | None = None
    outside_majority: int = Field(default=0, description="errors labelled another type")
    examples: dict[str, list[str]] = Field(
        default_factory=dict, description="per type, the first instances and descriptions"
    )

    @property
    def disagrees(self) -> bool:
        return len(self.by_type) > 1


class LabelNoise(BaseModel):
    dataset: str = ""
    distinct_errors: int = Field(description="golden errors, one per repository and description")
    rules: list[RuleNoise]

    @property
    def outside_majority(self) -> int:
        return sum(rule.outside_majority for rule in self.rules)


def _repository(case: Case) -> str:
    return case.spec.repository.name or case.id.rsplit("/", 1)[0]


def label_noise(cases: Iterable[Case], dataset: str = "") -> LabelNoise:
    """Per rule, the distinct golden errors it recognises and the types they carry."""
    seen: set[tuple[str, str]] = set()
    types: dict[str, Counter[str]] = {rule.name: Counter() for rule in RULES}
    repos: dict[str, defaultdict[str, set[str]]] = {rule.name: defaultdict(set) for rule in RULES}
    examples: dict[str, defaultdict[str, list[str]]] = {
        rule.name: defaultdict(list) for rule in RULES
    }
    for case in cases:
        repository = _repository(case)
        for error in case.golden.errors:
            description = error.error_description.strip()
            key = (repository, " ".join(description.lower().split()))
            if key in seen:
                continue
            seen.add(key)
            for rule in RULES:
                if rule.pattern.search(description) is None:
                    continue
                label = str(error.error_type)
                types[rule.name][label] += 1
                repos[rule.name][label].add(repository)
                if len(examples[rule.name][label]) < EXAMPLES:
                    examples[rule.name][label].append(f"{case.id}: {description[:200]}")
    rules = []
    for rule in RULES:
        counts = types[rule.name]
        majority = counts.most_common(1)[0][0] if counts else None
        rules.append(
            RuleNoise(
                rule=rule.name,
                title=rule.title,
                errors=sum(counts.values()),
                by_type=dict(sorted(counts.items())),
                repositories_by_type={t: len(r) for t, r in sorted(repos[rule.name].items())},
                majority=majority,
                outside_majority=sum(counts.values()) - (counts[majority] if majority else 0),
                examples={t: list(found) for t, found in sorted(examples[rule.name].items())},
            )
        )
    return LabelNoise(dataset=dataset, distinct_errors=len(seen), rules=rules)


def render_markdown(noise: LabelNoise) -> str:
    """The section of ``audit.md``: one row per rule, then the examples of a disagreement."""
    lines = [
        "## Type-label disagreements",
        "",
        f"{noise.distinct_errors} distinct golden errors (one per repository and description). "
        "Errors of one kind (recognised by the rule from the description's words) under "
        "different types:",
        "",
        "| kind of error | errors | per type (repositories) | outside the majority type |",
        "| --- | ---: | --- | ---: |",
    ]
    for rule in noise.rules:
        per_type = ", ".join(
            f"{name} {count} ({rule.repositories_by_type.get(name, 0)})"
            for name, count in rule.by_type.items()
        )
        lines.append(f"| {rule.title} | {rule.errors} | {per_type or '-'} | "
                     f"{rule.outside_majority} |")  # fmt: skip
    for rule in noise.rules:
        if not rule.disagrees:
            continue
        lines += ["", f"### {rule.title}: examples", ""]
        for name, found in rule.examples.items():
            lines += [f"- {name}: {text}" for text in found]
    lines += [
        "",
        "The summary's `e1_e2_merged` figures (type P/R/F1 with E1 and E2 as one type) show how "
        "much of a type score such disagreements can move.",
    ]
    return "\n".join(lines) + "\n"
