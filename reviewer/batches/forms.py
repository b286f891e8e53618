from django import forms

from extraction.doctypes.selectors import doctype_choices, doctype_team
from extraction.ocr.registry import ENGINE_CHOICES
from extraction.pipeline.readable import doctype_needs_llm
from reviewer.teams.forms import TeamChoiceField


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        kwargs.setdefault("allow_empty_file", True)  # intake gives an empty file its own clear error
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, list | tuple):
            if not data and self.required:  # a POST without files is not an (empty) batch
                raise forms.ValidationError(self.error_messages["required"], code="required")
            return [single(d, initial) for d in data]
        return [single(data, initial)]


class UploadForm(forms.Form):
    name = forms.CharField(max_length=200)
    doctype = forms.ChoiceField(label="Document type")  # defined types too: the uploader's teams' (__init__)
    ocr_engine = forms.ChoiceField(label="OCR engine", choices=ENGINE_CHOICES, initial="auto")
    max_rounds = forms.IntegerField(label="Rounds of the validation loop", min_value=1, max_value=10, required=False)
    llm_input = forms.ChoiceField(
        label="LLM input", choices=[("", "configured default"), ("text", "text"), ("vision", "vision"), ("hybrid", "hybrid")],
        required=False,
    )
    files = MultipleFileField(help_text="PDF, PNG, JPEG, TIFF or WebP files, or a zip of them.")
    team = TeamChoiceField()

    def __init__(self, *args, teams: list[int], **kwargs) -> None:
        """`teams`: those the uploader may upload in; the types offered are theirs and the shared ones."""
        super().__init__(*args, **kwargs)
        self.fields["doctype"].choices = doctype_choices(teams=teams)

    def clean(self) -> dict:
        cleaned = super().clean()
        owner = doctype_team(name=cleaned.get("doctype") or "")
        team = cleaned.get("team")
        if owner is not None and team is not None and owner[0] != team.pk and not owner[1]:
            self.add_error("doctype", "That type belongs to another team: choose one of this team's types.")
        return cleaned

    def clean_doctype(self) -> str:
        # refused before any file is kept: a batch that can only fail is no use, and the admin learns why now
        name = self.cleaned_data["doctype"]
        if reason := doctype_needs_llm(name=name):
            raise forms.ValidationError(reason, code="needs_llm")
        return name
