"""Per-field confidence: signals from rules, rounds, proofs and OCR; the documented prior; the fit; JSON."""

from __future__ import annotations

import random

import pytest

from extraction.confidence.model import MIN_LABELS, PRIOR, ConfidenceModel, enough_labels, fit, prior_model
from extraction.confidence.signals import FEATURES, field_kind, field_signals
from extraction.ocr.blocks import BBox, BlockType, OcrBlock
from extraction.ocr.tagged_text import PromptDocument
from extraction.rules.violations import RuleContext, Violation
from tests.support.pages import SQUARE


def _line(block_id: str, text: str, *, top: float, confidence: float = 0.99) -> list[OcrBlock]:
    line = OcrBlock(page_size=SQUARE, id=block_id, type=BlockType.LINE, page=1, text=text, bbox=BBox(0.1, top, 0.8, 0.02),
                    confidence=confidence)
    words = [OcrBlock(page_size=SQUARE,
                      id=f"{block_id}w{i}", type=BlockType.WORD, page=1, text=w, bbox=BBox(0.1 + 0.1 * i, top, 0.08, 0.02),
                      parent=block_id, order=i, confidence=confidence) for i, w in enumerate(text.split())]
    return [line, *words]


@pytest.fixture
def ctx() -> RuleContext:
    blocks = [*_line("a", "Votes 56 CINCO SEIS", top=0.1), *_line("b", "Total 120", top=0.2, confidence=0.4)]
    return RuleContext(prompt=PromptDocument(text="", line_ids={1: "a", 2: "b"}, table_ids={}), blocks=blocks,
                       word_numbers=True)


def _answer(votes=56, words="CINCO SEIS", total=120, total_proof=2):
    return {
        "votes": {"value": votes, "proof": [{"type": "LINE", "id": 1}]},
        "votes_words": {"value": words, "proof": [{"type": "LINE", "id": 1}]},
        "total": {"value": total, "proof": [{"type": "LINE", "id": total_proof}] if total_proof else []},
    }


def test_a_clean_field_has_no_signal_against_it_and_the_prior_trusts_it(ctx):
    signals = field_signals(answer=_answer(), violations=[], ctx=ctx)["votes"]
    assert signals.proof_method == "id"
    assert all(signals.values[n] == 0 for n in FEATURES if n not in ("coverage_gap", "ocr_doubt"))
    assert prior_model().predict(signals) > 0.95


def test_digits_that_disagree_with_their_words_are_signalled_on_both_twins(ctx):
    signals = field_signals(answer=_answer(votes=66), violations=[], ctx=ctx)
    assert signals["votes"].values["twin_disagrees"] == 1 and signals["votes_words"].values["twin_disagrees"] == 1
    assert signals["total"].values["twin_disagrees"] == 0


def test_a_value_the_cited_words_do_not_show_is_not_grounded_and_scores_low(ctx):
    right = field_signals(answer=_answer(), violations=[], ctx=ctx)["total"]
    wrong = field_signals(answer=_answer(total=126), violations=[], ctx=ctx)["total"]
    assert wrong.values["not_grounded"] == 1 and right.values["not_grounded"] == 0
    assert prior_model().predict(wrong) < prior_model().predict(right) - 0.3


def test_low_ocr_confidence_of_the_cited_words_lowers_confidence(ctx):
    signals = field_signals(answer=_answer(), violations=[], ctx=ctx)
    assert signals["total"].ocr_confidence == pytest.approx(0.4)
    assert signals["total"].values["ocr_doubt"] == pytest.approx(0.6)
    assert prior_model().predict(signals["total"]) < prior_model().predict(signals["votes"])


def test_a_field_without_a_resolvable_proof_is_signalled(ctx):
    signals = field_signals(answer=_answer(total_proof=None), violations=[], ctx=ctx)["total"]
    assert signals.proof_method == "none" and signals.values["proof_none"] == 1


