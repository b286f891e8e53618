"""The Types page's editor: rows added, removed and moved by its own buttons, each rule asking only for what its
kind reads, fields picked from the type's own, keys made from labels, problems said beside the rule."""

from __future__ import annotations

import re

import pytest

from extraction.doctypes.defined.vocabulary import KINDS

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def bill_form(**extra: str) -> dict[str, str]:
    form = {
        "name": "utility_bill", "label": "Utility bill",
        "field-0-label": "Period start", "field-0-kind": "date",
        "field-1-label": "Period end", "field-1-kind": "date",
        "field-2-label": "Amount due", "field-2-kind": "money",
        "table-0-key": "lines", "table-0-label": "Lines",
        "field-3-label": "Paid", "field-3-kind": "money", "field-3-table": "lines",
        "rule-0-label": "The period ends after it begins", "rule-0-kind": "compare", "rule-0-field": "period_end",
        "rule-0-operator": ">", "rule-0-other": "period_start", "rule-0-pattern": "left over from another kind",
        "rule-0-message": "The period ends {found}, not {expected}.",
    }
    form.update(extra)
    return form


def _rule(html: str, i: int) -> str:
    start = html.index(f'id="rule-{i}"')
    return html[start:html.index("</fieldset>", start)]


def test_keys_and_codes_are_made_from_labels_and_a_kinds_own_parameters_are_kept(client_as):
    response = client_as("admin").post("/types/new/", {**bill_form(), "action": "preview"})
    assert response.status_code == 200, response.text[:2000]
    data = response.context["data"]
    assert [f["key"] for f in data["fields"]] == ["period_start", "period_end", "amount_due"]
    assert data["tables"][0]["columns"][0]["key"] == "paid"
    (rule,) = data["rules"]
    assert rule["code"] == "the_period_ends_after_it_begins" and "pattern" not in rule  # not a compare's


def test_a_rule_shows_only_its_kinds_parameters_with_what_it_checks_in_words(client_as):
    html = client_as("admin").post("/types/new/", {**bill_form(), "action": "preview"}).content.decode()
    rule = _rule(html, 0)
    shown = set(re.findall(r'<label class="param[^"]*" data-param="(\w+)" data-kinds="[^"]*">', rule))
    assert shown == set(KINDS["compare"].params)
    assert KINDS["compare"].explains in rule and ">A field compared with another</option>" in rule
    assert "compare</option>" not in rule  # kinds by their names in words, not their codes


def test_fields_are_picked_from_the_types_own_fields_and_columns(client_as):
    html = client_as("admin").post("/types/new/", {**bill_form(), "action": "preview"}).content.decode()
    rule = _rule(html, 0)
    picker = re.search(r'<select name="rule-0-field">(.*?)</select>', rule, re.S).group(1)
    options = re.findall(r'<option value="([^"]*)"( selected)?>([^<]*)</option>', picker)
    assert [(v, label) for v, _, label in options] == [
        ("", "—"), ("period_start", "Period start"), ("period_end", "Period end"), ("amount_due", "Amount due"),
        ("lines.paid", "Lines: Paid")]
    assert [v for v, selected, _ in options if selected] == ["period_end"]
    assert '<input name="rule-0-field"' not in rule


def test_a_required_rules_fields_are_picked_several_at_once(client_as):
    form = bill_form(**{"rule-1-label": "Dates are there", "rule-1-kind": "required",
                        "rule-1-message": "A bill states its period."})
    form["rule-1-fields"] = ["period_start", "period_end"]
    response = client_as("admin").post("/types/new/", {**form, "action": "preview"})
    assert response.context["data"]["rules"][1]["fields"] == ["period_start", "period_end"]
    assert '<select name="rule-1-fields" multiple' in response.content.decode()


def test_rows_are_added_removed_and_moved_by_the_forms_own_buttons(client_as):
    client = client_as("admin")
    form = bill_form(**{"rule-1-label": "Nothing negative is due", "rule-1-kind": "condition",
                        "rule-1-expression": "amount_due >= 0", "rule-1-message": "Due {found}."})
    added = client.post("/types/new/", {**form, "action": "add-rule"}, **HTMX).content.decode()
    assert 'id="rule-2"' in added and 'id="rule-3"' not in added  # one blank rule more, the two kept
    assert 'name="rule-2-label" value=""' in added
    moved = client.post("/types/new/", {**form, "action": "up-rule-1"}).context["data"]["rules"]
    assert [r["label"] for r in moved] == ["Nothing negative is due", "The period ends after it begins"]
    removed = client.post("/types/new/", {**form, "action": "remove-field-2"}).context["data"]
    assert [f["key"] for f in removed["fields"]] == ["period_start", "period_end"]
    assert removed["rules"][1]["expression"] == "amount_due >= 0"  # the rules stay as they were
    without = client.post("/types/new/", {**form, "action": "remove-rule-0"}).context["data"]["rules"]
    assert [r["label"] for r in without] == ["Nothing negative is due"]


def test_an_edit_of_the_rows_neither_saves_nor_reports_problems(client_as):
    from extraction.models import DocTypeVersion

    response = client_as("admin").post("/types/new/", {**bill_form(**{"rule-0-other": "nothing"}), "action": "add-field"})
    assert response.status_code == 200 and 'id="definition-problems"' not in response.content.decode()
    assert not DocTypeVersion.objects.exists()


def test_every_kind_of_rule_is_explained_in_words_with_parameters_the_definition_has():
    from extraction.doctypes.defined.spec import RULE_KINDS, RuleSpec
    from extraction.doctypes.defined.vocabulary import PARAMS

    assert tuple(KINDS) == RULE_KINDS
    for kind in KINDS.values():
        assert kind.title and kind.explains.endswith(".")
        assert set(kind.params) <= set(PARAMS) <= set(RuleSpec.model_fields)
