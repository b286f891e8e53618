"""Small charts drawn on the server as SVG strings (pure: no Django, no JavaScript, no CDN).

Every piece of text that goes into the SVG (labels, titles, values) is escaped here, so labels that come
from documents or models (a rule code, a party name) cannot inject markup. The result is safe to put in a
page as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

PALETTE = {"bar": "#2563eb", "good": "#15803d", "bad": "#b91c1c", "warn": "#b45309", "muted": "#9ca3af"}
_FONT = 'font-family="system-ui, sans-serif" font-size="13"'


def _text(value: object) -> str:
    return escape(str(value), quote=True)


def _number(value: float) -> str:
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _colour(name: str | None) -> str:
    return PALETTE.get(name or "bar", PALETTE["bar"])


def bar_chart(
    items: Sequence[tuple[str, float]],
    *,
    title: str,
    width: int = 560,
    bar_height: int = 18,
    label_width: int = 190,
    value_label: Callable[[float], str] = _number,
    colours: Sequence[str | None] | None = None,
) -> str:
    """Horizontal bars, one per (label, value), with the value written after each bar."""
    gap = 6
    top = 6
    height = top + max(1, len(items)) * (bar_height + gap) + 4
    plot = max(40, width - label_width - 70)
    biggest = max((v for _, v in items), default=0) or 1
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" aria-label="{_text(title)}" {_FONT}>',
        f"<title>{_text(title)}</title>",
    ]
    if not items:
        parts.append(f'<text x="4" y="{top + bar_height - 4}" fill="{PALETTE["muted"]}">No data yet</text>')
    for i, (label, value) in enumerate(items):
        y = top + i * (bar_height + gap)
        length = max(0.0, value) / biggest * plot
        colour = _colour(colours[i] if colours and i < len(colours) else None)
        shown = _text(value_label(value))
        name = _text(label)
        parts.append(
            f'<g><title>{name}: {shown}</title>'
            f'<text x="{label_width - 6}" y="{y + bar_height - 5}" text-anchor="end" fill="#1d2330">{name}</text>'
            f'<rect x="{label_width}" y="{y}" width="{length:.1f}" height="{bar_height}" fill="{colour}" rx="2"/>'
            f'<text x="{label_width + length + 4:.1f}" y="{y + bar_height - 5}" fill="#1d2330">{shown}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def column_chart(
    items: Sequence[tuple[str, float]],
    *,
    title: str,
    height: int = 180,
    column_width: int = 34,
    x_label: str = "",
    value_label: Callable[[float], str] = _number,
) -> str:
    """Vertical columns (a histogram of small integers, for instance), value above, label below each."""
    gap = 10
    left, bottom, top = 10, 34 if x_label else 20, 18
    width = left * 2 + max(1, len(items)) * (column_width + gap)
    plot = height - bottom - top
    biggest = max((v for _, v in items), default=0) or 1
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" aria-label="{_text(title)}" {_FONT}>',
        f"<title>{_text(title)}</title>",
        f'<line x1="{left}" y1="{top + plot}" x2="{width - left}" y2="{top + plot}" stroke="#9ca3af"/>',
    ]
    if not items:
        parts.append(f'<text x="{left}" y="{top + plot / 2:.0f}" fill="{PALETTE["muted"]}">No data yet</text>')
    for i, (label, value) in enumerate(items):
        x = left + i * (column_width + gap) + gap / 2
        length = max(0.0, value) / biggest * plot
        y = top + plot - length
        shown = _text(value_label(value))
        name = _text(label)
        centre = x + column_width / 2
        parts.append(
            f'<g><title>{name}: {shown}</title>'
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{column_width}" height="{length:.1f}" '
            f'fill="{PALETTE["bar"]}" rx="2"/>'
            f'<text x="{centre:.1f}" y="{y - 4:.1f}" text-anchor="middle" fill="#1d2330">{shown}</text>'
            f'<text x="{centre:.1f}" y="{top + plot + 14}" text-anchor="middle" fill="#1d2330">{name}</text></g>'
        )
    if x_label:
        parts.append(f'<text x="{width / 2:.0f}" y="{height - 4}" text-anchor="middle" fill="{PALETTE["muted"]}">'
                     f"{_text(x_label)}</text>")
    parts.append("</svg>")
    return "".join(parts)


def interval_chart(*, estimate: float | None, low: float, high: float, title: str, width: int = 420) -> str:
    """A 0-100 % axis with the interval as a band and the estimate as a mark (the audit's false-pass rate)."""
    height, left, right, y = 46, 16, 26, 16
    plot = width - left - right

    def x(p: float) -> float:
        return left + max(0.0, min(1.0, p)) * plot

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" aria-label="{_text(title)}" {_FONT}>',
        f"<title>{_text(title)}</title>",
        f'<line x1="{left}" y1="{y}" x2="{left + plot}" y2="{y}" stroke="#9ca3af"/>',
    ]
    for tick in (0, 0.25, 0.5, 0.75, 1):
        parts.append(f'<line x1="{x(tick):.1f}" y1="{y - 4}" x2="{x(tick):.1f}" y2="{y + 4}" stroke="#9ca3af"/>'
                     f'<text x="{x(tick):.1f}" y="{y + 18}" text-anchor="middle" fill="#6b7280">'
                     f'{int(tick * 100)} %</text>')
    parts.append(f'<rect x="{x(low):.1f}" y="{y - 6}" width="{max(1.0, x(high) - x(low)):.1f}" height="12" '
                 f'fill="{PALETTE["warn"]}" fill-opacity="0.35"/>')
    if estimate is not None:
        parts.append(f'<rect x="{x(estimate) - 1.5:.1f}" y="{y - 9}" width="3" height="18" fill="{PALETTE["bad"]}"/>')
    parts.append("</svg>")
    return "".join(parts)


