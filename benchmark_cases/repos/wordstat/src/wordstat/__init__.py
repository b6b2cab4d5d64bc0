"""Count lines, words and the most frequent terms of text files."""

from .counting import DEFAULT_STOPWORDS, Stats, count_text, tokenize

__all__ = ["DEFAULT_STOPWORDS", "Stats", "count_text", "tokenize"]
__version__ = "0.3.1"
