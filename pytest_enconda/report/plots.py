"""The review report's plots, drawn by matplotlib (Agg) and embedded as inline SVG.

matplotlib is an optional dependency (``pytest-enconda[report]``): it is imported here only, when a
report is written, so the plugin's import stays cheap. Every plot reads the summary dict (and the
per-case rows for the scatter), never the run directory.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..error_types import ERROR_TYPES

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

# The colours of an outcome everywhere in the report (table badges use the same ones).
OUTCOME_COLOURS = {
    "passed": "#2e7d32",
    "failed": "#c62828",
    "error": "#ef6c00",
    "skipped": "#757575",
    "none": "#1565c0",
}


class PlotsUnavailable(RuntimeError):
    """matplotlib is not installed: the report says so instead of drawing."""


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as exc:
        raise PlotsUnavailable(
            "plots need matplotlib: pip install 'pytest-enconda[report]'"
        ) from exc
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _svg(fig: Any) -> str:
    buffer = io.StringIO()
    # Text as text (not paths): smaller files, and the browser can search the labels.
    with _rc({"svg.fonttype": "none", "svg.hashsalt": "enconda"}):
        fig.savefig(buffer, format="svg", bbox_inches="tight")
    _pyplot().close(fig)
    text = buffer.getvalue()
    # Inline in HTML: drop the XML prolog and DOCTYPE, keep the <svg> element.
    return text[text.index("<svg") :] if "<svg" in text else text


def _rc(values: Mapping[RcKeyType, Any]) -> Any:
    import matplotlib

    return matplotlib.rc_context(dict(values))


def _pct(value: Any) -> float:
    return 100.0 * float(value) if value is not None else 0.0


def per_type_f1(summary: Mapping[str, Any]) -> str:
    plt = _pyplot()
    per_type = summary.get("per_type") or {}
    f1 = [_pct((per_type.get(t) or {}).get("f1")) for t in ERROR_TYPES]
    paper = [_pct(((per_type.get(t) or {}).get("paper") or {}).get("f1")) for t in ERROR_TYPES]
    fig, ax = plt.subplots(figsize=(5.2, 3.0))
    xs = range(len(ERROR_TYPES))
    ax.bar([x - 0.2 for x in xs], f1, width=0.4, label="per-error", color="#1565c0")
    ax.bar([x + 0.2 for x in xs], paper, width=0.4, label="paper", color="#90caf9")
    ax.set_xticks(list(xs), ERROR_TYPES)
    ax.set_ylim(0, 105)
    ax.set_ylabel("F1 (%)")
    ax.set_title("F1 per error type")
    ax.legend(fontsize=8, loc="upper right")
    return _svg(fig)


def predicted_vs_golden(summary: Mapping[str, Any]) -> str:
    plt = _pyplot()
    per_type = summary.get("per_type") or {}
    predicted = [int((per_type.get(t) or {}).get("predicted", 0)) for t in ERROR_TYPES]
    golden = [int((per_type.get(t) or {}).get("golden", 0)) for t in ERROR_TYPES]
    fig, ax = plt.subplots(figsize=(5.2, 3.0))
    xs = range(len(ERROR_TYPES))
    ax.bar([x - 0.2 for x in xs], golden, width=0.4, label="golden", color="#6d4c41")
    ax.bar([x + 0.2 for x in xs], predicted, width=0.4, label="predicted", color="#ffa726")
    ax.set_xticks(list(xs), ERROR_TYPES)
    ax.set_ylabel("errors")
    ax.set_title("Predicted vs golden errors per type")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=8)
    return _svg(fig)


def metrics_by_level(summary: Mapping[str, Any]) -> str:
    plt = _pyplot()
    levels = summary.get("by_level") or {}
    names = sorted(levels, key=lambda v: int(v))
    series = {
        "Type F1 (paper)": [_pct((levels[n].get("paper") or {}).get("type_f1")) for n in names],
        "Desc ACC (paper)": [
            _pct((levels[n].get("paper") or {}).get("description_acc")) for n in names
        ],
        "Fix ACC (paper)": [_pct((levels[n].get("paper") or {}).get("fix_acc")) for n in names],
        "Pass@1": [_pct(levels[n].get("pass_at_1")) for n in names],
    }
    fig, ax = plt.subplots(figsize=(5.2, 3.0))
    width = 0.8 / len(series)
    for index, (label, values) in enumerate(series.items()):
        offset = (index - (len(series) - 1) / 2) * width
        ax.bar([x + offset for x in range(len(names))], values, width=width, label=label)
    ax.set_xticks(list(range(len(names))), [f"level {n}" for n in names])
    ax.set_ylim(0, 105)
    ax.set_ylabel("%")
    ax.set_title("Metrics by level")
    ax.legend(fontsize=7, ncol=2)
    return _svg(fig)


def pyramid_funnel(pyramid: Mapping[str, Any]) -> str:
    """The funnel stages (C1-C4 and any a plugin adds): passed of applicable (bars) with the
    applicable count written on each; the imports (C0) and audit (C5) numbers in the title."""
    from ..stages import STAGES

    plt = _pyplot()
    funnel = [stage for stage in STAGES.values() if stage.summary == "funnel"]
    rows = [pyramid.get(stage.name) or {} for stage in funnel]
    applicable = [int(row.get("applicable", 0)) for row in rows]
    passed = [int(row.get("passed", 0)) for row in rows]
    fig, ax = plt.subplots(figsize=(5.2, 3.0))
    ys = list(range(len(funnel)))[::-1]
    ax.barh(ys, applicable, color="#e0e0e0", label="applicable")
    ax.barh(ys, passed, color="#2e7d32", label="passed")
    for y, a, p, row in zip(ys, applicable, passed, rows, strict=True):
        skipped = int(row.get("skipped", 0))
        ax.text(max(a, 0.05), y, f" {p}/{a} ({skipped} skipped)", va="center", fontsize=8)
    ax.set_yticks(ys, [stage.title for stage in funnel])
    ax.set_xlim(0, max([*applicable, 1]) * 1.6)
    ax.set_xlabel("cases")
    ax.set_title("Pyramid: " + ", ".join(_title_parts(pyramid, STAGES.values())), fontsize=9)
    # Below the axes: inside, it would cover the counts written beside the bars.
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2)
    return _svg(fig)


def _title_parts(pyramid: Mapping[str, Any], stages: Sequence[Any]) -> list[str]:
    """The imports stages' missing/total and the audit stages' hallucinations, in order."""
    parts = []
    for stage in stages:
        numbers = pyramid.get(stage.name) or {}
        if stage.summary == "imports":
            missing, total = numbers.get("missing", 0), numbers.get("total", 0)
            parts.append(f"{stage.name} missing {missing}/{total} imports")
        elif stage.summary == "audit":
            parts.append(f"{stage.name} {numbers.get('hallucinations', 0)} hallucinations")
    return parts


def tokens_vs_outcome(cases: Sequence[Mapping[str, Any]]) -> str:
    """One point per case: the agent's tokens (x) against its wall time, coloured by outcome."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 3.0))
    for outcome, colour in OUTCOME_COLOURS.items():
        points = [c for c in cases if c.get("headline") == outcome]
        if not points:
            continue
        ax.scatter(
            [float(c.get("tokens") or 0) for c in points],
            [float(c.get("time_to_ready_s") or 0) for c in points],
            color=colour,
            label=f"{outcome} ({len(points)})",
            s=28,
            alpha=0.85,
        )
    ax.set_xlabel("agent tokens")
    ax.set_ylabel("time to ready (s)")
    ax.set_title("Tokens vs outcome per case (execution, else diagnosis)", fontsize=9)
    ax.legend(fontsize=8)
    return _svg(fig)


