"""An instance upgraded to teams: everything that existed belongs to the default team, and each role a person
held is that role in it, so nobody sees more or less than before."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


@pytest.mark.django_db(transaction=True)
def test_an_upgrade_puts_every_batch_and_role_of_before_in_the_default_team():
    before = [("reviewer", "0007_username_key"), ("extraction", "0011_evaluation_sets"), ("api", "0001_initial"),
              ("webhooks", "0001_initial")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    try:
        old = executor.loader.project_state(before).apps
        group = old.get_model("auth", "Group")  # made by a migration; a transactional test's flush may have gone
        ana = old.get_model("auth", "User").objects.create(username="ana")
        ana.groups.add(*(group.objects.get_or_create(name=name)[0] for name in ("reviewer", "supervisor", "night")))
        bob = old.get_model("auth", "User").objects.create(username="bob")
        batch = old.get_model("extraction", "Batch").objects.create(name="before teams", doctype="acta")
        version = old.get_model("extraction", "DocTypeVersion").objects.create(name="mine", version=1, label="Mine",
                                                                               definition={})
    finally:  # the schema as the other tests of this database need it, whatever happened
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())

    from extraction.models import Batch, DocTypeVersion, Team
    from reviewer.models import Membership

    default = Team.objects.get(slug="default")
    assert Batch.objects.get(pk=batch.pk).team == default
    assert DocTypeVersion.objects.get(pk=version.pk).team == default
    assert sorted(Membership.objects.filter(user_id=ana.pk).values_list("team__slug", "role")) == [
        ("default", "reviewer"), ("default", "supervisor")]
    assert not Membership.objects.filter(user_id=bob.pk).exists()  # no role before, none after
