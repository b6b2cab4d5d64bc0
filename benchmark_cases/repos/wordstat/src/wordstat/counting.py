"""Tokenizing and counting, independent of the command line."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

# Apostrophes stay inside words so that "don't" counts as one word, not "don" and "t".
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")

DEFAULT_STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "is",
        "it",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "with",
    }
)


def tokenize(text: str) -> list[str]:
    """Lower-cased words of ``text``; punctuation separates words."""
    return _WORD.findall(text.lower())


@dataclass
class Stats:
    lines: int = 0
    words: int = 0
    chars: int = 0
    top: list[tuple[str, int]] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "lines": self.lines,
            "words": self.words,
            "chars": self.chars,
            "top": [[word, count] for word, count in self.top],
        }


def count_text(text: str, top: int = 5, stopwords: Iterable[str] = DEFAULT_STOPWORDS) -> Stats:
    """Count ``text``; ``top`` most frequent words exclude ``stopwords``.

    Ties are broken alphabetically so that the output is stable between runs.
    """
    words = tokenize(text)
    skip = set(stopwords)
    counts = Counter(word for word in words if word not in skip)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return Stats(
        lines=len(text.splitlines()),
        words=len(words),
        chars=len(text),
        top=ranked[:top],
    )