def reliability_chart(bins: Sequence[tuple[float, float, int, float | None, float | None]], *, title: str,
                      size: int = 300) -> str:
    """A reliability diagram: per confidence bin (low, high, count, mean confidence, share right), a bar up
    to the share right; the diagonal is perfect calibration. Empty bins draw nothing."""
    pad, plot = 50, size - 74  # room on the left for "100 %", on the right for half of it, below for two lines

    def x(p: float) -> float:
        return pad + p * plot

    def y(p: float) -> float:
        return 8 + (1 - p) * plot

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="{size}" height="{size}" '
        f'viewBox="0 0 {size} {size}" aria-label="{_text(title)}" {_FONT}>',
        f"<title>{_text(title)}</title>",
        f'<rect x="{pad}" y="8" width="{plot}" height="{plot}" fill="none" stroke="#9ca3af"/>',
        f'<line x1="{x(0):.1f}" y1="{y(0):.1f}" x2="{x(1):.1f}" y2="{y(1):.1f}" stroke="#9ca3af" '
        f'stroke-dasharray="4 3"/>',
    ]
    for tick in (0, 0.5, 1):
        parts.append(f'<text x="{x(tick):.1f}" y="{y(0) + 18:.0f}" text-anchor="middle" fill="#6b7280">'
                     f'{int(tick * 100)} %</text>'
                     f'<text x="{pad - 6}" y="{y(tick) + 4:.1f}" text-anchor="end" fill="#6b7280">{int(tick * 100)} %</text>')
    parts.append(f'<text x="{x(0.5):.1f}" y="{y(0) + 36:.0f}" text-anchor="middle" fill="#6b7280">confidence</text>')
    for low, high, count, mean, right in bins:
        if not count or right is None:
            continue
        left, width = x(low) + 1, max(1.0, (high - low) * plot - 2)
        parts.append(f'<g><title>{_text(f"{low:.0%}-{high:.0%}: {count} fields, {right:.0%} right")}</title>'
                     f'<rect x="{left:.1f}" y="{y(right):.1f}" width="{width:.1f}" height="{y(0) - y(right):.1f}" '
                     f'fill="{PALETTE["bar"]}" fill-opacity="0.6"/>'
                     f'<circle cx="{x(mean or 0):.1f}" cy="{y(right):.1f}" r="3" fill="{PALETTE["bad"]}"/></g>')
    parts.append("</svg>")
    return "".join(parts)
