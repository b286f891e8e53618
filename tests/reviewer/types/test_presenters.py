"""The type editor's rows and a definition's data, both ways: nothing a definition says is lost on the page."""

from __future__ import annotations

from pathlib import Path

import pytest

from extraction.doctypes.defined.check import spec_parse
from extraction.doctypes.defined.files import spec_from_yaml
from reviewer.types.presenters import data_from_post
from tests.support.doctype_forms import posted

SHIPPED = sorted((Path(__file__).resolve().parents[3] / "extraction" / "doctypes").glob("*.yaml"))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_definition_comes_back_whole_from_the_editors_form(path):
    spec = spec_from_yaml(path.read_text())
    assert spec_parse(data_from_post(posted(spec.as_data()))) == spec


def test_a_table_marked_as_a_group_keeps_single_fields_under_its_key():
    post = {"name": "deed", "label": "Deed", "table-0-key": "parcel", "table-0-label": "Parcel", "table-0-group": "on",
            "field-0-key": "ref", "field-0-label": "Reference", "field-0-table": "parcel", "field-0-kind": "text"}
    spec = spec_parse(data_from_post(post))
    assert spec.tables == [] and [f.key for f in spec.groups[0].fields] == ["ref"]
    assert "parcel.ref" in spec.field_specs()