def test_broken_rules_rounds_and_corrections_count_against_the_fields_they_name(ctx):
    narrow = Violation(code="digits_words", message="", fields=("votes", "votes_words"), found="x")
    wide = Violation(code="sum", message="", fields=("votes", "total"), found=1)
    earlier = _answer(votes=57)
    signals = field_signals(answer=_answer(), violations=[narrow, wide], ctx=ctx, settled=frozenset({narrow.key}),
                            round_answers=[earlier, _answer()], corrected_rates={"votes": 0.25})
    votes = signals["votes"].values
    assert (votes["broken"], votes["narrow_broken"], votes["settled"], votes["rounds_changed"]) == (2, 1, 1, 1)
    assert votes["corrected_rate"] == 0.25 and signals["total"].values["rounds_changed"] == 0
    assert signals["votes"].values["doc_suspicion"] > 0


def test_the_field_kind_drops_row_numbers():
    assert field_kind("rows[12].votes") == "rows[].votes" and field_kind("total") == "total"


def test_every_prior_weight_speaks_against_the_field_and_the_bias_trusts_a_clean_one():
    assert set(PRIOR) == set(FEATURES) and all(w < 0 for w in PRIOR.values())
    assert prior_model().predict({}) == pytest.approx(0.982, abs=0.001)


def _synthetic(n: int, seed: int) -> tuple[list[dict], list[int]]:
    rng = random.Random(seed)
    rows, labels = [], []
    for _ in range(n):
        wrong = rng.random() < 0.2
        rows.append({"twin_disagrees": float(wrong and rng.random() < 0.9),
                     "ocr_doubt": rng.random() * (0.6 if wrong else 0.2)})
        labels.append(0 if wrong else 1)
    return rows, labels


def test_fitting_learns_the_base_rate_and_ranks_wrong_fields_lower():
    rows, labels = _synthetic(400, seed=1)
    model = fit(rows, labels)
    assert model.source == "fitted" and model.labels == 400
    scores = model.predict_many(rows)
    mean_right = sum(s for s, y in zip(scores, labels, strict=True) if y) / labels.count(1)
    mean_wrong = sum(s for s, y in zip(scores, labels, strict=True) if not y) / labels.count(0)
    assert mean_wrong < 0.3 < 0.85 < mean_right


def test_a_fit_where_clean_looking_fields_are_often_wrong_trusts_a_clean_field_less():
    labels = [1] * 240 + [0] * 60  # a fifth wrong, with nothing to show it
    model = fit([{}] * 300, labels)
    assert model.predict({}) == pytest.approx(0.8, abs=0.02) and model.predict({}) < prior_model().predict({})


def test_a_fit_on_few_labels_stays_near_the_prior():
    rows, labels = _synthetic(12, seed=2)
    model = fit(rows, labels)
    assert abs(model.weights["engine_disagrees"] - PRIOR["engine_disagrees"]) < 1e-6  # no data: untouched
    assert not enough_labels(labels) and enough_labels([1] * (MIN_LABELS - 20) + [0] * 20)


def test_a_model_round_trips_through_json():
    rows, labels = _synthetic(300, seed=3)
    model = fit(rows, labels)
    again = ConfidenceModel.from_json(model.to_json())
    assert again == model and again.predict(rows[0]) == model.predict(rows[0])


def test_fitting_refuses_mismatched_labels():
    with pytest.raises(ValueError):
        fit([{}], [1, 0])


def test_a_pass_whose_least_confident_field_is_under_the_threshold_is_suspicious():
    from extraction.confidence.model import suspicious_pass

    found = suspicious_pass({"a": 0.99, "b": 0.4, "c": None}, threshold=0.5, labels={"b": "Total"})
    assert found is not None and found.code == "suspicious_pass" and found.fields == ("b",)
    assert "Total is only 40% sure" in found.message
    assert suspicious_pass({"a": 0.99, "b": 0.6}, threshold=0.5) is None
    assert suspicious_pass({"b": 0.1}, threshold=None) is None
