"""An evaluation's report as the page's table and the CSV's rows: one row per figure, one column per run."""

from __future__ import annotations

from typing import Any

from extraction.evaluation.scoring import FALSE_PASS, OUTCOME_WORDS, OUTCOMES, field_kind


def _share(right: int, of: int) -> str:
    return f"{right} of {of} ({round(100 * right / of)} %)" if of else "none"


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{round(100 * value)} %"


def report_table(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Sections of rows {label, cells: [text per run], worse: bool (the candidate, first, does worse here)}."""
    arms = report["arms"]

    def worse(values: list[float | None], *, lower_is_worse: bool) -> bool:
        if len(values) < 2 or values[0] is None or values[1] is None or not report["done"]:
            return False
        return values[0] < values[1] if lower_is_worse else values[0] > values[1]

    fields = []
    for kind in report["fields"]:
        found = [arm["fields"].get(kind) for arm in arms]
        fields.append({"label": report["field_names"].get(kind, kind), "path": kind,
                       "cells": [_share(f["right"], f["compared"]) if f else "—" for f in found],
                       "worse": worse([f["accuracy"] if f else None for f in found], lower_is_worse=True)})
    outcomes = [{"label": OUTCOME_WORDS[o], "key": o, "cells": [str(arm["outcomes"][o]) for arm in arms],
                 "worse": o == FALSE_PASS and worse([arm["outcomes"][o] for arm in arms], lower_is_worse=False)}
                for o in OUTCOMES]
    rules = []
    for code in report["rules"]:
        found = [arm["rules"].get(code) for arm in arms]
        rules.append({"label": report["labels"].get(code) or code.replace("_", " "), "code": code,
                      "cells": [f"fired on {r['fired']}; right {_rate(r['precision'])}; caught {_rate(r['recall'])}"
                                if r else "—" for r in found],
                      "worse": worse([r["recall"] if r else None for r in found], lower_is_worse=True)})
    costs = [{"label": "Cost per document", "cells": [f"${arm['cost_per_document']}" if arm["cost_per_document"]
                                                      else "—" for arm in arms], "worse": False},
             {"label": "Seconds per document", "cells": [str(arm["seconds_per_document"] or "—") for arm in arms],
              "worse": False}]
    return {"fields": fields, "outcomes": outcomes, "rules": rules, "costs": costs, "documents": _documents(report)}


def _documents(report: dict[str, Any]) -> list[dict[str, Any]]:
    """A row per document of the set: its outcome under each run, and the fields read otherwise than people's."""
    names = report["field_names"]
    by_item = [{row["item"]: row for row in arm["per_document"]} for arm in report["arms"]]
    rows = []
    for row in report["arms"][0]["per_document"]:
        cells = []
        for arm in by_item:
            other = arm.get(row["item"])
            if other is None:
                cells.append("—")
                continue
            wrong = ", ".join(names.get(field_kind(p), p) if "[" not in p else p for p in other["wrong"])
            cells.append(OUTCOME_WORDS.get(other["outcome"], "being read") + (f"; wrong: {wrong}" if wrong else ""))
        rows.append({"label": row["name"], "cells": cells, "worse": False})
    return rows


def report_rows(report: dict[str, Any]) -> list[list[Any]]:
    """The CSV's rows: [figure, of, value per run], numbers as numbers."""
    arms = report["arms"]
    rows: list[list[Any]] = [["documents read", "", *[arm["done"] for arm in arms]]]
    rows += [[f"documents: {OUTCOME_WORDS[o]}", "", *[arm["outcomes"][o] for arm in arms]] for o in OUTCOMES]
    for kind in report["fields"]:
        rows.append(["field accuracy", kind, *[(arm["fields"].get(kind) or {}).get("accuracy") for arm in arms]])
    for code in report["rules"]:
        rows.append(["rule precision", code, *[(arm["rules"].get(code) or {}).get("precision") for arm in arms]])
        rows.append(["rule recall", code, *[(arm["rules"].get(code) or {}).get("recall") for arm in arms]])
    rows.append(["cost per document", "", *[arm["cost_per_document"] for arm in arms]])
    rows.append(["seconds per document", "", *[arm["seconds_per_document"] for arm in arms]])
    return rows
