"""Supervisor audits: random samples of a batch's passed documents and a verdict on each.

They live in the `reviewer` app so that their migrations never collide with the pipeline's. Writes go
through reviewer.audit.services; a verdict that disagrees moves its document through the guarded
transitions there.
"""

from __future__ import annotations

from django.conf import settings as conf
from django.db import models


class AuditSampleBase(models.Model):
    """What a document sample and a field sample share: a seeded draw from a batch's passed work, with its items.

    The fields stay in each model, in the order of its migrations: an abstract parent's fields would come first.
    """

    class Meta:
        abstract = True

    def items_in_order(self, *related: str) -> models.QuerySet:
        """The sample's items in the order they were drawn, with `related` selected."""
        return self.items.select_related(*related).order_by("position", "id")


class AuditItemBase(models.Model):
    """What a sampled document and a sampled field share: a verdict given once, pending until then, and a place
    (`position`) in its sample."""

    class Meta:
        abstract = True

    @property
    def is_pending(self) -> bool:
        return self.verdict == self.Verdict.PENDING

    def place(self) -> dict[str, int | None]:
        """Where the item stands in its sample: the previous and next items' ids, its position from 1, the count."""
        order = list(self.sample.items.order_by("position", "id").values_list("id", flat=True))
        index = order.index(self.id)
        return {
            "previous_id": order[index - 1] if index > 0 else None,
            "next_id": order[index + 1] if index + 1 < len(order) else None, "position": index + 1, "count": len(order),
        }


