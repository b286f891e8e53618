
from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views import defaults
from django_htmx.http import HTMX_STOP_POLLING

from extraction.models import Batch
from extraction.pipeline.ingest import NAME_MAX_BYTES, batch_create_from_files, clean_filename
from extraction.pipeline.readable import doctypes_needing_llm
from reviewer.access import has_role, role_required, team_ids
from reviewer.batches.deletion import DeletionError
from reviewer.batches.deletion import batch_delete as batch_delete_service
from reviewer.batches.forms import UploadForm
from reviewer.desk import selectors
from reviewer.roles import ADMIN, SUPERVISOR
from reviewer.teams.forms import teams_offered
from reviewer.teams.scope import get_for, request_team_ids
from reviewer.uploads import uploads_written

DOCUMENTS_PER_PAGE = 50


def get_batch(request: HttpRequest, batch_id: int) -> Batch:
    """The access helper for a batch: 404 when it does not exist or is another team's, 403 when one's role in
    its team is not the view's."""
    return get_for(request, Batch, pk=batch_id)


@role_required(ADMIN, SUPERVISOR)
def batch_list(request: HttpRequest) -> HttpResponse:
    return render(request, "batches/list.html", {"batches": selectors.batch_list_with_counts(teams=request_team_ids(request))})


@role_required(ADMIN, SUPERVISOR)
def batch_detail(request: HttpRequest, batch_id: int) -> HttpResponse:
    batch = get_batch(request, batch_id)
    counts = selectors.batch_status_counts(batch=batch)
    # A page of documents at a time: the progress poll renders the page shown, not a thousand rows every 2 s.
    page = Paginator(batch.documents.order_by("created_at", "id"), DOCUMENTS_PER_PAGE).get_page(request.GET.get("page"))
    context = {"batch": batch, "counts": counts, "documents": page.object_list, "page": page, "poll_seconds": 2}
    if request.htmx and request.GET.get("partial") == "progress":
        response = render(request, "batches/detail.html#progress", context)
        if counts["total"] and counts["done"] == counts["total"]:
            response.status_code = HTMX_STOP_POLLING
        return response
    return render(request, "batches/detail.html", context)


@role_required(ADMIN)
def batch_upload(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = _upload_form(request, request.POST, request.FILES)
        if form.is_valid():
            batch = _create_batch(request, form)
            unsent = selectors.batch_unsent_count(batch=batch)
            if unsent:
                messages.warning(
                    request, f"Batch {batch.name} was created and every file is kept, but the task queue did not "
                    f"answer, so processing of its {unsent} queued document{'s' if unsent != 1 else ''} is delayed. "
                    "They are sent on their own within a minute of the queue coming back: do not upload them again.")
            else:
                messages.success(request, f"Batch {batch.name} created; its documents are queued.")
            shortened = [short for f in form.cleaned_data["files"] if (short := clean_filename(f.name)) != f.name]
            if shortened:  # names past what a store holds (and past the parser's default, reviewer.apps)
                messages.info(request, f"{len(shortened)} file name{'s were' if len(shortened) != 1 else ' was'} "
                              f"longer than a stored file's name may be ({NAME_MAX_BYTES} bytes), so "
                              f"{'they are' if len(shortened) != 1 else 'it is'} kept shortened: {', '.join(shortened)}")
            return redirect("batch_detail", batch_id=batch.id)
    else:
        form = _upload_form(request)
    return render(request, "batches/upload.html",
                  {"form": form, "needs_llm": doctypes_needing_llm(teams=team_ids(request.user, ADMIN))})


def _upload_form(request: HttpRequest, *args) -> UploadForm:
    """The upload form of an admin: the teams they administer, and those teams' types."""
    return teams_offered(UploadForm(*args, teams=team_ids(request.user, ADMIN)), user=request.user, roles=(ADMIN,))


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler400: Django's, except for an upload whose multipart body the parser refused (a file's headers,
    its name among them, over UPLOAD_MAX_PART_HEADER_BYTES): the upload page says why, to an admin."""
    if (isinstance(exception, MultiPartParserError) and request.path == reverse("batch_upload")
            and hasattr(request, "user") and has_role(request.user, ADMIN)):
        if "header size" in str(exception):  # Django names no file: the part is refused before its name is read
            reason = (f"the name of one of its files is over {settings.UPLOAD_MAX_PART_HEADER_BYTES // 1024} KB, "
                      "longer than any file system gives a file. Rename that file and upload the batch again.")
        else:
            reason = f"{exception} Upload the batch again."
        return render(request, "batches/upload.html", {
            "form": _upload_form(request),
            "upload_error": f"The upload could not be read, so nothing was uploaded: {reason}",
            "needs_llm": doctypes_needing_llm(teams=team_ids(request.user, ADMIN)),
        }, status=400)
    return defaults.bad_request(request, exception)


def _create_batch(request: HttpRequest, form: UploadForm) -> Batch:
    options = {}
    if form.cleaned_data.get("max_rounds"):
        options["max_rounds"] = form.cleaned_data["max_rounds"]
    if form.cleaned_data.get("llm_input"):
        options["llm_input"] = form.cleaned_data["llm_input"]
    with uploads_written(form.cleaned_data["files"], prefix="proofdesk-upload-") as incoming:
        return batch_create_from_files(
            name=form.cleaned_data["name"],
            doctype=form.cleaned_data["doctype"],
            ocr_engine=form.cleaned_data["ocr_engine"],
            files=incoming,
            options=options,
            user=request.user,
            team_id=form.cleaned_data["team"].pk,
        )


@role_required(ADMIN)
def batch_delete(request: HttpRequest, batch_id: int) -> HttpResponse:
    """GET: the confirmation page; POST with the batch's name typed: delete it and record who did."""
    batch = get_batch(request, batch_id)
    error = ""
    if request.method == "POST":
        try:
            batch_delete_service(batch_id=batch.id, confirm_name=request.POST.get("confirm_name", ""),
                                 user=request.user, reason=request.POST.get("reason", "")[:2000])
        except DeletionError as exc:
            error = str(exc)
        else:
            messages.success(request, f"Batch {batch.name} was deleted; the deletion is on record.")
            return redirect("batch_list")
    counts = selectors.batch_status_counts(batch=batch)
    return render(request, "batches/delete.html", {"batch": batch, "counts": counts, "error": error},
                  status=400 if error else 200)
