"""One reading of a document for the run and the desk (extraction/reading/context.py): a reviewer's edit judges
the answer exactly as the run that produced it did, whatever the model was given to read."""

from __future__ import annotations

from typing import Any

import pytest

from extraction.models import Extraction, Violation
from reviewer.desk import services as review
from reviewer.desk.rule_context import rule_contexts_forget
from tests.support.acta_answers import correct_answer, data_section, misread, uncited_answer
from tests.support.acta_pipeline import USAGE, acta_pdf, process
from tests.support.llm_server import reply_json

pytestmark = pytest.mark.django_db


def _stored(extraction: Extraction) -> list[tuple]:
    """The broken rules as a rule states them (the run adds a note to those the model kept when told)."""
    return sorted((v.code, tuple(v.fields), str(v.expected), str(v.found))
                  for v in Violation.objects.filter(extraction=extraction))


@pytest.mark.parametrize("mode", ["text", "vision", "hybrid"])
def test_a_desk_edit_that_keeps_a_value_changes_no_violation_whatever_the_model_read(llm_env, tmp_path, monkeypatch,
                                                                                    users, mode):
    monkeypatch.setenv("LLM_INPUT", mode)
    rule_contexts_forget()
    acta, path = acta_pdf(tmp_path, seed=21)
    wrong = next(i for i, r in enumerate(acta.printed["rows"]) if "5" in str(r["votes"]))

    def misreading(body: dict[str, Any]):
        # a 5 read as 6 in one row, every round: the document ends flagged, as the study's commonest slip
        answer = correct_answer(data_section(body), acta.printed) if mode != "vision" else uncited_answer(acta.printed)
        return reply_json(misread(answer, wrong, "5", "6"), usage=USAGE)

    llm_env.always(misreading)
    doc = process(path)
    extraction = Extraction.objects.get(document=doc)
    assert (doc.status, extraction.settings["input"]) == ("flagged", mode)
    before = _stored(extraction)
    assert any(code == "row_digits_words_mismatch" for code, *_ in before)

    kept = next(i for i in range(len(acta.printed["rows"])) if i != wrong)
    value = extraction.answer["rows"][kept]["votes"]["value"]
    result = review.field_edit(document_id=doc.id, user=users["reviewer"], path=f"rows[{kept}].votes",
                               raw_value=str(value), expected_version=doc.version)

    assert result.value == value
    assert _stored(extraction) == before
