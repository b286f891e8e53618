"""A reviewer in several teams works one queue per team: each team's count on the queue, and one team at a time."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from extraction.models import Batch, Team
from tests.support.accounts import PASSWORD, give_roles
from tests.support.desk_data import flagged_acta


def test_a_reviewer_of_two_teams_sees_each_teams_count_and_can_take_one_team_at_a_time(db):
    north, south = Team.objects.create(name="North", slug="north"), Team.objects.create(name="South", slug="south")
    north_docs = [flagged_acta(seed=s, batch=Batch.objects.create(name="n", doctype="acta", team=north)).document
                  for s in (111,)]
    south_batch = Batch.objects.create(name="s", doctype="acta", team=south)
    south_docs = [flagged_acta(seed=s, batch=south_batch).document for s in (112, 113)]
    both = User.objects.create_user(username="both", password=PASSWORD)
    give_roles(both, "reviewer", team=north)
    give_roles(both, "reviewer", team=south)
    client = Client()
    client.force_login(both)

    page = client.get(reverse("queue")).content.decode()
    assert "North (1)" in page and "South (2)" in page
    assert all(d.filename in page for d in north_docs + south_docs)
    south_only = client.get(reverse("queue"), {"team": south.pk}).content.decode()
    assert all(d.filename in south_only for d in south_docs) and north_docs[0].filename not in south_only
    assert '<span class="muted">2 flagged</span>' in south_only


def test_a_reviewer_of_one_team_sees_no_team_counts_and_cannot_ask_for_another(db):
    north, south = Team.objects.create(name="North", slug="north"), Team.objects.create(name="South", slug="south")
    south_doc = flagged_acta(seed=114, batch=Batch.objects.create(name="s", doctype="acta", team=south)).document
    one = User.objects.create_user(username="one", password=PASSWORD)
    give_roles(one, "reviewer", team=north)
    client = Client()
    client.force_login(one)
    page = client.get(reverse("queue"), {"team": south.pk}).content.decode()  # not theirs: their own queue
    assert 'id="queue-teams"' not in page and south_doc.filename not in page
