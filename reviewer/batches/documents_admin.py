"""Admin actions on one document: retry a failed one, attach a precomputed Textract response."""

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from extraction.models import Document
from extraction.pipeline.ingest import document_attach_textract
from extraction.pipeline.intake import IntakeError
from extraction.pipeline.requeue import document_requeue
from reviewer.access import role_required
from reviewer.roles import ADMIN
from reviewer.teams.scope import get_for


class TextractForm(forms.Form):
    textract_json = forms.FileField(label="Textract JSON")


def get_document_for_admin(request: HttpRequest, document_id: int) -> Document:
    return get_for(request, Document.objects.select_related("batch"), pk=document_id)


@require_POST
@role_required(ADMIN)
def document_retry(request: HttpRequest, document_id: int) -> HttpResponse:
    document = get_document_for_admin(request, document_id)
    if document.duplicate_of_id:
        messages.error(request, f"{document.filename} is a duplicate; it is not processed twice.")
    elif not document.kind:  # refused at upload: a retry would read the same bytes
        messages.error(request, f"{document.filename} was refused at upload ({document.error_message}); a retry "
                                "would read the same file: upload a good copy instead.")
    elif document_requeue(document_id=document.id):
        messages.success(request, f"{document.filename} is queued again.")
    else:  # only a finished document moves (in the same guarded update): this one is queued or running
        messages.error(request, f"{document.filename} is still being processed; retry when it has finished.")
    return redirect("batch_detail", batch_id=document.batch_id)


@require_POST
@role_required(ADMIN)
def document_textract(request: HttpRequest, document_id: int) -> HttpResponse:
    document = get_document_for_admin(request, document_id)
    form = TextractForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "Choose a Textract JSON file to attach.")
    else:
        upload = form.cleaned_data["textract_json"]
        if upload.size > 50 * 1024 * 1024:
            messages.error(request, "That file is over 50 MB; a Textract response for one document is far smaller.")
            return redirect("batch_detail", batch_id=document.batch_id)
        try:
            document_attach_textract(document=document, content=upload, filename=upload.name)
        except IntakeError as exc:
            messages.error(request, f"{document.filename}: {exc}")
        else:
            messages.success(request, f"{document.filename} will be read from the attached Textract response "
                                      "(a file that is not one fails the document with the reason).")
    return redirect("batch_detail", batch_id=document.batch_id)
