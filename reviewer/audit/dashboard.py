"""The batch dashboard: states, pass rates before and after the loop, rounds, stop reasons, rules, cost,
time, accuracy against known truth, the audit estimate and the runs side by side (admin and supervisor)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe

from reviewer import charts
from reviewer.access import role_required
from reviewer.audit.selectors import audit_summary
from reviewer.audit.views import estimate_charts, family_labels
from reviewer.batches.selectors import batch_dashboard, batch_in_progress, batch_runs
from reviewer.batches.views import get_batch
from reviewer.roles import ADMIN, SUPERVISOR

STATUS_COLOURS = {"passed": "good", "flagged": "warn", "failed": "bad", "queued": "muted", "processing": "muted"}


def _seconds(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.1f} s" if value < 120 else f"{value / 60:.1f} min"


def dashboard_charts(data: dict) -> dict:
    """The dashboard's SVGs; reviewer.charts escapes every label, so they are safe to insert."""
    return {
        "status_svg": mark_safe(charts.bar_chart(  # noqa: S308
            data["by_status"], title="Documents by state",
            colours=[STATUS_COLOURS.get(s) for s, _ in data["by_status"]])),
        "rounds_svg": mark_safe(charts.column_chart(  # noqa: S308
            data["rounds"], title="Rounds per document (current run)", x_label="rounds")),
        "stops_svg": mark_safe(charts.bar_chart(  # noqa: S308
            data["stop_reasons"], title="Stop reasons (current run)")),
        "rules_svg": mark_safe(charts.bar_chart(  # noqa: S308
            [(label, n) for _, label, n in data["flagged_by_rule"]], title="Flagged documents by rule",
            label_width=300, colours=["warn"] * len(data["flagged_by_rule"]))),
    }


@role_required(ADMIN, SUPERVISOR)
def batch_dashboard_view(request: HttpRequest, batch_id: int) -> HttpResponse:
    batch = get_batch(request, batch_id)
    live = request.htmx and request.GET.get("partial") == "live"
    if live and request.GET.get("idle") and not batch_in_progress(batch=batch):
        return HttpResponse(status=204)  # still nothing to read: htmx keeps the page and polls again later
    data = batch_dashboard(batch=batch)
    summary = family_labels(batch, audit_summary(batch=batch))
    states = dict(data["by_status"])
    in_progress = states.get("queued", 0) + states.get("processing", 0)
    context = {
        "batch": batch, "d": data, **dashboard_charts(data), "summary": summary, **estimate_charts(summary),
        "runs": batch_runs(batch=batch), "in_progress": in_progress,
        "median_time": _seconds(data["time"]["median"]), "p95_time": _seconds(data["time"]["p95"]),
    }
    if live:  # polled often while documents are being read, and now and then when none is (a re-run may start)
        return render(request, "batches/dashboard.html#live", context)
    return render(request, "batches/dashboard.html", context)
