"""Proofdesk's data. State changes go through extraction.pipeline.transitions, never through save() in views."""

from __future__ import annotations

from typing import Any

from django.conf import settings as conf
from django.db import models
from django.db.models import OuterRef, Q, Subquery

from extraction.states import ReviewStatus, Status, StopReason


def _choices(enum) -> list[tuple[str, str]]:
    return [(member.value, member.value.title()) for member in enum]


def original_path(instance: Document, filename: str) -> str:
    return f"batches/{instance.batch_id}/originals/{instance.sha256[:2]}/{instance.sha256}/{filename}"


def page_image_path(instance: Page, filename: str) -> str:
    return f"batches/{instance.document.batch_id}/pages/{instance.document_id}/{filename}"


DEFAULT_TEAM_SLUG = "default"


class Team(models.Model):
    """The boundary of what a person sees and does: a team owns its batches (and all in them), its defined
    document types, its API tokens and webhooks. People belong to teams through reviewer.Membership."""

    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=50, unique=True)  # what an identity provider's claim names
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


def default_team_id() -> int:
    """The team that held everything before teams existed, and holds what is made without naming one (a
    one-team instance never names it). Made on first use, as after a flush."""
    return Team.objects.get_or_create(slug=DEFAULT_TEAM_SLUG, defaults={"name": "Default"})[0].pk


class Batch(models.Model):
    team = models.ForeignKey(Team, on_delete=models.PROTECT, default=default_team_id, related_name="batches")
    name = models.CharField(max_length=200)
    doctype = models.CharField(max_length=40)
    # the version of a type defined in the app the batch was uploaded under (None for a coded or shipped type)
    doctype_version = models.PositiveIntegerField(null=True, blank=True)
    # an admin trying a draft definition (settings["definition"]) on a document before saving it: kept out of
    # the batch list, the queue, audits and calibration
    trial = models.BooleanField(default=False)
    ocr_engine = models.CharField(max_length=40, default="auto")
    # LLM model, input mode, max rounds for this batch; empty means the configured defaults.
    settings = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(conf.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "batches"

    def __str__(self) -> str:
        return self.name


def upload_path(instance: Upload, filename: str) -> str:
    return f"batches/{instance.batch_id}/uploads/{instance.sha256[:2]}/{instance.sha256}/{filename}"


class Upload(models.Model):
    """Every file an admin sent, kept unchanged (a zip as well as the documents taken out of it)."""

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="uploads")
    filename = models.CharField(max_length=255)
    file = models.FileField(upload_to=upload_path, max_length=500)
    sha256 = models.CharField(max_length=64)
    size = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.filename


class Document(models.Model):
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="documents")
    upload = models.ForeignKey(Upload, null=True, blank=True, on_delete=models.SET_NULL, related_name="documents")
    filename = models.CharField(max_length=255)
    original = models.FileField(upload_to=original_path, max_length=500, blank=True)
    sha256 = models.CharField(max_length=64)
    size = models.BigIntegerField(default=0)
    mime = models.CharField(max_length=100, blank=True)
    kind = models.CharField(max_length=10, blank=True)  # pdf | image
    page_count = models.PositiveIntegerField(default=0)
    duplicate_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    status = models.CharField(max_length=20, choices=_choices(Status), default=Status.QUEUED.value)
    review_status = models.CharField(max_length=20, choices=_choices(ReviewStatus), default=ReviewStatus.UNREVIEWED.value)
    # Bumped by every service write so that two reviewers cannot overwrite each other unseen.
    version = models.PositiveIntegerField(default=0)
    error_code = models.CharField(max_length=40, blank=True)
    error_message = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    # The Celery task that holds the document while it is processing: the same task delivered again
    # (its worker died) may take it over; any other delivery is a no-op.
    task_id = models.CharField(max_length=64, blank=True)
    # The worker holding the document renews this while it works (its lease); the reaper takes back only a
    # document whose lease ran out. `attempts` doubles as the claim's fencing token.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # When the document's message was handed to the broker; empty while queued means it was never sent.
    dispatched_at = models.DateTimeField(null=True, blank=True)
    # Settings that override the batch's for the pending run (a re-run), kept so a re-sent message keeps them.
    run_options = models.JSONField(default=dict, blank=True)
    truth = models.JSONField(null=True, blank=True)  # known answer (the acta QR), for scoring only
    textract_import = models.FileField(upload_to=original_path, max_length=500, blank=True)

    claimed_by = models.ForeignKey(
        conf.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    claimed_at = models.DateTimeField(null=True, blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    status_changed_at = models.DateTimeField(auto_now_add=True)
    processing_started_at = models.DateTimeField(null=True, blank=True)
    processed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            # the reviewers' queue: flagged documents by batch and age
            models.Index(fields=["status", "batch", "created_at"], name="doc_status_batch_age"),
            models.Index(fields=["batch", "status"], name="doc_batch_status"),
            models.Index(fields=["batch", "sha256"], name="doc_batch_sha"),
            # the open queue: flagged and not yet decided, oldest first
            models.Index(
                fields=["created_at", "id"], name="doc_open_queue",
                condition=Q(status="flagged", review_status="unreviewed"),
            ),
        ]

    def __str__(self) -> str:
        return self.filename


class Page(models.Model):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="pages")
    number = models.PositiveIntegerField()  # 1-based
    image = models.FileField(upload_to=page_image_path, max_length=500)
    preview = models.FileField(upload_to=page_image_path, max_length=500, blank=True)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    engine = models.CharField(max_length=40, blank=True)  # which OCR engine read it
    # A second engine's words ([text, left, top, width, height]) where OCR_SECOND_ENGINE read the page too:
    # whether it reads a cited place alike is a confidence signal (extraction/confidence/second_engine.py).
    second_engine = models.CharField(max_length=40, blank=True)
    second_words = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["document", "number"]
        constraints = [models.UniqueConstraint(fields=["document", "number"], name="page_unique_number")]

    def __str__(self) -> str:
        return f"{self.document_id} p{self.number}"


