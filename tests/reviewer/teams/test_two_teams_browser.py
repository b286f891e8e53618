"""Two teams on one instance, each with an admin, a reviewer and a supervisor, working side by side in a browser:
each uploads, reviews and audits, and neither sees a trace of the other on any page, export, API answer or
webhook."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from extraction.models import Batch, Document, Team
from extraction.pipeline.process import document_process
from reviewer.api.services import token_create
from reviewer.webhooks.models import Delivery, Endpoint
from reviewer.webhooks.signing import new_secret
from sheetgen.generate import generate_acta
from tests.support.accounts import PASSWORD, give_roles
from tests.support.desk_browser import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ROLES = ("admin", "reviewer", "supervisor")
TEAMS = {"north": (81, 82), "south": (91, 92)}  # each team's sheets: a clean one (passes) and one that breaks


def _team(slug: str, tmp_path) -> dict:
    team = Team.objects.create(name=slug.title(), slug=slug)
    people = {}
    for role in ROLES:
        people[role] = User.objects.create_user(username=f"{slug}-{role}", password=PASSWORD)
        give_roles(people[role], role, team=team)
    clean, broken = TEAMS[slug]
    files = []
    for seed, errors in ((clean, []), (broken, ["sum_mismatch"])):
        path = tmp_path / f"{slug}-acta-{seed}.pdf"
        path.write_bytes(generate_acta(seed=seed, errors=errors).pdf_bytes)
        files.append(path)
    # an endpoint of the team (made here: its URL is not resolved); what it is sent is read from its deliveries
    Endpoint.objects.create(url=f"https://{slug}.example.com/hook", secret=new_secret(), team=team,
                            events=["document.passed", "document.flagged", "document.reviewed", "batch.finished"])
    return {"team": team, "people": people, "files": files, "batch": f"{slug.title()} tally sheets"}


def _traces(team: dict) -> list[str]:
    """What would show this team to another: its batch's name, its files' names, its addresses."""
    batch = Batch.objects.get(name=team["batch"])
    return [team["batch"], *(p.name for p in team["files"]), f"/batches/{batch.id}/",
            *(f"/documents/{d.id}/" for d in batch.documents.all()), f"{team['team'].slug}.example.com"]


def _upload(page, base: str, team: dict) -> Batch:
    login(page, base, username=team["people"]["admin"].username)
    page.goto(f"{base}/batches/new/")
    page.fill("input[name=name]", team["batch"])
    page.select_option("select[name=doctype]", "acta")
    page.select_option("select[name=ocr_engine]", "pdf-text")
    page.set_input_files("input[name=files]", [str(p) for p in team["files"]])
    page.click("main form button[type=submit]")
    page.wait_for_load_state()
    batch = Batch.objects.get(name=team["batch"])
    assert batch.team == team["team"]
    for document in batch.documents.all():  # a worker reads them meanwhile
        document_process(document_id=document.id)
    return batch


def _review(page, base: str, team: dict, batch: Batch) -> Document:
    flagged = batch.documents.get(status="flagged")
    login(page, base, username=team["people"]["reviewer"].username)
    page.goto(f"{base}/queue/")
    assert flagged.filename in page.inner_text("main")
    page.click("#next-form button")  # claims the next of the team's queue: its one flagged sheet
    page.wait_for_selector("#fields a.field")
    assert f"/documents/{flagged.id}/" in page.url
    page.click("details.reject summary")
    page.fill("details.reject input[name=reason]", "the sheet is torn")
    with page.expect_response(lambda r: "/reject/" in r.url):
        page.click("details.reject button[type=submit]")
    flagged.refresh_from_db()
    assert flagged.review_status == "rejected"
    return flagged


def _audit(page, base: str, team: dict, batch: Batch) -> None:
    login(page, base, username=team["people"]["supervisor"].username)
    page.goto(f"{base}/audit/")
    page.click(f"text={team['batch']}")
    page.fill("input[name=amount]", "1")
    page.get_by_role("button", name="Draw", exact=True).click()
    page.wait_for_load_state()
    sample = batch.audit_samples.get()
    page.goto(base + reverse("audit_item", args=[sample.id, sample.items.get().id]))
    page.click("#decide-form input[value=agree]")
    with page.expect_response(lambda r: "/decide/" in r.url):
        page.click("#decide-form button[type=submit]")
    assert batch.audit_samples.get().items.get().verdict == "agree"


def _seen(page, base: str, url: str) -> str:
    response = page.goto(base + url)
    return f"{response.status} {page.content()}"


def test_two_teams_work_side_by_side_and_neither_sees_a_trace_of_the_other(live_server, browser, tmp_path):
    base = live_server.url
    teams = {slug: _team(slug, tmp_path) for slug in TEAMS}
    batches = {}
    for slug, team in teams.items():  # each team's day: upload, review, audit, each person in their browser
        for step in (_upload, _review, _audit):
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            page = context.new_page()
            page.set_default_timeout(15_000)
            if step is _upload:
                batches[slug] = _upload(page, base, team)
            else:
                step(page, base, team, batches[slug])
            context.close()

    for slug, team in teams.items():
        other = teams["south" if slug == "north" else "north"]
        marks, other_batch = _traces(other), batches["south" if slug == "north" else "north"]
        for role, person in team["people"].items():
            context = browser.new_context()
            page = context.new_page()
            login(page, base, username=person.username)
            pages = ["/", "/batches/", "/queue/", "/audit/", "/users/", "/webhooks/", "/account/tokens/", "/types/",
                     f"/batches/{batches[slug].id}/", f"/batches/{batches[slug].id}/dashboard/",
                     "/confidence/acta/"]
            for url in pages:
                seen = _seen(page, base, url)
                assert not [m for m in marks if m in seen], (slug, role, url)
            # the other team's own addresses answer as addresses of nothing do (a 404; a role that may not
            # open such a page at all is told so, whoever's it is)
            nothing = 10**9
            for url, none in [(f"/batches/{other_batch.id}/", f"/batches/{nothing}/"),
                              (f"/audit/batches/{other_batch.id}/", f"/audit/batches/{nothing}/"),
                              (f"/batches/{other_batch.id}/dashboard/", f"/batches/{nothing}/dashboard/"),
                              *((f"/documents/{d.id}/", f"/documents/{nothing}/") for d in other_batch.documents.all())]:
                status = page.goto(base + url).status
                assert status == page.goto(base + none).status and status in (403, 404), (slug, role, url)
            if role in ("admin", "supervisor"):  # the exports of one's own batch, as the browser downloads them
                for name in ("batch_export_values_csv", "batch_export_events_json"):
                    body = page.request.get(base + reverse(name, args=[batches[slug].id])).text()
                    assert team["files"][1].name in body and not [m for m in marks if m in body], (slug, name)
            context.close()
        # the API, with a token of each person in their team: their own documents, never the other's
        for role, person in team["people"].items():
            token = token_create(user=person, name="side by side", team=team["team"]).secret
            api = browser.new_context(extra_http_headers={"Authorization": f"Bearer {token}"})
            listed = api.request.get(f"{base}/api/v1/documents")
            assert listed.status == 200
            ids = {d["id"] for d in listed.json()["items"]}
            assert ids == set(batches[slug].documents.values_list("id", flat=True)), (slug, role)
            for document in other_batch.documents.all():
                assert api.request.get(f"{base}/api/v1/documents/{document.id}").status == 404
            api.close()
        # the webhooks: the team's endpoint was sent its own documents and batch only
        sent = [json.dumps(d.event.payload) for d in Delivery.objects.filter(endpoint__team=team["team"])
                .select_related("event")]
        assert sent and all(f'"batch": {batches[slug].id}' in s or f'"id": {batches[slug].id}' in s for s in sent)
        assert not [m for s in sent for m in marks if m in s], slug
