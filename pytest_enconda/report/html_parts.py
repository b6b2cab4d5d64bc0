"""The HTML pieces every report page is made of: escaping, links to the run's files, a table."""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

Href = Callable[[Path], str]


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _table(
    header: Sequence[str], rows: Sequence[Sequence[str]], table_id: str = "", numeric_from: int = 1
) -> str:
    ident = f' id="{esc(table_id)}"' if table_id else ""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{esc(c)}</td>' if i >= numeric_from else f"<td>{esc(c)}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def relative_href(base: Path) -> Href:
    """Links relative to the report's folder: the run directory can be moved or served."""

    def href(path: Path) -> str:
        return esc(Path(os.path.relpath(path, base)).as_posix())

    return href


def absolute_href(path: Path) -> str:
    return esc(path.resolve().as_uri())