class AuditSample(AuditSampleBase):
    """One draw: `size` documents out of the batch's passed, not yet audited documents, chosen by `seed`.

    `population_ids` is what the draw chose from, so that extraction.common.stats.draw_sample(population_ids,
    size, seed) gives the same documents again.
    """

    class Requested(models.TextChoices):
        COUNT = "count", "A number of documents"
        PERCENT = "percent", "A percentage of the passed documents"

    batch = models.ForeignKey("extraction.Batch", on_delete=models.CASCADE, related_name="audit_samples")
    seed = models.BigIntegerField()
    requested_kind = models.CharField(max_length=10, choices=Requested.choices)
    requested_value = models.DecimalField(max_digits=7, decimal_places=2)
    population = models.PositiveIntegerField()
    population_ids = models.JSONField(default=list)
    size = models.PositiveIntegerField()
    created_by = models.ForeignKey(conf.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Sample {self.pk} of {self.batch_id} ({self.size} of {self.population}, seed {self.seed})"

    @property
    def requested_label(self) -> str:
        if self.requested_kind == self.Requested.PERCENT:
            return f"{self.requested_value.normalize():f} %"
        return f"{int(self.requested_value)} documents"


class AuditItem(AuditItemBase):
    class Verdict(models.TextChoices):
        PENDING = "pending"
        AGREE = "agree"
        DISAGREE = "disagree"

    sample = models.ForeignKey(AuditSample, on_delete=models.CASCADE, related_name="items")
    document = models.ForeignKey("extraction.Document", on_delete=models.CASCADE, related_name="audit_items")
    # The extraction whose values the supervisor judged (the document's newest when the verdict was given).
    extraction = models.ForeignKey("extraction.Extraction", null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    position = models.PositiveIntegerField(default=0)
    verdict = models.CharField(max_length=10, choices=Verdict.choices, default=Verdict.PENDING)
    note = models.TextField(blank=True)
    wrong_fields = models.JSONField(default=list, blank=True)  # paths the supervisor marked as wrong
    rules = models.JSONField(default=list, blank=True)  # rule codes that fired on those fields during the loop
    decided_by = models.ForeignKey(conf.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["sample", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["sample", "document"], name="audititem_unique_document"),
            models.CheckConstraint(condition=~models.Q(verdict="disagree", note=""),
                                   name="audititem_disagree_has_note"),
        ]
        indexes = [models.Index(fields=["document", "verdict"], name="audititem_doc_verdict")]

    def __str__(self) -> str:
        return f"Audit item {self.pk}: document {self.document_id} {self.verdict}"


class FieldAuditSample(AuditSampleBase):
    """One field-level draw: up to `per_stratum` fields of each field kind ('rows[].votes', 'acta_id') from the
    batch's passed documents, chosen by `seed`, so that every kind gets its own estimate of how often its
    values are wrong. `population` is {kind: fields the draw chose from}: the estimate scales to it."""

    batch = models.ForeignKey("extraction.Batch", on_delete=models.CASCADE, related_name="field_audit_samples")
    seed = models.BigIntegerField()
    per_stratum = models.PositiveIntegerField()
    population = models.JSONField(default=dict)
    size = models.PositiveIntegerField()
    created_by = models.ForeignKey(conf.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Field sample {self.pk} of {self.batch_id} ({self.per_stratum} a kind, seed {self.seed})"


class FieldAuditItem(AuditItemBase):
    """One sampled field of one extraction, judged right or wrong by a supervisor."""

    class Verdict(models.TextChoices):
        PENDING = "pending"
        RIGHT = "right"
        WRONG = "wrong"

    sample = models.ForeignKey(FieldAuditSample, on_delete=models.CASCADE, related_name="items")
    document = models.ForeignKey("extraction.Document", on_delete=models.CASCADE, related_name="+")
    extraction = models.ForeignKey("extraction.Extraction", on_delete=models.CASCADE, related_name="+")
    path = models.CharField(max_length=200)
    kind = models.CharField(max_length=200)  # the stratum: the path without its row numbers
    position = models.PositiveIntegerField(default=0)
    verdict = models.CharField(max_length=10, choices=Verdict.choices, default=Verdict.PENDING)
    note = models.TextField(blank=True)
    rules = models.JSONField(default=list, blank=True)  # rule codes that fired on the field during the loop
    decided_by = models.ForeignKey(conf.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["sample", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["sample", "extraction", "path"], name="fieldaudititem_unique_field"),
            models.CheckConstraint(condition=~models.Q(verdict="wrong", note=""),
                                   name="fieldaudititem_wrong_has_note"),
        ]

    def __str__(self) -> str:
        return f"Field audit item {self.pk}: {self.path} of document {self.document_id} {self.verdict}"


class BatchDeletion(models.Model):
    """What an admin deleted, kept after the batch and its files are gone."""

    batch_id = models.PositiveBigIntegerField()
    name = models.CharField(max_length=200)
    doctype = models.CharField(max_length=40)
    documents = models.PositiveIntegerField()
    files = models.JSONField(default=list)  # [{"filename", "sha256", "size"}] of every uploaded file
    reason = models.TextField(blank=True)
    deleted_by = models.ForeignKey(conf.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    deleted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-deleted_at"]

    def __str__(self) -> str:
        return f"Deletion of batch {self.name} ({self.batch_id})"


class DeskPresence(models.Model):
    """Who has a document open on the desk: each open page touches its row while it polls."""

    document = models.ForeignKey("extraction.Document", on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(conf.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    seen_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["document", "user"], name="presence_unique_user")]
        indexes = [models.Index(fields=["document", "seen_at"], name="presence_doc_seen")]

    def __str__(self) -> str:
        return f"{self.user_id} on {self.document_id}"


class LoginThrottle(models.Model):
    """A counter of login attempts (see reviewer.users.throttle): one row per hashed account, address or device."""

    key = models.CharField(max_length=80, unique=True)
    count = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.key}: {self.count} until {self.expires_at:%H:%M:%S}"


class UsernameKey(models.Model):
    """The database's word that no two accounts have names that differ only in case or Unicode form: each
    account's name under reviewer.users.usernames.username_key, unique. A check before an insert cannot hold it
    against two parallel creations; this index does. Written with the account (services.users)."""

    user = models.OneToOneField(conf.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True,
                                related_name="username_key")
    key = models.CharField(max_length=300, unique=True)  # lower-casing may lengthen a 150-character name

    def __str__(self) -> str:
        return self.key


class Membership(models.Model):
    """A person's role in a team. What one may see and do is the union over their memberships, each role acting
    only on its own team's objects (reviewer/teams/scope.py)."""

    user = models.ForeignKey(conf.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    team = models.ForeignKey("extraction.Team", on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20)  # reviewer.roles.ROLES

    class Meta:
        ordering = ["team__name", "role"]
        constraints = [models.UniqueConstraint(fields=["user", "team", "role"], name="membership_unique_role")]

    def __str__(self) -> str:
        return f"{self.user_id} {self.role} in {self.team_id}"
