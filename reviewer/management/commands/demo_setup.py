"""Demo users for each role (new passwords each run, printed) and batches of the bundled samples: tally sheets
(a type written in code) and receipts (a type defined as data)."""

from __future__ import annotations

import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand

from extraction.models import DEFAULT_TEAM_SLUG, Batch, default_team_id
from extraction.pipeline.ingest import IncomingFile, batch_create_from_files
from reviewer.roles import ADMIN, ROLES
from reviewer.teams.services import memberships_replace
from reviewer.users.usernames import username_key

SAMPLES = Path(settings.BASE_DIR) / "samples"
DEMO_BATCH = "Demo: tally sheets"
DEMO_RECEIPTS = "Demo: receipts (a type defined as data)"


class Command(BaseCommand):
    help = "Create demo users (one per role) and load the bundled sample documents into a demo batch."

    def handle(self, *args, **options):
        logins = []
        default_team_id()  # the team the demo's people and batches belong to
        accounts = {}
        for role in ROLES:
            # by its key: an account named "Admin" is the demo's admin, there cannot be an "admin" beside it
            user = (User.objects.filter(username_key__key=username_key(role)).first()
                    or User.objects.create(username=role))
            password = secrets.token_urlsafe(9)
            user.set_password(password)
            user.save()
            memberships_replace(user=user, grants=[(DEFAULT_TEAM_SLUG, role)])
            logins.append((role, user.username, password))
            accounts[role] = user

        if not Batch.objects.filter(name=DEMO_BATCH).exists():
            files = [IncomingFile(filename=p.name, path=p) for p in sorted((SAMPLES / "actas").glob("*")) if p.is_file()]
            batch = batch_create_from_files(name=DEMO_BATCH, doctype="acta", ocr_engine="auto", files=files,
                                            user=accounts[ADMIN])
            self.stdout.write(f"Queued {batch.documents.count()} sample documents in the batch '{DEMO_BATCH}'.")
        if not Batch.objects.filter(name=DEMO_RECEIPTS).exists():
            # read by an LLM only: without one they end failed, saying so, and can be retried once one is set
            files = [IncomingFile(filename=p.name, path=p) for p in sorted((SAMPLES / "receipts").glob("*.jpg"))]
            batch = batch_create_from_files(name=DEMO_RECEIPTS, doctype="receipt", ocr_engine="auto", files=files,
                                            user=accounts[ADMIN])
            self.stdout.write(f"Queued {batch.documents.count()} sample receipts in the batch '{DEMO_RECEIPTS}'.")

        self.stdout.write("\nDemo logins (new passwords every run):")
        for role, username, password in logins:
            self.stdout.write(f"  {role:<11} username: {username:<11} password: {password}")
