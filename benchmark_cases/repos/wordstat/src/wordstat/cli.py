"""The ``wordstat`` command."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .counting import DEFAULT_STOPWORDS, Stats, count_text


def _merge(total: Stats, part: Stats) -> None:
    total.lines += part.lines
    total.words += part.words
    total.chars += part.chars


@click.command()
@click.argument(
    "files",
    nargs=-1,
    required=True,
    # path_type needs click 8: the command relies on getting pathlib.Path objects.
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
)
@click.option("--top", "-n", default=5, show_default=True, type=click.IntRange(min=0))
@click.option("--keep-stopwords", is_flag=True, help="Count words like 'the' and 'and' too.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
@click.version_option(package_name="wordstat")
def main(files: tuple[Path, ...], top: int, keep_stopwords: bool, as_json: bool) -> None:
    """Count lines, words and the most frequent words of FILES."""
    stopwords: frozenset[str] = frozenset() if keep_stopwords else DEFAULT_STOPWORDS
    # Frequent words are ranked over all files together, so count the joined text once.
    texts = [path.read_text(encoding="utf-8") for path in files]
    total = Stats()
    for text in texts:
        _merge(total, count_text(text, top=0, stopwords=stopwords))
    total.top = count_text("\n".join(texts), top=top, stopwords=stopwords).top
    if as_json:
        click.echo(json.dumps(total.as_dict()))
        return
    click.echo(f"lines: {total.lines}")
    click.echo(f"words: {total.words}")
    click.echo(f"chars: {total.chars}")
    for word, count in total.top:
        click.echo(f"{count:>6}  {word}")