class Block(models.Model):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="blocks")
    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="blocks")
    key = models.CharField(max_length=100)  # the engine's id, unique within the document's run
    type = models.CharField(max_length=5)  # the OCR block type: PAGE, LINE, WORD, TABLE or CELL
    text = models.TextField(blank=True)
    left = models.FloatField()
    top = models.FloatField()
    width = models.FloatField()
    height = models.FloatField()
    polygon = models.JSONField(null=True, blank=True)
    confidence = models.FloatField(null=True, blank=True)
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="children")
    order = models.PositiveIntegerField(default=0)
    row = models.PositiveIntegerField(null=True, blank=True)
    column = models.PositiveIntegerField(null=True, blank=True)
    row_span = models.PositiveIntegerField(default=1)
    column_span = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["page", "order", "id"]
        indexes = [
            models.Index(fields=["page", "type", "order"], name="block_page_type_order"),
            models.Index(fields=["document", "type"], name="block_document_type"),
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.text[:40]}"


class ExtractionQuerySet(models.QuerySet):
    """The one definition of a document's *current* extraction: its newest run (re-runs add new ones)."""

    def newest_first(self) -> ExtractionQuerySet:
        """Per document, its newest run first (the current one)."""
        return self.order_by("document_id", "-started_at", "-id")

    def current_for(self, document: Document | int) -> Extraction | None:
        """The document's (or document id's) current extraction; None before its first run."""
        return self.filter(document=document).newest_first().first()

    def current_id(self, document: Any = None) -> Subquery:
        """The current extraction's id as a subquery, to annotate documents in one query (default: the outer
        row's pk, for `Document.objects.annotate(current_extraction_id=Extraction.objects.current_id())`)."""
        return Subquery(self.filter(document=OuterRef("pk") if document is None else document)
                        .newest_first().values("id")[:1])

    def current_by_document(self) -> dict[int, int]:
        """document id -> its current extraction's id, over the runs in this queryset (one query)."""
        out: dict[int, int] = {}
        for document_id, extraction_id in self.newest_first().values_list("document_id", "id"):
            out.setdefault(document_id, extraction_id)
        return out


class Extraction(models.Model):
    """One run of the validation loop over a document; re-runs add new ones and keep the old."""

    class Reader(models.TextChoices):
        LLM = "llm", "LLM"
        TEMPLATE = "template", "Template reader (offline, no LLM)"

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="extractions")
    doctype = models.CharField(max_length=40)
    doctype_version = models.PositiveIntegerField(null=True, blank=True)  # the definition it ran under
    reader = models.CharField(max_length=20, choices=Reader.choices, default=Reader.LLM)
    settings = models.JSONField(default=dict, blank=True)  # model, input mode, max rounds used
    stop_reason = models.CharField(max_length=20, choices=_choices(StopReason), blank=True)
    best_round = models.PositiveIntegerField(null=True, blank=True)
    answer = models.JSONField(null=True, blank=True)  # the best round's answer; reviewers' edits land here
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = ExtractionQuerySet.as_manager()

    class Meta:
        ordering = ["document", "-started_at", "-id"]
        indexes = [models.Index(fields=["document", "-started_at"], name="extraction_doc_recent")]

    def __str__(self) -> str:
        return f"Extraction {self.pk} of document {self.document_id}"