def all_plots(
    summary: Mapping[str, Any], cases: Sequence[Mapping[str, Any]]
) -> list[tuple[str, str]]:
    """(title, inline SVG) for each plot this summary has data for."""
    out: list[tuple[str, str]] = []
    diagnosis = any(
        item in (summary.get("items") or {}) for item in ("error_types", "descriptions", "fixes")
    )
    if diagnosis:
        out.append(("F1 per error type", per_type_f1(summary)))
        out.append(("Predicted vs golden counts", predicted_vs_golden(summary)))
    if summary.get("by_level") and (diagnosis or "execution" in (summary.get("items") or {})):
        out.append(("Metrics by level", metrics_by_level(summary)))
    if summary.get("pyramid"):
        out.append(("Runtime pyramid", pyramid_funnel(summary["pyramid"])))
    if cases:
        out.append(("Tokens vs outcome", tokens_vs_outcome(cases)))
    return [(title, _unique_ids(svg, index)) for index, (title, svg) in enumerate(out)]


_ID = re.compile(r'\bid="([^"]+)"')


def _unique_ids(svg: str, index: int) -> str:
    """Several inline SVGs share one document: their clip-path ids must not collide."""
    ids = set(_ID.findall(svg))
    for name in sorted(ids, key=len, reverse=True):
        svg = svg.replace(f'id="{name}"', f'id="p{index}-{name}"')
        svg = svg.replace(f"url(#{name})", f"url(#p{index}-{name})")
        svg = svg.replace(f'href="#{name}"', f'href="#p{index}-{name}"')
    return svg
