"""What the type editor's form posts for a definition, as an admin's browser would send it."""

from __future__ import annotations

from reviewer.types.presenters import rows_from_data


def posted(data: dict) -> dict[str, str]:
    """What the editor's form posts for `data` as the page shows it (a checked box posts 'on')."""
    rows = rows_from_data(data)
    post = {k: data.get(k, "") for k in ("name", "label", "description", "instructions")}
    for i, f in enumerate(rows["fields"]):
        post.update({f"field-{i}-{k}": str(v) for k, v in f.items() if k != "required"})
        if f["required"]:
            post[f"field-{i}-required"] = "on"
    for i, t in enumerate(rows["tables"]):
        post.update({f"table-{i}-{k}": t[k] for k in ("key", "label", "row_label", "purpose")})
        if t["group"]:
            post[f"table-{i}-group"] = "on"
    for i, r in enumerate(rows["rules"]):
        post.update({f"rule-{i}-{k}": r[k] for k in ("code", "label", "kind", "message", "message_none_of")})
        post.update({f"rule-{i}-{p['name']}": p["value"] for p in r["params"]})
        post.update({f"rule-{i}-{flag}": "on" for flag in ("not_future", "any") if r[flag]})
    for i, q in enumerate(rows["rubric"]):
        post.update({f"rubric-{i}-{k}": v for k, v in q.items()})
    return post