class Round(models.Model):
    """One attempt of the loop: saved before the LLM call, completed after it."""

    class State(models.TextChoices):
        STARTED = "started"
        COMPLETED = "completed"
        FAILED = "failed"

    extraction = models.ForeignKey(Extraction, on_delete=models.CASCADE, related_name="rounds")
    number = models.PositiveIntegerField()
    state = models.CharField(max_length=20, choices=State.choices, default=State.STARTED)
    request = models.JSONField(default=dict, blank=True)  # messages without image bytes
    raw_answer = models.TextField(blank=True)
    parsed = models.JSONField(null=True, blank=True)
    violations = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["extraction", "number"]
        constraints = [models.UniqueConstraint(fields=["extraction", "number"], name="round_unique_number")]

    def __str__(self) -> str:
        return f"Round {self.number} of extraction {self.extraction_id}"


class FieldValue(models.Model):
    """A field of an extraction's answer, with the blocks its proof resolved to."""

    extraction = models.ForeignKey(Extraction, on_delete=models.CASCADE, related_name="fields")
    path = models.CharField(max_length=200)  # e.g. rows[3].votes
    position = models.PositiveIntegerField(default=0)
    value = models.JSONField(null=True, blank=True)
    model_value = models.JSONField(null=True, blank=True)  # what the model (or reader) said
    proofs = models.JSONField(default=list, blank=True)  # [{block, page, bbox, method, score}]
    confidence = models.FloatField(null=True, blank=True)  # the lowest OCR confidence of the cited words
    corrected = models.BooleanField(default=False)
    # How far the value can be trusted, in [0, 1] (extraction/confidence/model.py), from `signals`, by the
    # document type's confidence model of `confidence_version` (0: the documented prior).
    field_confidence = models.FloatField(null=True, blank=True)
    signals = models.JSONField(default=dict, blank=True)
    confidence_version = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["extraction", "position"]
        constraints = [models.UniqueConstraint(fields=["extraction", "path"], name="fieldvalue_unique_path")]

    def __str__(self) -> str:
        return self.path


class Violation(models.Model):
    """A rule the extraction's current values break (re-computed when a reviewer edits)."""

    extraction = models.ForeignKey(Extraction, on_delete=models.CASCADE, related_name="violations")
    code = models.CharField(max_length=80)
    message = models.TextField()
    fields = models.JSONField(default=list, blank=True)
    expected = models.JSONField(null=True, blank=True)
    found = models.JSONField(null=True, blank=True)
    # the field the rule is checked against (a sum's total), shown and selected first on the desk; "": none
    subject = models.CharField(max_length=300, blank=True, default="")

    class Meta:
        ordering = ["extraction", "id"]
        indexes = [models.Index(fields=["code", "extraction"], name="violation_code")]

    def __str__(self) -> str:
        return f"{self.code}: {self.message[:60]}"


