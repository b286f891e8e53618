"""API tokens (stored as a SHA-256 digest, never the token) and the uploads an Idempotency-Key made."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from extraction.models import default_team_id


class ApiToken(models.Model):
    """A user's key to the API. The token itself is shown once when it is made; only its digest is kept, and
    its first characters (`prefix`) so that its owner can tell it apart on the tokens page."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    team = models.ForeignKey("extraction.Team", on_delete=models.CASCADE, default=default_team_id, related_name="+")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16)
    digest = models.CharField(max_length=64, unique=True)  # hex SHA-256 of the whole token
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


class IdempotentUpload(models.Model):
    """A batch made by an upload that carried an Idempotency-Key: the same key from the same user gets the
    same batch back, and a different request under that key is refused. `fingerprint` is a digest of what
    the request asked (its fields and every file's name and content)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)
    fingerprint = models.CharField(max_length=64)
    batch = models.ForeignKey("extraction.Batch", null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="api_idempotent_upload_user_key")]

    def __str__(self) -> str:
        return f"{self.key} -> {self.batch_id}"
