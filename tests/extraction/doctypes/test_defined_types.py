"""Document types defined as data: the grammar, the checks, the rules they build and their YAML."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from extraction.doctypes.base import DocumentType, EditRefused
from extraction.doctypes.defined.build import doctype_build
from extraction.doctypes.defined.check import DefinitionError, spec_parse, spec_warnings
from extraction.doctypes.defined.expressions import ExpressionError, parse_expression
from extraction.doctypes.defined.files import spec_from_yaml, spec_to_yaml
from extraction.doctypes.defined.patterns import pattern_backtracks, pattern_matches
from extraction.reading.loop import run_validation_loop
from extraction.rules.violations import CHECK_UNFINISHED, RuleContext

ROOT = Path(__file__).resolve().parents[3]
CTX = RuleContext()


def F(value, proof=None):  # noqa: N802 - reads like the prompt's F
    return {"value": value, "proof": proof or []}


def bill(**extra):
    """A definition of bills with lines, in the vocabulary: every kind of rule once."""
    data = {
        "name": "bill",
        "label": "Bill",
        "instructions": "You read bills.",
        "fields": [
            {"key": "number", "label": "Number", "kind": "code", "required": True, "pattern": r"B-\d{4}",
             "pattern_source": "the issuer's numbering"},
            {"key": "issued", "label": "Issued", "kind": "date"},
            {"key": "subtotal", "label": "Subtotal", "kind": "money"},
            {"key": "tax", "label": "Tax", "kind": "money"},
            {"key": "total", "label": "Total", "kind": "money", "required": True},
            {"key": "total_words", "label": "Total in words", "kind": "text"},
            {"key": "currency", "label": "Currency", "kind": "choice", "choices": ["EUR", "USD"]},
        ],
        "tables": [{"key": "lines", "label": "Lines", "columns": [
            {"key": "sku", "label": "SKU", "kind": "text"},
            {"key": "qty", "label": "Qty", "kind": "count"},
            {"key": "price", "label": "Price", "kind": "money"},
            {"key": "amount", "label": "Amount", "kind": "money"},
        ]}],
        "rules": [
            {"code": "lines_add_up", "label": "Lines do not add up", "kind": "column_sum", "column": "lines.amount",
             "field": "subtotal", "tolerance": "0.005",
             "message": "The lines add up to {found} but the subtotal says {expected}."},
            {"code": "line_amount", "label": "Qty x price is not the amount", "kind": "expression",
             "field": "lines.amount", "expression": "lines.qty × lines.price", "tolerance": "0.005",
             "message": "Line {row}: quantity times price is {expected}, the amount says {found}."},
            {"code": "total_closes", "label": "Subtotal plus tax is not the total", "kind": "expression",
             "field": "total", "expression": "subtotal + tax", "tolerance": "0.005",
             "message": "Subtotal plus tax make {expected}; the total says {found}."},
            {"code": "total_words", "label": "Digits and words disagree", "kind": "digits_words",
             "field": "total", "words": "total_words", "language": "es_digits",
             "message": "The total in words is {expected}."},
            {"code": "not_future", "label": "Dated in the future", "kind": "date_range", "field": "issued",
             "after": "2000-01-01", "not_future": True, "message": "The bill is dated {found}."},
            {"code": "has_lines", "label": "No lines", "kind": "min_rows", "table": "lines", "count": 1,
             "message": "A bill lists what it bills."},
            {"code": "sku_once", "label": "A SKU twice", "kind": "unique", "field": "lines.sku",
             "message": "SKU {found} is listed twice."},
        ],
    }
    data.update(extra)
    return data


def answer(**overrides):
    a = {"number": F("B-0042"), "issued": F("2024-03-05"), "subtotal": F(30), "tax": F(3), "total": F(33),
         "total_words": F(None), "currency": F("EUR"),
         "lines": [{"sku": F("A1"), "qty": F(2), "price": F(5), "amount": F(10)},
                   {"sku": F("B2"), "qty": F(1), "price": F(20), "amount": F(20)}]}
    a.update(overrides)
    return a


def broken(doctype: DocumentType, a: dict) -> dict[str, list]:
    out: dict[str, list] = {}
    for rule in doctype.rules:
        for v in rule(doctype.parse_answer(a), CTX):
            out.setdefault(v.code, []).append(v)
    return out


def test_a_broken_sum_or_expression_names_the_field_it_is_checked_against_as_its_subject():
    doctype = doctype_build(spec_parse(bill()))
    found = broken(doctype, answer(subtotal=F(31), total=F(40)))
    (lines,) = found["lines_add_up"]
    assert lines.subject == "subtotal" and lines.fields[0] == "lines[0].amount"
    (total,) = found["total_closes"]
    assert total.subject == "total"
    (amount,) = broken(doctype, answer(lines=[{"sku": F("A1"), "qty": F(2), "price": F(5), "amount": F(11)}],
                                       subtotal=F(11), total=F(14)))["line_amount"]
    assert amount.subject == "lines[0].amount"


# --- expressions ---


def test_an_expression_keeps_arithmetic_precedence_and_exact_decimals():
    e = parse_expression("a + b * (c - 0.1)")
    assert e.evaluate({"a": Decimal("1"), "b": Decimal("2"), "c": Decimal("0.3")}, {}) == Decimal("1.4")
    assert e.names() == {"a", "b", "c"}


def test_an_expression_sums_a_tables_column():
    e = parse_expression("sum(lines.amount) - discount")
    assert e.sums() == {"lines.amount"}
    assert e.evaluate({"discount": Decimal(1)}, {"lines.amount": [Decimal("1.10"), Decimal("2.20")]}) == Decimal("2.30")


def test_an_expression_with_a_missing_value_or_a_division_by_zero_has_no_value():
    assert parse_expression("a / b").evaluate({"a": Decimal(1), "b": Decimal(0)}, {}) is None
    assert parse_expression("a + b").evaluate({"a": Decimal(1), "b": None}, {}) is None


@pytest.mark.parametrize("text", ["__import__('os').system('true')", "a.b.c", "a +", "(a", "a ** b", "lambda: 1",
                                  "open('/etc/passwd')", "a if b else c", "sum(1)", "x" * 400])
def test_anything_but_arithmetic_over_fields_is_refused(text):
    with pytest.raises(ExpressionError):
        parse_expression(text)


def test_an_expression_error_says_where():
    with pytest.raises(ExpressionError, match="character 5"):
        parse_expression("a + $b")


def test_a_deeply_nested_expression_is_refused_as_too_large():
    with pytest.raises(ExpressionError, match="too large"):
        parse_expression("(" * 30 + "a" + ")" * 30)


# --- patterns ---


def test_a_pattern_that_backtracks_without_end_runs_out_of_time_and_says_nothing():
    assert pattern_matches(r"(a|aa)+$", "a" * 40 + "b") is None
    assert pattern_matches(r"B-\d{4}", "B-0042") is True
    assert pattern_matches(r"B-\d{4}", "B-0042 extra") is False


# --- checks ---


def test_a_sound_definition_passes_its_checks():
    spec = spec_parse(bill())
    assert [r.code for r in spec.rules][:2] == ["lines_add_up", "line_amount"]


def test_a_rule_naming_a_field_the_type_does_not_have_is_refused_with_its_name():
    data = bill()
    data["rules"][0]["field"] = "sub_total"
    with pytest.raises(DefinitionError) as err:
        spec_parse(data)
    assert err.value.problems == ["rule 'lines_add_up': its field 'sub_total' is not a field of this type"]


def test_a_pattern_that_does_not_compile_is_refused():
    data = bill()
    data["fields"][0]["pattern"] = "B-(\\d{4}"
    with pytest.raises(DefinitionError, match="field 'number': the pattern does not compile"):
        spec_parse(data)


def test_expressions_that_define_fields_through_each_other_are_refused():
    data = bill()
    data["rules"].append({"code": "back", "label": "Back", "kind": "expression", "field": "subtotal",
                          "expression": "total - tax", "message": "x"})
    with pytest.raises(DefinitionError, match="define fields through each other: subtotal -> total -> subtotal"):
        spec_parse(data)


def test_a_field_defined_through_itself_is_refused():
    data = bill()
    data["rules"][2]["expression"] = "total + 0"
    with pytest.raises(DefinitionError, match="total -> total"):
        spec_parse(data)


@pytest.mark.parametrize(("change", "problem"), [
    (lambda d: d["fields"].append({"key": "total", "label": "Again"}), "the key 'total' is used twice"),
    (lambda d: d["rules"][0].update(code="proof_found"), "every type already uses"),
    (lambda d: d["rules"][0].update(column="subtotal"), "must be a table's column"),
    (lambda d: d["rules"][3].update(words="total"), "it must be text"),
    (lambda d: d["rules"][1].update(expression="lines.qty * other.price"), "not a field of this type"),
    (lambda d: d["rules"][4].update(after="2030-01-01", before="2020-01-01"), "ends before it starts"),
    (lambda d: d["fields"].append({"key": "kind", "label": "Kind", "kind": "choice"}), "needs its list of choices"),
    (lambda d: d["fields"].append({"key": "ref", "label": "Ref", "kind": "code"}), "needs the pattern"),
    (lambda d: d.update(name="Bad Name"), "name: String should match pattern"),
    (lambda d: d["fields"].append({"key": "json", "label": "J"}), "keeps for itself"),
    (lambda d: d["tables"][0]["columns"].append({"key": "model_fields", "label": "M"}), "keeps for itself"),
    (lambda d: d["rules"].append({"code": "p", "label": "P", "kind": "pattern", "field": "number",
                                  "pattern": "B", "message": "m"}), "say where the pattern comes from"),
])
def test_a_definition_with_a_mistake_is_refused_with_a_sentence_that_names_it(change, problem):
    data = bill()
    change(data)
    with pytest.raises(DefinitionError) as err:
        spec_parse(data)
    assert any(problem in p for p in err.value.problems), err.value.problems


def test_sizes_are_bounded():
    data = bill(fields=[{"key": f"f{i}", "label": "F"} for i in range(61)], rules=[])
    with pytest.raises(DefinitionError, match="fields"):
        spec_parse(data)


# --- the type it builds ---


def test_a_right_answer_breaks_no_rule():
    doctype = doctype_build(spec_parse(bill()))
    assert broken(doctype, answer()) == {}


def test_a_column_that_does_not_add_up_breaks_the_admins_rule_with_the_admins_sentence():
    doctype = doctype_build(spec_parse(bill()))
    a = answer(lines=[{"sku": F("A1"), "qty": F(2), "price": F(5), "amount": F(10)},
                      {"sku": F("B2"), "qty": F(1), "price": F(21), "amount": F(21)}])
    (v,) = broken(doctype, a)["lines_add_up"]
    assert v.message == "The lines add up to 31.00 but the subtotal says 30."
    assert v.fields == ("lines[0].amount", "lines[1].amount", "subtotal")
    assert (v.expected, v.found) == (30, 31)


def test_a_row_expression_is_checked_on_every_row_and_names_the_row():
    doctype = doctype_build(spec_parse(bill()))
    a = answer(lines=[{"sku": F("A1"), "qty": F(2), "price": F(5), "amount": F(10)},
                      {"sku": F("B2"), "qty": F(3), "price": F(20), "amount": F(20)}], subtotal=F(30))
    (v,) = broken(doctype, a)["line_amount"]
    assert v.message == "Line 2: quantity times price is 60.00, the amount says 20."
    assert "lines[1].amount" in v.fields


def test_a_missing_value_is_no_evidence_of_a_wrong_sum():
    doctype = doctype_build(spec_parse(bill()))
    a = answer(tax=F(None), lines=[{"sku": F("A1"), "qty": F(2), "price": F(5), "amount": F(None)}])
    assert "total_closes" not in broken(doctype, a)
    assert "lines_add_up" not in broken(doctype, a)


def test_digits_and_spanish_digit_words_that_disagree_break_the_rule():
    doctype = doctype_build(spec_parse(bill()))
    assert "total_words" not in broken(doctype, answer(total_words=F("TRES TRES")))
    (v,) = broken(doctype, answer(total_words=F("TRES OCHO")))["total_words"]
    assert v.message == "The total in words is 38."


def test_the_kinds_of_fields_bring_their_own_rules():
    doctype = doctype_build(spec_parse(bill()))
    got = broken(doctype, answer(number=F("42"), issued=F("soon"), currency=F("GBP"), total=F(None)))
    assert set(got) >= {"value_pattern", "date_parse", "value_choice", "missing_value"}
    assert got["value_pattern"][0].message == "Number '42' does not have the form B-\\d{4} (the issuer's numbering)"


def test_a_date_in_the_future_or_before_the_range_breaks_the_range():
    doctype = doctype_build(spec_parse(bill()))
    assert broken(doctype, answer(issued=F("2099-01-01")))["not_future"][0].found == "2099-01-01"
    assert "not_future" in broken(doctype, answer(issued=F("1999-12-31")))


def test_no_rows_and_a_repeated_key_break_their_rules():
    doctype = doctype_build(spec_parse(bill()))
    assert "has_lines" in broken(doctype, answer(lines=[], subtotal=F(None)))
    twice = [{"sku": F("A1"), "qty": F(1), "price": F(15), "amount": F(15)},
             {"sku": F("a1"), "qty": F(1), "price": F(15), "amount": F(15)}]
    (v,) = broken(doctype, answer(lines=twice))["sku_once"]
    assert v.fields == ("lines[0].sku", "lines[1].sku")


def test_a_sentence_is_data_and_never_a_format_string():
    data = bill()
    data["rules"][0]["message"] = "Sum {found.__class__} {found} {0} {expected!r}"
    doctype = doctype_build(spec_parse(data))
    a = answer(subtotal=F(31), total=F(34))
    (v,) = broken(doctype, a)["lines_add_up"]
    assert v.message == "Sum {found.__class__} 30.00 {0} {expected!r}"


def test_the_prompt_gives_the_instructions_the_fields_and_the_answers_shape():
    doctype = doctype_build(spec_parse(bill()))
    prompt = doctype.system_prompt
    assert prompt.startswith("You read bills.")
    assert "- currency: Currency. (one of: EUR, USD)" in prompt
    assert '"lines": [{"sku": F, "qty": F, "price": F, "amount": F}]' in prompt
    assert "never instructions" in prompt


def test_the_desk_shows_single_fields_and_a_table_and_edits_are_typed():
    doctype = doctype_build(spec_parse(bill()))
    groups = doctype.field_groups(doctype.parse_answer(answer()))
    assert [g.name for g in groups] == ["Bill", "Lines"]
    assert groups[1].columns == ["SKU", "Qty", "Price", "Amount"]
    edited = doctype.edit_answer(doctype.parse_answer(answer()), "lines[1].amount", "20,50")
    assert edited["lines"][1]["amount"]["value"] == 20.5
    assert doctype.rule_labels["lines_add_up"] == "Lines do not add up"


@pytest.mark.parametrize(("path", "raw", "says"), [
    ("lines[1].amount", "1" + "0" * 30, "no more than 15 digits"),
    ("total", "0.0000000000000001", "no more than 15 digits"),
    ("lines[0].qty", str(10**12), "less than or equal to 1000000000"),
    ("total_words", "x" * 1001, "at most 1000 characters"),
])
def test_a_defined_types_edit_beyond_its_kinds_bounds_is_refused(path, raw, says):
    doctype = doctype_build(spec_parse(bill()))
    with pytest.raises(EditRefused, match=says):
        doctype.edit_answer(doctype.parse_answer(answer()), path, raw)
    edited = doctype.edit_answer(doctype.parse_answer(answer()), "total", "999999999999.99")
    assert edited["total"]["value"] == 999999999999.99


# --- files ---


def test_a_definition_round_trips_through_yaml_unchanged():
    spec = spec_parse(bill())
    text = spec_to_yaml(spec)
    assert spec_from_yaml(text) == spec
    assert spec_to_yaml(spec_from_yaml(text)) == text


def test_yaml_that_tries_to_build_an_object_is_refused():
    with pytest.raises(DefinitionError, match="not YAML"):
        spec_from_yaml("!!python/object/apply:os.system ['true']")


def test_the_shipped_receipt_definition_is_sound_and_round_trips():
    text = (ROOT / "extraction" / "doctypes" / "receipt.yaml").read_text()
    spec = spec_from_yaml(text)
    assert [f.key for f in spec.fields] == ["company", "date", "address", "total"]
    assert spec_from_yaml(spec_to_yaml(spec)) == spec
    doctype = doctype_build(spec)
    right = {"company": F("OJC MARKETING SDN BHD"), "date": F("2018-12-25"), "address": F("NO 2 JALAN"),
             "total": F("9.00")}
    assert broken(doctype, right) == {}
    assert set(broken(doctype, {**right, "company": F(None)})) == {"missing_value"}


@pytest.mark.parametrize(("text", "value"), [("Two hundred and five", 205), ("one thousand three hundred forty-two", 1342),
                                             ("Twelve dollars only", 12), ("ninety nine", 99), ("zero", 0)])
def test_english_number_words_read_as_their_number(text, value):
    from extraction.doctypes.defined.number_words import parse_number_words

    assert parse_number_words(text, language="en") == value


def test_words_that_are_not_a_number_give_no_reading_and_break_no_rule():
    from extraction.doctypes.defined.number_words import parse_number_words

    assert parse_number_words("paid in full", language="en") is None
    data = bill()
    data["rules"][3]["language"] = "en"
    doctype = doctype_build(spec_parse(data))
    assert "total_words" not in broken(doctype, answer(total_words=F("paid in full")))
    assert "total_words" not in broken(doctype, answer(total_words=F("Thirty-three")))
    assert broken(doctype, answer(total_words=F("Thirty-eight")))["total_words"][0].expected == 38


# --- groups, sections, shares, currencies, sentences that name fields ---


def deed(**extra):
    """A definition with a group of single fields, a table of shares and a sum to a constant."""
    data = {
        "name": "deed", "label": "Deed",
        "fields": [{"key": "currency", "label": "Currency", "kind": "currency"},
                   {"key": "price", "label": "Price", "kind": "money", "section": "Sale"}],
        "groups": [{"key": "parcel", "label": "Parcel", "fields": [{"key": "ref", "label": "Reference"}]}],
        "tables": [{"key": "holders", "label": "Holders", "row_label": "Holder {row}[ ({name})]", "columns": [
            {"key": "name", "label": "Name", "required": True},
            {"key": "share", "label": "Share", "kind": "fraction", "required": True}]}],
        "rules": [{"code": "shares_whole", "label": "Shares are not the whole", "kind": "column_sum",
                   "column": "holders.share", "value": "1", "message": "Shares make {found}, not {expected}: {terms}"}],
    }
    data.update(extra)
    return data


def holders(*shares, names=None):
    names = names or [f"H{i}" for i in range(len(shares))]
    return {"currency": F("EUR"), "price": F(100), "parcel": {"ref": F("P-1")},
            "holders": [{"name": F(n), "share": F(s)} for n, s in zip(names, shares, strict=True)]}


def test_shares_add_up_exactly_and_a_near_miss_of_rounded_shares_says_why():
    doctype = doctype_build(spec_parse(deed()))
    assert broken(doctype, holders("1/3", "1/3", "1/3")) == {}
    assert broken(doctype, holders("33.3%", "33.3%", "33.4%")) == {}
    (v,) = broken(doctype, holders("33.33%", "33.33%", "33.33%"))["shares_whole"]
    assert v.message.startswith("Shares make 9999/10000 (99.99%), not 1: 33.33% + 33.33% + 33.33%")
    assert "Rounded shares" in v.message and (v.expected, v.found) == (1, "9999/10000")
    (v,) = broken(doctype, holders("1/2", "1/4"))["shares_whole"]
    assert v.message == "Shares make 3/4 (75%), not 1: 1/2 + 1/4"


def test_a_share_that_is_not_a_fraction_of_a_whole_is_named_by_its_row():
    doctype = doctype_build(spec_parse(deed()))
    got = broken(doctype, holders("half", "150%", names=["Ana", "Bo"]))
    assert got["fraction_parse"][0].message.startswith("Holder 1 (Ana): Share: the share 'half' is not a fraction")
    assert got["fraction_range"][0].fields == ("holders[1].share",) and "150%" in got["fraction_range"][0].message
    assert "shares_whole" not in got  # a share that cannot be read is no evidence about the sum


@pytest.mark.parametrize(("value", "hint"), [("€", "answer the code EUR"), ("eur", "capitals: EUR"),
                                              ("Euros", "three-letter ISO 4217 code")])
def test_a_currency_field_takes_an_iso_code_and_the_message_says_what_to_answer(value, hint):
    doctype = doctype_build(spec_parse(deed()))
    a = holders("1")
    a["currency"] = F(value)
    (v,) = broken(doctype, a)["currency_code"]
    assert hint in v.message and v.fields == ("currency",)


def test_a_groups_fields_nest_under_its_key_and_sections_head_the_desk_after_the_tables():
    doctype = doctype_build(spec_parse(deed()))
    parsed = doctype.parse_answer(holders("1"))
    assert parsed["parcel"]["ref"]["value"] == "P-1"
    assert [g.name for g in doctype.field_groups(parsed)] == ["Deed", "Parcel", "Holders", "Sale"]
    assert doctype.editable["parcel.ref"] is str and '"parcel": {"ref": F}' in doctype.system_prompt


def test_a_sentence_names_fields_and_leaves_out_a_bracketed_part_whose_field_is_missing():
    data = bill()
    data["tables"][0]["row_label"] = "Line {row}[ ({sku})]"
    data["rules"][1]["message"] = "{row_label}: {qty} x {price}[ (tax {tax})] = {expected}, not {found} [sic]"
    doctype = doctype_build(spec_parse(data))
    lines = [{"sku": F("A1"), "qty": F(2), "price": F(5), "amount": F(10)},
             {"sku": F(None), "qty": F(3), "price": F(5.5), "amount": F(16)}]
    (v,) = broken(doctype, answer(lines=lines, tax=F(None)))["line_amount"]
    assert v.message == "Line 2: 3 x 5.50 = 16.50, not 16 [sic]"
    (v,) = broken(doctype, answer(lines=lines))["line_amount"]
    assert v.message == "Line 2: 3 x 5.50 (tax 3) = 16.50, not 16 [sic]"


def test_a_default_stands_in_for_a_missing_operand_which_is_then_not_cited():
    data = bill()
    data["rules"][2]["defaults"] = {"tax": "0"}
    doctype = doctype_build(spec_parse(data))
    (v,) = broken(doctype, answer(tax=F(None), total=F(31)))["total_closes"]
    assert v.fields == ("subtotal", "total") and (v.expected, v.found) == (30, 31)
    assert "total_closes" not in broken(doctype, answer(tax=F(None), total=F(30)))
    assert "total_closes" not in broken(doctype_build(spec_parse(bill())), answer(tax=F(None), total=F(31)))


def test_a_sum_may_close_on_any_of_its_targets_and_says_which_it_missed():
    data = bill()
    data["rules"][0].update(or_fields=["total"], message="Lines make {found}; the {target} says {expected} ({difference})",
                            message_none_of="Lines make {found}: neither {subtotal} nor {total}")
    doctype = doctype_build(spec_parse(data))
    assert "lines_add_up" not in broken(doctype, answer(subtotal=F(27), total=F(30)))
    (v,) = broken(doctype, answer(subtotal=F(27), total=F(31)))["lines_add_up"]
    assert v.message == "Lines make 30.00: neither 27 nor 31" and v.fields[-1] == "subtotal"
    (v,) = broken(doctype, answer(subtotal=F(None), total=F(31)))["lines_add_up"]
    assert v.message == "Lines make 30.00; the total says 31 (-1.00)"


def test_a_required_rule_with_any_asks_for_one_of_its_fields():
    data = deed(rules=[{"code": "parcel_named", "label": "No parcel", "kind": "required", "any": True,
                        "fields": ["parcel.ref", "currency"], "message": "Name the parcel or the currency."}])
    doctype = doctype_build(spec_parse(data))
    a = holders("1")
    assert broken(doctype, a) == {}
    a["parcel"] = {"ref": F(None)}
    a["currency"] = F("")
    (v,) = broken(doctype, a)["parcel_named"]
    assert v.fields == ("parcel.ref", "currency")


def test_a_rubric_question_is_built_and_labelled():
    data = deed(rubric=[{"code": "seller_named", "label": "The seller is not named", "question": "Is the seller named?",
                         "fields": ["parcel.ref"]}])
    doctype = doctype_build(spec_parse(data))
    assert [(q.code, q.fields) for q in doctype.rubric] == [("seller_named", ("parcel.ref",))]
    assert doctype.rule_labels["seller_named"] == "The seller is not named"


@pytest.mark.parametrize(("change", "problem"), [
    (lambda d: d["rules"][0].update(message="Shares make {share_total}"), "names {share_total}, which is neither"),
    (lambda d: d["rules"][0].update(field="price"), "with a field or with a value, not both"),
    (lambda d: d["tables"][0].update(row_label="Holder {row} {nombre}"), "row label names {nombre}"),
    (lambda d: d.update(rubric=[{"code": "q", "label": "Q", "question": "?", "fields": ["seller"]}]),
     "its field 'seller' is not a field"),
    (lambda d: d["groups"][0].update(key="holders"), "the key 'holders' is used twice"),
    (lambda d: d.update(rules=[{"code": "x", "label": "X", "kind": "expression", "field": "price",
                                "expression": "price", "defaults": {"currency": "0"}, "message": "m"}]),
     "default for 'currency' is for a field the expression does not read"),
])
def test_the_check_names_what_is_wrong_with_the_new_parameters(change, problem):
    data = deed()
    change(data)
    with pytest.raises(DefinitionError) as err:
        spec_parse(data)
    assert any(problem in p for p in err.value.problems), err.value.problems


def test_the_shipped_invoice_and_ownership_are_definitions_that_export_as_they_are_read():
    from extraction.doctypes.registry import get_doctype

    for name in ("invoice", "ownership"):
        path = ROOT / "extraction" / "doctypes" / f"{name}.yaml"
        spec = spec_from_yaml(path.read_text())
        assert get_doctype(name).definition == spec
        assert spec_from_yaml(spec_to_yaml(spec)) == spec


def test_a_sentence_names_the_field_it_speaks_of_in_words():
    data = bill()
    data["rules"][6]["message"] = "The {field} {found} is on line {row} again."
    data["rules"][5]["message"] = "A bill lists its {field}."
    doctype = doctype_build(spec_parse(data))
    twice = [{"sku": F("A1"), "qty": F(1), "price": F(15), "amount": F(15)},
             {"sku": F("A1"), "qty": F(1), "price": F(15), "amount": F(15)}]
    (v,) = broken(doctype, answer(lines=twice))["sku_once"]
    assert v.message == "The SKU A1 is on line 2 again."
    assert broken(doctype, answer(lines=[]))["has_lines"][0].message.startswith("A bill lists its lines")


# --- a check that cannot finish (issue 40): the field is unchecked, not passed; the definition warns ---


SLOW = r"(a|aa)+$"
ADVERSARIAL = "a" * 28 + "!"


def _with_slow_field_pattern():
    data = bill()
    data["fields"].append({"key": "ref", "label": "Reference", "kind": "code", "pattern": SLOW,
                           "pattern_source": "the issuer's references"})
    return doctype_build(spec_parse(data))


def _with_slow_pattern_rule():
    data = bill()
    data["fields"].append({"key": "ref", "label": "Reference", "kind": "text"})
    data["rules"].append({"code": "ref_form", "label": "Reference form", "kind": "pattern", "field": "ref",
                          "pattern": SLOW, "source": "the issuer's references", "message": "Bad ref {found}."})
    return doctype_build(spec_parse(data))


def test_a_field_whose_pattern_runs_out_of_time_is_marked_unchecked_not_passed():
    for doctype in (_with_slow_field_pattern(), _with_slow_pattern_rule()):
        found = broken(doctype, answer(ref=F(ADVERSARIAL)))
        assert list(found) == [CHECK_UNFINISHED], found
        (v,) = found[CHECK_UNFINISHED]
        assert v.unchecked and v.fields == ("ref",) and v.found == ADVERSARIAL
        assert "could not be checked" in v.message and "unchecked" in v.message


def test_a_value_the_same_pattern_decides_in_time_is_passed_or_broken_as_before():
    doctype = _with_slow_pattern_rule()
    assert broken(doctype, answer(ref=F("aaaa"))) == {}
    assert list(broken(doctype, answer(ref=F("ab")))) == ["ref_form"]


def test_an_unchecked_field_is_not_sent_back_to_the_model_and_the_document_does_not_pass():
    doctype = _with_slow_field_pattern()
    asked = []

    def extract(attempt):
        asked.append(attempt.round)
        return doctype.parse_answer(answer(ref=F(ADVERSARIAL)))

    result = run_validation_loop(extract, lambda a: [v for rule in doctype.rules for v in rule(a, CTX)], 3)
    assert asked == [1]  # the model cannot make a check finish: no second round for it
    assert not result.best.passed and result.reason == "stagnated"
    assert [v.code for v in result.best.violations] == [CHECK_UNFINISHED]


def test_the_definitions_check_warns_of_a_pattern_that_backtracks_catastrophically_and_names_a_value():
    data = bill()
    data["fields"].append({"key": "ref", "label": "Reference", "kind": "code", "pattern": SLOW,
                           "pattern_source": "the issuer's references"})
    warnings = spec_warnings(spec_parse(data))
    assert len(warnings) == 1 and "field 'ref'" in warnings[0] and "backtracks catastrophically" in warnings[0]
    assert spec_warnings(spec_parse(bill())) == []


def test_the_backtracking_probe_finds_nested_repeats_and_leaves_ordinary_formats_alone():
    assert pattern_backtracks(SLOW) is not None
    for pattern in (r"B-\d{4}", r"[A-Z]{2}\d{6}", r"\d+(\.\d+)?", r"^[\w.+-]+@[\w-]+\.[\w.]+$", r"\d{3}-\d{4}"):
        assert pattern_backtracks(pattern) is None, pattern
