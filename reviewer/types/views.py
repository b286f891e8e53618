"""Admins define document types on the app's pages: list, edit (with a preview of what the model receives),
try a draft on one document, save it as a new version, and export it as YAML."""

from __future__ import annotations

import json

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django_htmx.http import HttpResponseClientRefresh

from extraction.doctypes.defined.check import DefinitionError, spec_parse, spec_warnings
from extraction.doctypes.defined.files import spec_to_yaml
from extraction.doctypes.defined.spec import FIELD_KINDS, RULE_KINDS
from extraction.doctypes.registry import UnknownDocumentType, all_doctypes, doctype_from_data, get_doctype
from extraction.doctypes.selectors import (
    doctype_live_version,
    doctype_live_versions,
    doctype_version_get,
    doctype_version_newest,
    doctype_versions,
)
from extraction.doctypes.services import doctype_share_set, doctype_version_save
from extraction.models import Batch, Document, Extraction
from extraction.ocr.registry import ENGINE_CHOICES
from extraction.pipeline.propose import doctype_proposal_start
from extraction.pipeline.rerun import llm_available
from extraction.pipeline.trial import doctype_trial_start
from extraction.states import FINAL_STATUSES
from reviewer.access import role_required
from reviewer.batches.deletion import DeletionError, batch_delete
from reviewer.roles import ADMIN
from reviewer.teams.scope import acting_team, defined_type_team, get_for, request_team_ids
from reviewer.types.presenters import data_from_post, post_edited, problems_placed, rows_from_data
from reviewer.uploads import uploads_written
from reviewer.whole_numbers import whole_number

KEPT_TRIALS = 3  # an admin's newest trials, kept to compare drafts on the desk


def get_trial(request: HttpRequest, batch_id: int) -> Batch:
    """The access helper for a trial: 404 unless it is a trial batch of one's team."""
    return get_for(request, Batch.objects.filter(trial=True), pk=batch_id)


@role_required(ADMIN)
def doctype_list(request: HttpRequest) -> HttpResponse:
    defined = doctype_live_versions(teams=request_team_ids(request))
    names = {v.name for v in defined}
    builtin = [{"name": d.name, "label": d.label, "kind": "shipped definition" if d.definition is not None else "code"}
               for d in all_doctypes() if d.name not in names]
    return render(request, "doctypes/list.html",
                  {"builtin": builtin, "defined": defined, "own_teams": request_team_ids(request)})


@role_required(ADMIN)
def doctype_edit(request: HttpRequest, name: str | None = None) -> HttpResponse:
    """A new type (no `name`) or the next version of a defined one. POST actions: preview, try, save."""
    # a defined type's own team edits it; a new type is made in the team chosen (?team=, else the first)
    team_id = defined_type_team(request, name) if name else acting_team(request).pk
    saved = doctype_version_newest(name=name) if name else None  # the editor goes on from the last saved
    if name and saved is None:
        raise Http404("No such document type.")
    if request.method == "POST" and request.POST.get("action") in ("share", "unshare") and name:
        doctype_share_set(name=name, shared=request.POST["action"] == "share")
        sharing = request.POST["action"] == "share"
        messages.success(request, f"{saved.label} is {'shared with every team' if sharing else 'no longer shared'}.")
        return redirect("doctype_edit", name=name)
    trial_document = proposal = None
    problems: list[str] = []
    extra: dict[str, int] = {}
    if request.method == "POST" and request.POST.get("action") == "propose" and not name:
        return _propose(request, team_id)
    if request.method == "POST":
        action = request.POST.get("action", "preview")
        edited = post_edited(request.POST, action)
        data = data_from_post(edited[0] if edited else request.POST)
        if name:
            data["name"] = name  # a defined type keeps its name: a new name is a new type
        if edited:  # a row added, removed or moved: the draft comes back as it is, checked when asked
            action, extra = "edit", edited[1]
        try:
            if action == "save":
                version, created = doctype_version_save(data=data, user=request.user, team_id=team_id)
                live = doctype_live_version(name=version.name)
                if created and live != version.version:
                    messages.success(request, f"Saved {version.label} as version {version.version}. v{live} stays live: "
                                              "the type has an evaluation set, so run it on this version and make it "
                                              "live after its comparison.")
                elif created:
                    messages.success(request, f"Saved {version.label} as version {version.version}.")
                else:
                    messages.info(request, f"Nothing changed since version {version.version}; nothing saved.")
                return redirect("doctype_edit", name=version.name)
            if action == "try":
                # Post/redirect/get: the draft page comes back from its trial, so Back from the desk (pages are
                # never stored by the browser) asks for the page again instead of resending the form
                batch_id = _try(request, data, team_id).batch_id
                return redirect(f"{reverse('doctype_edit', args=[name]) if name else reverse('doctype_new')}"
                                f"?trial={batch_id}")
            elif action != "edit":
                spec_parse(data)
        except DefinitionError as err:
            problems = err.problems
    elif request.GET.get("trial"):
        trial = get_trial(request, whole_number(request.GET["trial"]) or 0)
        data, trial_document = trial.settings["definition"], trial.documents.first()
        if request.htmx and request.GET.get("partial") == "trial":  # the trial's progress, polled while it is read
            return render(request, "doctypes/edit.html#trial", _trial_context(trial_document))
    elif request.GET.get("proposal") and not name:
        proposal = get_proposal(request, whole_number(request.GET["proposal"]) or 0).documents.first()
        done = proposal is None or proposal.status in FINAL_STATUSES
        if request.htmx and request.GET.get("partial") == "proposal":  # polled while the model proposes
            return HttpResponseClientRefresh() if done else render(request, "doctypes/edit.html#proposal",
                                                                   {"proposal": proposal})
        read = proposal is not None and proposal.status == "passed"
        answer = Extraction.objects.current_for(proposal).answer if read else None
        data = answer or {"name": "", "label": "", "description": "", "instructions": "", "fields": [], "rules": []}
    elif saved is not None:
        data = saved.definition
    elif request.GET.get("from"):
        data = _shipped(request.GET["from"])
    else:
        data = {"name": "", "label": "", "description": "", "instructions": "", "fields": [], "rules": []}
    rows = rows_from_data(data, extra=extra)
    problems, by_rule = problems_placed(problems, data)
    for index, found in by_rule.items():
        rows["rules"][index]["problems"] = found
    here = reverse("doctype_edit", args=[name]) if name else reverse("doctype_new")
    context = {
        "name": name, "saved": saved, "data": data, "rows": rows, "problems": problems,
        "table_keys": [t["key"] for t in rows["tables"] if t["key"]],
        # a row added, removed or moved comes back without a reload; without script the button posts the form
        "edit_hx": format_html('hx-post="{}" hx-target="#doctype-form" hx-select="#doctype-form" hx-swap="outerHTML"',
                               here),
        "warnings": _warnings(data) if not problems else [],
        "preview": _preview(data) if not problems else None, "field_kinds": FIELD_KINDS, "rule_kinds": RULE_KINDS,
        "engines": ENGINE_CHOICES, **_trial_context(trial_document), "proposal": proposal,
        "proposal_done": proposal is not None and proposal.status in FINAL_STATUSES,
        "versions": doctype_versions(name=name) if name else [],
        "live": doctype_live_version(name=name) if name else None,
    }
    return render(request, "doctypes/edit.html", context, status=400 if problems else 200)


