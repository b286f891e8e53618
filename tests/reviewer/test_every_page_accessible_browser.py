"""In a real browser, axe (WCAG 2.0 and 2.1, levels A and AA) finds no serious or critical violation on any page
of the app, for the role that may see it, on a desktop screen (1400×900) and on a laptop's (1280×720).

Every page's data is real: the URL matrix's world (a batch with a passed and a flagged acta, an audit sample with
its item, a field sample, a defined document type, a webhook endpoint with a delivery) plus a trial of that type.
Building it costs seconds, so the first test walks every page once, at both sizes, and each page's test reads what
axe said of it there.

Every named URL of the URLconf is either a page walked here or a name in NOT_PAGES with the reason it is not one:
a new page cannot be forgotten silently.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from tests.support.accounts import PASSWORD
from tests.support.desk_browser import login
from tests.support.url_matrix import POST_ONLY

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
BLOCKING = ("serious", "critical")
VIEWPORTS = {"1400x900": {"width": 1400, "height": 900}, "1280x720": {"width": 1280, "height": 720}}
STORAGE_UNAVAILABLE = "/storage-unavailable/"  # no URL: the browser is answered the 503 page the middleware renders

# Named URLs that are not pages a person reads, each with why.
NOT_PAGES = {
    **{name: "takes only POST: an action that redirects or answers htmx, not a page"
       for name in POST_ONLY - {"confidence_refit"}},  # the refit answers with the page and its comparison: walked
    "logout": "takes only POST: logging out redirects to the login page",
    "home": "redirects to the role's start page (batch list, queue or audit home, all walked)",
    "user_password": "GET redirects to the user's page; a refused password shows users/edit.html (user_edit)",
    "desk_proof": "an htmx fragment of the desk (a plain GET redirects to the desk, walked)",
    "desk_presence": "an htmx fragment of the desk: who else has the document open",
    "desk_edit": "a plain GET redirects to the desk with the edit open, walked as desk_document_editing",
    "evaluation_run_csv": "a CSV file, not a page",
    "desk_page_image": "a download: the page's PNG",
    "desk_page_annotated": "a download: the page's PNG with its boxes drawn",
    "batch_export_values_csv": "a download: CSV",
    "batch_export_values_json": "a download: JSON",
    "batch_export_events_csv": "a download: CSV",
    "batch_export_events_json": "a download: JSON",
    "doctype_export": "a download: the type's YAML",
}
# Namespaces that are not pages, but for the names walked in PAGES.
NOT_PAGE_NAMESPACES = {"api": "the API answers programs with JSON (and page PNGs); its docs page is walked"}


def url_names(patterns=None, namespace: str = ""):
    """Every named URL of the URLconf, as reverse() spells it ("api:openapi-view")."""
    from django.urls import get_resolver

    for p in patterns if patterns is not None else get_resolver().url_patterns:
        if hasattr(p, "url_patterns"):
            yield from url_names(p.url_patterns, f"{namespace}{p.namespace}:" if p.namespace else namespace)
        elif p.name:
            yield namespace + p.name


def _not_a_page(name: str) -> bool:
    return name in NOT_PAGES or name.split(":")[0] in NOT_PAGE_NAMESPACES and ":" in name


def _submit(form: str, button: str = "button[type=submit]", **values: str):
    """Fill a form's fields (name=value) and send it as it is, the browser's own checks off: the server's error
    messages, or the page it answers with."""

    def act(page) -> None:
        for name, value in values.items():
            page.fill(f"{form} [name={name}]", value)
        page.evaluate(f"document.querySelector({form!r}).noValidate = true")
        with page.expect_navigation():
            page.click(f"{form} {button}")

    return act


def _rerun_with_an_unknown_engine(page) -> None:
    page.evaluate("""() => { const s = document.querySelector('#rerun-form select[name=ocr_engine]');
                             s.add(new Option('nope', 'nope', true, true)); }""")
    with page.expect_navigation():
        page.click("#rerun-form button[type=submit]")


@dataclass(frozen=True)
class Shown:
    """A page as one role sees it: `url` builds its address from the data; `act` brings it to the state shown."""

    id: str
    role: str
    url: Callable[[dict], str]
    url_name: str | None = None  # the named URL the page is (None: an error page no URL names)
    act: Callable | None = field(default=None, compare=False)
    status: int = 200  # what the address answers
    ready: str | None = None  # a page drawn by its script: what shows it is drawn


A, R, S, ANON = "admin", "reviewer", "supervisor", "anonymous"
INSTANCE = "instance-admin"  # a superuser: the teams page is above any one team

PAGES = [
    Shown("login", ANON, lambda w: "/login/", "login"),
    Shown("team_list", INSTANCE, lambda w: "/teams/", "team_list"),
    Shown("login_refused", ANON, lambda w: "/login/", "login",
          _submit("main form", username="nobody", password="not the password")),
    Shown("not_allowed_403", R, lambda w: "/batches/", status=403),
    Shown("not_found_404", R, lambda w: "/documents/999999999/", status=404),
    Shown("bad_request_400", R, lambda w: "/queue/?batch=%00", status=400),
    Shown("storage_unavailable_503", A, lambda w: STORAGE_UNAVAILABLE, status=503),
    Shown("queue", R, lambda w: "/queue/", "queue"),
    Shown("desk_document", R, lambda w: f"/documents/{w['flagged'].id}/", "desk_document"),
    Shown("desk_document_field_chosen", R, lambda w: f"/documents/{w['flagged'].id}/?field=acta_id", "desk_document"),
    Shown("desk_document_editing", R, lambda w: f"/documents/{w['flagged'].id}/?edit=acta_id", "desk_document"),
    Shown("desk_document_passed_read_only", S, lambda w: f"/documents/{w['passed'].id}/", "desk_document"),
    Shown("desk_document_failed_trial", A, lambda w: f"/documents/{w['trial'].id}/", "desk_document"),
    Shown("desk_history", R, lambda w: f"/documents/{w['flagged'].id}/history/", "desk_history"),
    Shown("token_list", R, lambda w: "/account/tokens/", "token_list"),
    Shown("token_list_with_a_new_token", R, lambda w: "/account/tokens/", "token_list",
          _submit("#token-new", name="the nightly export")),
    Shown("api_docs", R, lambda w: "/api/v1/docs", "api:openapi-view", ready="#swagger-ui .opblock"),
    Shown("batch_list", A, lambda w: "/batches/", "batch_list"),
    Shown("batch_detail", A, lambda w: f"/batches/{w['batch'].id}/", "batch_detail"),
    Shown("batch_upload", A, lambda w: "/batches/new/", "batch_upload"),
    Shown("batch_upload_refused", A, lambda w: "/batches/new/", "batch_upload", _submit("form.upload")),
    Shown("batch_dashboard", S, lambda w: f"/batches/{w['batch'].id}/dashboard/", "batch_dashboard"),
    Shown("batch_delete", A, lambda w: f"/batches/{w['batch'].id}/delete/", "batch_delete"),
    Shown("batch_delete_refused", A, lambda w: f"/batches/{w['batch'].id}/delete/", "batch_delete",
          _submit("main form.stack", confirm_name="not its name")),
    Shown("batch_rerun", A, lambda w: f"/batches/{w['batch'].id}/rerun/", "batch_rerun"),
    Shown("batch_rerun_refused", A, lambda w: f"/batches/{w['batch'].id}/rerun/", "batch_rerun",
          _rerun_with_an_unknown_engine),
    Shown("doctype_list", A, lambda w: "/types/", "doctype_list"),
    Shown("doctype_new", A, lambda w: "/types/new/", "doctype_new"),
    Shown("doctype_new_refused", A, lambda w: "/types/new/", "doctype_new", _submit("#doctype-form", "#save-button")),
    Shown("doctype_new_from_invoice", A, lambda w: "/types/new/?from=invoice", "doctype_new"),
    Shown("doctype_new_proposal_being_read", A, lambda w: f"/types/new/?proposal={w['proposal'].batch_id}",
          "doctype_new"),
    Shown("doctype_edit", A, lambda w: "/types/defined/", "doctype_edit"),
    Shown("doctype_try_it", A, lambda w: f"/types/defined/?trial={w['trial'].batch_id}", "doctype_edit"),
    Shown("doctype_try_it_being_read", A, lambda w: f"/types/defined/?trial={w['trial_queued'].batch_id}",
          "doctype_edit"),
    Shown("evaluation_set", A, lambda w: "/types/acta/evaluation/", "evaluation_set"),
    Shown("evaluation_set_refused", A, lambda w: "/types/acta/evaluation/", "evaluation_set",
          _submit("#evaluation-upload")),
    Shown("evaluation_run", A, lambda w: f"/evaluations/{w['evaluation'].id}/", "evaluation_run"),
    Shown("evaluation_run_being_read", A, lambda w: f"/evaluations/{w['evaluation_waiting'].id}/", "evaluation_run"),
    Shown("doctype_make_live", A, lambda w: "/types/defined/live/2/", "doctype_make_live"),
    Shown("user_list", A, lambda w: "/users/", "user_list"),
    Shown("user_list_after_a_save", A, lambda w: f"/users/{w['users'][R].id}/", "user_list", _submit("#user-roles")),
    Shown("user_new", A, lambda w: "/users/new/", "user_new"),
    Shown("user_new_refused", A, lambda w: "/users/new/", "user_new", _submit("form.user-form")),
    Shown("user_edit", A, lambda w: f"/users/{w['users'][R].id}/", "user_edit"),
    Shown("user_edit_password_refused", A, lambda w: f"/users/{w['users'][R].id}/", "user_edit",
          _submit("#user-password", new_password1="one thing", new_password2="another")),
    Shown("webhook_list", A, lambda w: "/webhooks/", "webhook_list"),
    Shown("webhook_list_refused", A, lambda w: "/webhooks/", "webhook_list",
          _submit("#endpoint-new", url="http://127.0.0.1/hook")),
    Shown("webhook_detail", A, lambda w: f"/webhooks/{w['endpoint'].id}/", "webhook_detail"),
    Shown("audit_home", S, lambda w: "/audit/", "audit_home"),
    Shown("audit_batch", S, lambda w: f"/audit/batches/{w['batch'].id}/", "audit_batch"),
    Shown("audit_sample", S, lambda w: f"/audit/samples/{w['sample'].id}/", "audit_sample"),
    Shown("audit_item", S, lambda w: f"/audit/samples/{w['sample'].id}/items/{w['item'].id}/", "audit_item"),
    Shown("field_sample", S, lambda w: f"/audit/field-samples/{w['field_sample'].id}/", "field_sample"),
    Shown("field_item", S, lambda w: f"/audit/field-samples/{w['field_sample'].id}/fields/{w['field_item'].id}/",
          "field_item"),
    Shown("confidence_page", S, lambda w: "/confidence/acta/", "confidence_page"),
    Shown("confidence_refit", S, lambda w: "/confidence/acta/", "confidence_refit",
          _submit("form[action$='/refit/']")),
]

# Pages with a serious violation in files fixed elsewhere: page id -> why (strict: the test says when it is gone).
KNOWN: dict[str, str] = {}  # page id -> why it may not pass yet (strict xfail)

_WALKED: dict[str, dict] = {}  # page id -> viewport -> what axe found there ("error": the walk itself failed)


def _trial_of_the_defined_type(batch_model, document_model, users, status: str = "failed") -> object:
    """A trial of the defined type, as the "Try it" button leaves it: failed (no model to read with), or still
    waiting for a worker (its page polls its progress)."""
    from extraction.doctypes.selectors import doctype_version_get

    saved = doctype_version_get(name="defined")
    trial = batch_model.objects.create(name=f"Trial of {saved.label}", doctype="defined", trial=True,
                                       settings={"definition": saved.definition}, created_by=users[A])
    failed = {"error_code": "llm", "error_message": "No model is configured to read it."} if status == "failed" else {}
    return document_model.objects.create(batch=trial, filename="sample.pdf", sha256="0" * 64, status=status, **failed)


def _storage_unavailable_html(user) -> str:
    """The 503 page the middleware renders when the file store fails (no store fails in a test)."""
    from django.template.loader import render_to_string
    from django.test import RequestFactory

    request = RequestFactory().get(STORAGE_UNAVAILABLE)
    request.user = user
    request._messages = []
    return render_to_string("storage_unavailable.html", {"upload": True}, request=request)


def _axe(page) -> tuple[list[dict], list[dict], int]:
    """The serious or critical violations, the others, and how many rules axe found kept (it did run)."""
    from axe_playwright_python.sync_playwright import Axe

    response = Axe().run(page, options={"runOnly": {"type": "tag", "values": TAGS}}).response
    found = response["violations"]
    described = [{"id": v["id"], "impact": v["impact"], "help": v["help"], "nodes": len(v["nodes"]),
                  "targets": [n["target"] for n in v["nodes"]][:5],
                  "why": next((c["message"] for c in v["nodes"][0]["any"] + v["nodes"][0]["all"]), "")}
                 for v in found]
    return ([v for v in described if v["impact"] in BLOCKING], [v for v in described if v["impact"] not in BLOCKING],
            len(response["passes"]))


def _walk(request) -> None:
    from extraction.models import Batch, Document

    base = request.getfixturevalue("live_server").url
    browser = request.getfixturevalue("browser")
    users = request.getfixturevalue("users")
    world = {**request.getfixturevalue("world"), "users": users}
    world["trial"] = _trial_of_the_defined_type(Batch, Document, users)
    world["trial_queued"] = _trial_of_the_defined_type(Batch, Document, users, status="queued")
    proposal = Batch.objects.create(name="Fields proposed from a sample", doctype="proposal", trial=True,
                                    settings={"propose": True}, created_by=users[A])
    world["proposal"] = Document.objects.create(batch=proposal, filename="sample.pdf", sha256="1" * 64)
    unavailable = _storage_unavailable_html(users[A])
    from django.contrib.auth.models import User

    User.objects.create_superuser(username=INSTANCE, password=PASSWORD)
    for role in (ANON, R, S, A, INSTANCE):
        for size, viewport in VIEWPORTS.items():
            context = browser.new_context(viewport=viewport)
            context.route(base + STORAGE_UNAVAILABLE,
                          lambda route: route.fulfill(status=503, content_type="text/html", body=unavailable))
            page = context.new_page()
            page.set_default_timeout(60_000)  # a bound on a hang, not a speed target: parallel runs share the CPU
            try:
                if role != ANON:
                    login(page, base, role)
                for shown in (p for p in PAGES if p.role == role):
                    status = page.goto(base + shown.url(world)).status
                    page.wait_for_load_state("networkidle")
                    if shown.ready:
                        page.wait_for_selector(shown.ready)
                    if shown.act:
                        shown.act(page)
                        page.wait_for_load_state("networkidle")
                    serious, others, kept = _axe(page)
                    _WALKED.setdefault(shown.id, {})[size] = {"url": page.url, "status": status, "title": page.title(),
                                                              "serious": serious, "others": others, "kept": kept}
            finally:
                context.close()


@pytest.fixture
def walked(request, tmp_path_factory) -> dict:
    """What axe found on every page (the first test to ask walks them all; under pytest-xdist the first worker
    to ask walks them and the others read what it wrote, so a run walks the pages once)."""
    if not _WALKED:
        shared = tmp_path_factory.getbasetemp()
        if os.environ.get("PYTEST_XDIST_WORKER"):
            shared = shared.parent  # the run's folder, above each worker's
        with open(shared / "accessibility_walk.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            found = shared / "accessibility_walk.json"
            if found.exists():
                _WALKED.update(json.loads(found.read_text()))
            else:
                try:
                    _walk(request)
                except Exception as err:
                    _WALKED["error"] = {"error": repr(err)}
                    raise
                finally:
                    found.write_text(json.dumps(_WALKED))
    if "error" in _WALKED:
        pytest.fail(f"the walk of the pages failed: {_WALKED['error']['error']}")
    return _WALKED


def test_every_named_url_is_a_page_walked_here_or_named_as_not_a_page():
    named = set(url_names())
    walked = {p.url_name for p in PAGES if p.url_name}
    forgotten = {name for name in named - walked if not _not_a_page(name)}
    assert forgotten == set(), "a page to add to PAGES (or a name to NOT_PAGES, with why it is no page)"
    assert walked - named == set() and set(NOT_PAGES) - named == set(), "a name the URLconf no longer has"
    assert {name for name in walked if ":" in name} <= {"api:openapi-view"}, "a page of a namespace said to be none"
    assert walked & set(NOT_PAGES) == set(), "a name both walked and said to be no page"
    assert len({p.id for p in PAGES}) == len(PAGES), "two pages of one id"


def _said(v: dict) -> str:
    return f"{v['impact']} {v['id']} ({v['help']}) on {v['nodes']} element(s), e.g. {v['targets']}: {v['why']}"


@pytest.mark.parametrize("shown", [pytest.param(p, id=p.id, marks=[pytest.mark.xfail(reason=KNOWN[p.id], strict=True)]
                                                if p.id in KNOWN else []) for p in PAGES])
def test_no_page_of_the_app_has_a_serious_accessibility_violation(walked, shown):
    """At 1400×900 and at 1280×720, as the role that may see the page; the minor and moderate ones are printed."""
    seen = walked[shown.id]
    assert set(seen) == set(VIEWPORTS)
    assert {found["status"] for found in seen.values()} == {shown.status}, {s: f["url"] for s, f in seen.items()}
    assert all(found["kept"] >= 5 for found in seen.values()), "axe checked next to nothing"
    for size, found in seen.items():
        for v in found["others"]:
            print(f"{shown.id} at {size}: {_said(v)}")
    problems = [f"at {size}: {_said(v)}" for size, found in seen.items() for v in found["serious"]]
    assert problems == [], f"{shown.id} ({seen['1400x900']['url']}):\n" + "\n".join(problems)