class ReviewEvent(models.Model):
    """Who did what to a document, when, and the value before and after."""

    class Kind(models.TextChoices):
        CLAIM = "claim"
        RELEASE = "release"
        EDIT = "edit"
        VERIFY = "verify"
        REJECT = "reject"
        AUDIT_AGREE = "audit_agree"
        AUDIT_DISAGREE = "audit_disagree"
        SEND_BACK = "send_back"
        RERUN = "rerun"
        RETRY = "retry"
        PROOF = "proof", "Proof moved"

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="events")
    user = models.ForeignKey(conf.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    field = models.CharField(max_length=200, blank=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    # A correction made on the page also changes where the value was read: the proofs before and after
    # ([{block_id, page, type, text, bbox}]); empty for corrections typed in.
    proof_before = models.JSONField(null=True, blank=True)
    proof_after = models.JSONField(null=True, blank=True)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["document", "created_at"], name="event_doc_time")]
        constraints = [
            models.CheckConstraint(condition=~Q(kind=""), name="event_kind_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} on document {self.document_id}"


class ConfidenceModel(models.Model):
    """One version of a document type's field confidence model; the newest version is the one in use.

    Versions are only added (extraction/confidence/services.py, `refit_confidence`), never changed, so a
    field's confidence always names the model that gave it.
    """

    team = models.ForeignKey(Team, on_delete=models.CASCADE, default=default_team_id, related_name="+")
    doctype = models.CharField(max_length=40)
    version = models.PositiveIntegerField()
    params = models.JSONField()  # extraction.confidence.model.ConfidenceModel.to_json()
    metrics = models.JSONField(default=dict, blank=True)  # measured on held-back labels, old and new
    labels = models.PositiveIntegerField(default=0)
    note = models.TextField(blank=True)
    created_by = models.ForeignKey(conf.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["doctype", "-version"]
        constraints = [models.UniqueConstraint(fields=["team", "doctype", "version"],
                                               name="confidencemodel_unique_team_version")]

    def __str__(self) -> str:
        return f"{self.doctype} confidence v{self.version}"


class SuspiciousPassThreshold(models.Model):
    """A document of the type that passes every rule but whose least confident field is under `threshold` goes
    to the reviewers (a suspicious pass). Chosen by a supervisor from the measured review load against
    estimated false passes; without a row no pass is routed."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, default=default_team_id, related_name="+")
    doctype = models.CharField(max_length=40)
    threshold = models.FloatField()
    chosen_by = models.ForeignKey(conf.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="+")
    chosen_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(threshold__gte=0) & Q(threshold__lte=1),
                                              name="suspiciouspass_threshold_0_1"),
                       models.UniqueConstraint(fields=["team", "doctype"], name="suspiciouspass_one_per_team_type")]

    def __str__(self) -> str:
        return f"{self.doctype}: route passes under {self.threshold:.3f}"


class DocTypeVersion(models.Model):
    """One saved version of a document type an admin defined (extraction/typedef). A version never changes:
    saving makes the next one, and each extraction keeps the version it ran under."""

    name = models.CharField(max_length=40)  # one team's type: a name is taken once on an instance
    version = models.PositiveIntegerField()
    team = models.ForeignKey(Team, on_delete=models.CASCADE, default=default_team_id, related_name="+")
    shared = models.BooleanField(default=False)  # every team may upload under it; only its own team edits it
    label = models.CharField(max_length=80)
    definition = models.JSONField()  # TypeSpec.as_data()
    created_by = models.ForeignKey(conf.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "-version"]
        constraints = [models.UniqueConstraint(fields=["name", "version"], name="doctypeversion_unique_version")]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class DocTypeLive(models.Model):
    """An admin made a version of a defined type live: batches uploaded after it read under that version. Until
    one is made live by hand the newest saved version is live (extraction/doctypes/selectors.py). Kept as a
    record of the decision with the comparison it was made on, and whether the admin went ahead of a warning."""

    name = models.CharField(max_length=40)
    version = models.PositiveIntegerField()
    previous = models.PositiveIntegerField(null=True, blank=True)  # the version that was live before
    comparison = models.JSONField(default=dict, blank=True)  # the evaluation's figures the admin saw
    warnings = models.JSONField(default=list, blank=True)  # the sentences that said the version is worse
    run = models.ForeignKey("EvaluationRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    decided_by = models.ForeignKey(conf.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    decided_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["name", "-id"], name="doctypelive_name_newest")]

    def __str__(self) -> str:
        return f"{self.name} v{self.version} live"


def evaluation_file_path(instance: EvaluationItem, filename: str) -> str:
    return f"evaluation/{instance.doctype}/{filename}"


class EvaluationItem(models.Model):
    """A document of a type's evaluation set with the values people confirmed (expected: {path: value}): a
    document a reviewer verified, one a supervisor's audit agreed with, or a file an admin uploaded with its
    expected values."""

    class Source(models.TextChoices):
        VERIFIED = "verified", "Verified by a reviewer"
        AUDITED = "audited", "Agreed in an audit"
        UPLOADED = "uploaded", "Uploaded with expected values"

    team = models.ForeignKey(Team, on_delete=models.CASCADE, default=default_team_id, related_name="+")
    doctype = models.CharField(max_length=40)
    document = models.ForeignKey(Document, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    file = models.FileField(upload_to=evaluation_file_path, max_length=500, blank=True)
    filename = models.CharField(max_length=255)
    expected = models.JSONField(default=dict)
    source = models.CharField(max_length=10, choices=Source.choices)
    confirmed_by = models.ForeignKey(conf.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    confirmed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # an admin took a confirmed document out of the set: kept, so that gathering again does not bring it back
    removed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["doctype", "id"]
        constraints = [models.UniqueConstraint(fields=["team", "doctype", "document"],
                                               condition=Q(document__isnull=False),
                                               name="evaluationitem_one_per_document")]

    def __str__(self) -> str:
        return f"{self.doctype}: {self.filename} ({self.source})"


class EvaluationRun(models.Model):
    """The set read again under one version and settings, on the workers, as a hidden batch; a run of a
    candidate is compared with its run of the live version (`compared_with`), started with it."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, default=default_team_id, related_name="+")
    doctype = models.CharField(max_length=40)
    version = models.PositiveIntegerField(null=True, blank=True)  # None: a coded or shipped type
    settings = models.JSONField(default=dict, blank=True)  # the overrides: llm_model, llm_input, max_rounds, ocr
    batch = models.OneToOneField(Batch, null=True, on_delete=models.SET_NULL, related_name="evaluation_run")
    compared_with = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(conf.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"Evaluation {self.pk} of {self.doctype} v{self.version}"


class EvaluationResult(models.Model):
    """Which document of the run's batch reads which item of the set."""

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="results")
    item = models.ForeignKey(EvaluationItem, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "item"], name="evaluationresult_one_per_item")]

    def __str__(self) -> str:
        return f"Evaluation {self.run_id}: item {self.item_id} read as document {self.document_id}"