def get_proposal(request: HttpRequest, batch_id: int) -> Batch:
    """The access helper for a sample the model proposes fields from: 404 unless it is one of one's team."""
    return get_for(request, Batch.objects.filter(trial=True, settings__propose=True), pk=batch_id)


def _propose(request: HttpRequest, team_id: int) -> HttpResponse:
    """Queue the sample for a worker to read and the model to propose fields from; the page then polls it."""
    upload = request.FILES.get("proposal_sample")
    if not llm_available():
        messages.error(request, "Proposing fields needs an LLM: set LLM_BASE_URL and LLM_MODEL, or start from a "
                                "shipped definition or from nothing.")
    elif upload is None:
        messages.error(request, "Choose a sample document to propose fields from.")
    else:
        with uploads_written([upload], prefix="proofdesk-proposal-") as (sample,):
            document = doctype_proposal_start(file=sample, ocr_engine=request.POST.get("proposal_ocr_engine") or "auto",
                                              user=request.user, team_id=team_id)
        _forget_old_trials(request.user)
        return redirect(f"{reverse('doctype_new')}?proposal={document.batch_id}")
    return redirect("doctype_new")


def _trial_context(document: Document | None) -> dict:
    return {"trial": document, "trial_done": document is None or document.status in FINAL_STATUSES}


def _warnings(data: dict) -> list[str]:
    try:
        return spec_warnings(spec_parse(data))
    except DefinitionError:
        return []  # the definition's problems are shown where it is saved or previewed


def _shipped(name: str) -> dict:
    """A shipped definition to start a new type from (a new type needs its own name)."""
    try:
        definition = get_doctype(name).definition
    except UnknownDocumentType:
        definition = None
    if definition is None:
        raise Http404("No shipped definition of that name.")
    return {**definition.as_data(), "name": ""}


def _try(request: HttpRequest, data: dict, team_id: int) -> Document:
    upload = request.FILES.get("sample")
    if upload is None:
        raise DefinitionError(["choose a document to try the type on"])
    with uploads_written([upload], prefix="proofdesk-trial-") as (sample,):
        document = doctype_trial_start(data=data, file=sample, ocr_engine=request.POST.get("ocr_engine") or "auto",
                                       user=request.user, team_id=team_id)
    _forget_old_trials(request.user)
    return document


def _forget_old_trials(user) -> None:
    """An admin's trials beyond their newest few are deleted with their files: a trial is a draft's scratch (an
    evaluation's hidden batch is not one)."""
    old = Batch.objects.filter(trial=True, created_by=user, evaluation_run__isnull=True).order_by(
        "-created_at", "-id")[KEPT_TRIALS:]
    for batch in old:
        try:
            batch_delete(batch_id=batch.id, confirm_name=batch.name, user=user, reason="an older trial of a draft type")
        except DeletionError:
            continue  # still being read: the next trial deletes it


def _preview(data: dict) -> dict | None:
    """What the model will receive for this definition: the instructions and the answer's JSON schema."""
    try:
        doctype = doctype_from_data(spec_parse(data).as_data())
    except DefinitionError:
        return None
    return {"prompt": doctype.system_prompt,
            "schema": json.dumps(doctype.schema.model_json_schema(), indent=2, ensure_ascii=False)}


@role_required(ADMIN)
def doctype_export(request: HttpRequest, name: str) -> HttpResponse:
    """The live version (or ?version=N) as a YAML file, for a team's git."""
    version = request.GET.get("version", "")
    defined_type_team(request, name, shared_too=True)  # its team's, or shared: another team's is a 404
    saved = doctype_version_get(name=name, version=whole_number(version))
    if saved is None:
        raise Http404("No such document type.")
    response = HttpResponse(spec_to_yaml(spec_parse(saved.definition)), content_type="application/yaml; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{saved.name}-v{saved.version}.yaml"'
    return response
