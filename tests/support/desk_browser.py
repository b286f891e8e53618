"""Helpers of the browser tests: log in, open a document on the desk, read geometry."""

from __future__ import annotations

from tests.support.accounts import PASSWORD


def login(page, base: str, role: str = "reviewer", *, username: str | None = None) -> None:
    page.goto(base + "/login/")
    page.fill("input[name=username]", username or role)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_load_state()
    assert "/login/" not in page.url, page.url


def open_desk(page, base: str, document_id: int, query: str = "") -> None:
    page.goto(f"{base}/documents/{document_id}/{query}")
    page.wait_for_selector("#fields a.field")


def rect(page, selector: str) -> dict:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not rendered"
    return box


def inside(inner: dict, outer: dict, slack: float = 1.0) -> bool:
    return (inner["x"] >= outer["x"] - slack and inner["y"] >= outer["y"] - slack
            and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + slack
            and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + slack)


def overlaps(a: dict, b: dict) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


def select_field(page, path: str) -> None:
    page.click(f'#fields a.field[data-path="{path}"]')
    page.wait_for_selector(f'#page-pane[data-field="{path}"]')


def shown_boxes(page) -> list[dict]:
    return [b.bounding_box() for b in page.locator("#page-pane .proof-box.on").all()]
