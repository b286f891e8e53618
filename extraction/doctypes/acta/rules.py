"""The rules of the `acta` (pure): 38 party rows in sheet order, digits agreeing with their digit words, sums
that add up, the acta code's form, and proofs that cite the row's own party."""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from typing import Any

from extraction.doctypes.acta.layout import PARTIES
from extraction.ocr.blocks import BlockType, OcrBlock
from extraction.ocr.geometry import block_box
from extraction.ocr.layout import visual_rows
from extraction.ocr.page_rows import ITEM_PITCH, token_kind
from extraction.proofs.blocks import ResolvedProof
from extraction.proofs.resolve import block_index, resolve_field
from extraction.proofs.words import page_rows
from extraction.rules.answers import get_value
from extraction.rules.required import required_fields_rule
from extraction.rules.violations import RuleContext, Violation
from extraction.values.numbers import as_int, digit_word_runs, fold, parse_digit_words

# The acta code as the real sheets print it (Venezuela 2024, published with their decoded QR codes;
# docs/DESIGN.md, acta): 9 digits, a dot, 2 digits, e.g. 050201001.01 or 181103005.01.
ACTA_ID_PATTERN = re.compile(r"^\d{9}\.\d{2}$")
ACTA_ID_EXAMPLE = "050201001.01"

TOTALS: list[tuple[str, str]] = [
    ("valid_votes", "Valid votes"),
    ("null_votes", "Null votes"),
    ("total_votes", "Total votes"),
]


def _rows(answer: dict[str, Any]) -> list[dict[str, Any]]:
    rows = answer.get("rows")
    return rows if isinstance(rows, list) else []


def _row_label(i: int, row: dict[str, Any]) -> str:
    return f"Row {i + 1} ({row.get('party') or '?'})"



def rows_layout(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
    """The sheet has 38 party rows in a fixed order.

    Source: docs/DESIGN.md, acta (the 38 rows in sheet and QR order, grouped by candidate)."""
    rows = _rows(answer)
    if len(rows) != len(PARTIES):
        return [
            Violation(
                code="rows_layout",
                fields=("rows",),
                expected=len(PARTIES),
                found=len(rows),
                message=f"The sheet has {len(PARTIES)} party rows in a fixed order; the answer has "
                f"{len(rows)}. Give every row, in sheet order, even when its votes are 0.",
            )
        ]
    out = []
    for i, (row, party) in enumerate(zip(rows, PARTIES, strict=True)):
        if " ".join(fold(str(row.get("party", ""))).split()) != party:
            out.append(
                Violation(
                    code="rows_layout",
                    fields=(f"rows[{i}].party",),
                    expected=party,
                    found=row.get("party"),
                    message=f"Row {i + 1} must be party {party}, the answer says {row.get('party')!r}",
                )
            )
    return out


def _required(answer: dict[str, Any]) -> list[tuple[str, str]]:
    items = [("acta_id", "The acta id")]
    for i, row in enumerate(_rows(answer)):
        items += [
            (f"rows[{i}].votes", f"{_row_label(i, row)} votes"),
            (f"rows[{i}].votes_words", f"{_row_label(i, row)} votes in words"),
        ]
    for key, label in TOTALS:
        items += [(key, label), (f"{key}_words", f"{label} in words")]
    return items


def _counts(answer: dict[str, Any]) -> list[tuple[str, str]]:
    items = [(f"rows[{i}].votes", _row_label(i, row)) for i, row in enumerate(_rows(answer))]
    return items + list(TOTALS)


def negative_count(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
    """Counts are whole numbers, never negative. Source: arithmetic (a count of votes)."""
    out = []
    for path, label in _counts(answer):
        value = get_value(answer, path)
        if value is None:
            continue
        number = as_int(value)
        if number is None:
            out.append(
                Violation(
                    code="count_not_integer",
                    fields=(path,),
                    expected="a whole number",
                    found=value,
                    message=f"{label}: {value!r} is not a whole number of votes",
                )
            )
        elif number < 0:
            out.append(
                Violation(
                    code="negative_count",
                    fields=(path,),
                    expected=">= 0",
                    found=number,
                    message=f"{label}: a vote count cannot be negative, the answer says {number}",
                )
            )
    return out


def _digits_vs_words(
    code: str, label: str, digits_path: str, words_path: str, answer: dict[str, Any]
) -> Violation | None:
    digits, words = as_int(get_value(answer, digits_path)), get_value(answer, words_path)
    if digits is None or not isinstance(words, str) or not words.strip():
        return None  # missing values are reported by missing_value
    spelled = parse_digit_words(words)
    if spelled is None:
        return Violation(
            code=code,
            fields=(digits_path, words_path),
            expected=digits,
            found=words,
            message=f"{label}: the words {words!r} are not Spanish digit words "
            "(CERO, UNO, DOS, ... NUEVE, one per digit)",
        )
    if spelled != digits:
        return Violation(
            code=code,
            fields=(digits_path, words_path),
            expected=digits,
            found=f"{words} = {spelled}",
            message=f"{label}: digits say {digits} but words say {words} = {spelled}",
        )
    return None


def row_digits_words(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
    """Each row's digits and its digit words state the same number.

    Source: docs/DESIGN.md, acta (each row prints its votes in digits and spelled digit by digit)."""
    out = []
    for i, row in enumerate(_rows(answer)):
        v = _digits_vs_words(
            "row_digits_words_mismatch",
            _row_label(i, row),
            f"rows[{i}].votes",
            f"rows[{i}].votes_words",
            answer,
        )
        if v:
            out.append(v)
    return out


def total_digits_words(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
    """Each total's digits and its digit words state the same number.

    Source: docs/DESIGN.md, acta (counts are printed in digits and in digit words)."""
    out = []
    for key, label in TOTALS:
        v = _digits_vs_words("total_digits_words_mismatch", label, key, f"{key}_words", answer)
        if v:
            out.append(v)
    return out


def sum_valid_votes(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
    """Party votes add up to the valid votes. Source: docs/DESIGN.md, acta rules; arithmetic."""
    rows = _rows(answer)
    votes = [as_int(get_value(answer, f"rows[{i}].votes")) for i in range(len(rows))]
    valid = as_int(get_value(answer, "valid_votes"))
    if not rows or valid is None or any(v is None for v in votes):
        return []
    total = sum(v for v in votes if v is not None)
    if total == valid:
        return []
    return [
        Violation(
            code="sum_valid_votes",
            fields=(*(f"rows[{i}].votes" for i in range(len(rows))), "valid_votes"),
            expected=valid,
            found=total,
            subject="valid_votes",
            message=f"Party votes add up to {total} but valid votes say {valid} "
            f"(difference {total - valid:+d})",
        )
    ]


def valid_plus_null_total(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
    """Valid votes plus null votes make the total votes. Source: arithmetic of the sheet's totals."""
    valid, null, total = (as_int(get_value(answer, k)) for k, _ in TOTALS)
    if valid is None or null is None or total is None or valid + null == total:
        return []
    return [
        Violation(
            code="valid_plus_null_total",
            fields=("valid_votes", "null_votes", "total_votes"),
            expected=total,
            found=valid + null,
            subject="total_votes",
            message=f"Valid votes {valid} + null votes {null} = {valid + null}, but total votes say {total}",
        )
    ]


def acta_id_format(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
    """The acta code is 9 digits, a dot and 2 digits (050201001.01).

    Source: the real sheets of Venezuela 2024 as published with their decoded QR codes
    (docs/DESIGN.md, acta: "050201001.01, 181103005.01"). Only the code's form is checked; the label
    printed before it varies between sheets and is not part of it."""
    value = get_value(answer, "acta_id")
    if value is None or (isinstance(value, str) and not value.strip()):
        return []
    text = str(value).strip()
    if ACTA_ID_PATTERN.match(text):
        return []
    return [
        Violation(
            code="acta_id_format",
            fields=("acta_id",),
            expected=ACTA_ID_EXAMPLE,
            found=text,
            message=f"The acta code {text!r} is not of the form {ACTA_ID_EXAMPLE} "
            "(9 digits, a dot, 2 digits)",
        )
    ]


def degenerate_answer(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
    """Every count zero or empty while the sheet prints votes: the answer is unusable as a whole.

    Where the fact comes from: the seed study in DESIGN.md, in which a model answered all zeros after a
    failed round; 0 = 0 passes every sum, so no arithmetic rule sees it. The sheet spells every count in
    Spanish digit words (DESIGN.md), so a run of digit words with a value above zero anywhere in the OCR
    text means someone voted. A sheet where nobody voted prints only zeros and is not flagged.
    """
    counts = [as_int(get_value(answer, path)) for path, _ in _counts(answer)]
    if not counts or any(c for c in counts):
        return []
    printed = max((n for b in ctx.blocks if b.type is BlockType.LINE for n in digit_word_runs(b.text)), default=0)
    if printed == 0:
        return []
    return [
        Violation(
            code="degenerate_answer",
            fields=tuple(path for path, _ in _counts(answer)),
            expected="the counts printed on the sheet",
            found="every count 0 or empty",
            message="Every count in the answer is 0 or empty, but the sheet prints votes in words (for "
            f"example {printed}). Read each row's votes from the sheet; never answer 0 for a row that shows "
            "another number.",
            degenerate=True,
        )
    ]


_PARTY_SPANS = [(p, p.split()) for p in PARTIES]  # each party of the form and its words
_PARTY_WORDS = frozenset(tuple(words) for _, words in _PARTY_SPANS)


def _cites_party(tokens: list[str], party_tokens: list[str]) -> bool:
    """Whether the tokens name the party: its words in a row, or run together where the OCR lost the
    space between them (ELCAMBIO)."""
    n = len(party_tokens)
    if n > 1 and "".join(party_tokens) in tokens:
        return True
    return any(tokens[i : i + n] == party_tokens for i in range(len(tokens) - n + 1))


def _line_rows(index: Any, page: int, *, skew: float) -> dict[str, int]:
    """The visual row of every LINE of a page, skew taken out (extraction/ocr/layout.py): on a rotated scan
    a number at the right of a row sits lower than its party's name at the left, level with the next row's."""
    lines = [b for b in index.by_id.values() if b.type is BlockType.LINE and b.page == page]
    rows = visual_rows([block_box(b) for b in lines], skew=skew)
    return {lines[i].id: r for r, row in enumerate(rows) for i in row}


def _page_rows(index: Any, page: int, ctx: RuleContext) -> tuple[dict[str, int], dict[int | None, list[OcrBlock]]]:
    """A page's visual row of every LINE, and its LINEs grouped by that row (in the index's order); built once
    per context: they depend on the blocks only, and every cited line of the page asks for them."""
    memo: dict[int, Any] = ctx.cache.setdefault("acta_line_rows", {})
    if page not in memo:
        row_of = _line_rows(index, page, skew=page_rows(index, page, ctx).skew)
        by_row: dict[int | None, list[OcrBlock]] = defaultdict(list)
        for b in index.by_id.values():
            if b.type is BlockType.LINE and b.page == page:
                by_row[row_of.get(b.id)].append(b)
        memo[page] = (row_of, by_row)
    return memo[page]


def _row_neighbours(block: OcrBlock | None, index: Any, ctx: RuleContext) -> list[str]:
    """Text that names a cited number's row: the other cells of its table row, or, for a line holding
    only the number, the lines to its left in the same visual row (where the party's name is printed)."""
    if block is None:
        return []
    if block.type is BlockType.CELL and block.parent and block.row is not None:
        return [c.text for c in index.cells_of(block.parent)
                if c.id != block.id and c.row is not None and c.row <= block.row < c.row + (c.row_span or 1)]
    if block.type is BlockType.LINE:
        row_of, by_row = _page_rows(index, block.page, ctx)
        return [b.text for b in by_row.get(row_of.get(block.id), [])
                if b.id != block.id and b.bbox.right <= block.bbox.left + 1e-6]
    return []


def _proof_rows(found: list, index: Any, ctx: RuleContext) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The words of the rows a field's resolved proofs stand in (the cited text and its row's neighbours),
    folded, and the parties those words name (name, its words); kept per context by the cited blocks, which
    alone decide them (an edit checks every row again, and most rows cite what they cited before)."""
    memo: dict[tuple, tuple[list[str], list[tuple[str, list[str]]]]] = ctx.cache.setdefault("acta_proof_rows", {})
    key = tuple((f.block_id, f.text) for f in found)
    if key not in memo:
        texts = []
        for f in found:
            block = index.by_id.get(f.block_id)
            parent = index.by_id.get(block.parent or "") if block else None
            use_parent = block is not None and block.type is BlockType.WORD and parent is not None
            texts.append(parent.text if use_parent and parent else f.text)
            texts += _row_neighbours(parent if use_parent else block, index, ctx)
        tokens = re.findall(r"[A-Z0-9]+", fold(" ".join(texts)))
        memo[key] = tokens, [(p, pt) for p, pt in _PARTY_SPANS if _cites_party(tokens, pt)] if tokens else []
    return memo[key]


def _row_labels(index: Any, page: int, ctx: RuleContext) -> dict[str, str]:
    """The last word of every party name of the form printed on the page -> that party; a name printed on
    more than one row (the form prints each once: the OCR read another party's name as this one) labels no
    row. Built once per context: it depends on the blocks only."""
    memo: dict[int, dict[str, str]] = ctx.cache.setdefault("acta_row_labels", {})
    if page not in memo:
        rows = page_rows(index, page, ctx)
        ends: dict[str, str] = {}
        for party in PARTIES:
            found = rows.labels(party)
            if len({row for row, _, _ in found}) > 1:
                continue
            for row, _, right in found:
                for w in rows.rows[row]:
                    if rows.box(w).x1 == right:
                        ends[w.id] = party
        memo[page] = ends
    return memo[page]


def _label_starts(index: Any, page: int, ctx: RuleContext) -> list[float]:
    """Where the party names printed on the page start (their left edges in the page's unit, sorted): the
    label columns of the page's blocks of rows. Built once per context."""
    memo: dict[int, list[float]] = ctx.cache.setdefault("acta_label_starts", {})
    if page not in memo:
        rows = page_rows(index, page, ctx)
        memo[page] = sorted(left for party in PARTIES for _, left, _ in rows.labels(party))
    return memo[page]


def _party_before(word: ResolvedProof, index: Any, ctx: RuleContext) -> str | None:
    """The party whose name is the label of a cited word's row: the first words before it on its page row
    past the row's own values (its number in digits and in words), when they are a party's name; None when
    they are anything else (a candidate's name, text the OCR garbled), nothing, or a second number of a kind
    the row already showed (the values of a block of rows beside this one, whose own label is missing): no
    evidence of another party's row.

    Words to the left of a column where party names start (another block of rows beside this one, whatever
    its rows' heights) are not this word's row. Where the word's own block holds no label on its row, the
    row is the second line of an item whose first line is just above it (a form printing a party's figures,
    or its words, under its name): the label is the last party name there that starts in the word's block at
    or before the word, unless that line already shows a number of the word's kind."""
    rows = page_rows(index, word.page, ctx)
    row = rows.row_of.get(word.block_id)
    if row is None:
        return None
    words = rows.rows[row]
    at = next(i for i, w in enumerate(words) if w.id == word.block_id)
    box = rows.box(words[at])
    starts = _label_starts(index, word.page, ctx)
    reach = box.x0 + box.height  # a name starting under the word, give or take an engine's ragged box
    own = rows.run_of(word.block_id)
    seen = {own.kind} if own is not None else set()
    for w in reversed(words[:at]):
        if bisect.bisect_right(starts, reach) > bisect.bisect_right(starts, rows.box(w).x1):
            break  # a label column lies between: w is another block's
        run = rows.run_of(w.id)
        if run is own or token_kind(w.text) == "rule":
            continue
        if run is not None:
            if run.kind in seen and w is run.words[-1]:
                return None
            seen.add(run.kind)
            continue
        return _row_labels(index, word.page, ctx).get(w.id)
    return _party_above(row, box, own, index, word.page, ctx)


def _party_above(row: int, box: Any, own: Any, index: Any, page: int, ctx: RuleContext) -> str | None:
    """The party of the item whose first line stands just above a line of values without a label (see
    `_party_before`), or None."""
    rows = page_rows(index, page, ctx)
    if row < 1 or own is None:
        return None
    above = rows.rows[row - 1]
    height = max(box.height, *(rows.box(w).height for w in above))
    centre = sorted(rows.box(w).cy for w in above)[len(above) // 2]
    if box.cy - centre > ITEM_PITCH * height:
        return None  # a blank line or more between: not one item
    starts = _label_starts(index, page, ctx)
    reach = box.x0 + box.height
    block = next((x for x in reversed(starts) if x <= reach), float("-inf"))
    mine = [w for w in above if block - box.height <= rows.box(w).x0 <= reach]
    labels = _row_labels(index, page, ctx)
    for k in range(len(mine) - 1, -1, -1):
        w = mine[k]
        if rows.run_of(w.id) is not None or token_kind(w.text) == "rule":
            continue
        party = labels.get(w.id)
        if party is None:
            return None
        # the item's own line after its name, up to the next name: it must not show a number of this kind
        after = [v for v in above if rows.box(v).x0 > rows.box(w).x1]
        nxt = next((x for x in starts if x > rows.box(w).x1), float("inf"))
        kinds = {r.kind for v in after if rows.box(v).x0 < nxt and (r := rows.run_of(v.id)) is not None}
        return None if own.kind in kinds else party
    return None


def _other_party(own: list[str], found: list, index: Any, ctx: RuleContext) -> str | None:
    """The party other than `own` whose row the resolved proofs stand in, when they do not stand in `own`'s;
    None when they stand in no party's row or in `own`'s.

    Words a proof resolved to stand in the row whose label precedes them on their page row (`_party_before`);
    any other proof (a cell or line with no words that show the value) in the rows of its cell or line."""
    words = [f for f in found if f.type == BlockType.WORD.value and f.shows_value]
    if words:
        party = _party_before(words[0], index, ctx)
        return None if party is None or party.split() == own else party
    tokens, cited = _proof_rows(found, index, ctx)
    if not tokens:
        return None
    # a party of the form is cited or not as the memo says; a name the form lacks is looked for
    if any(pt == own for _, pt in cited) or (tuple(own) not in _PARTY_WORDS and _cites_party(tokens, own)):
        return None
    return next((p for p, pt in cited if pt != own), None)


def row_proof_party(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
    """A row's proof must not be another party's row: a line naming another party and not this one.

    Source: docs/DESIGN.md, acta (the seed study's vote moved between two parties of one candidate);
    the party names are the 38 of DESIGN.md, not any layout's."""
    if ctx.prompt is None:
        return []
    index = block_index(ctx)
    # Each field's verdict is kept beside the context's resolutions (its size bound covers both), by what alone
    # decides it: the row's party and the field's value and proofs. A check after an edit meets the rest as it was.
    memo = ctx.cache.setdefault("resolved", {})
    out = []
    for i, row in enumerate(_rows(answer)):
        party = str(row.get("party", ""))
        for key in ("votes", "votes_words"):
            node = row.get(key)
            if not isinstance(node, dict) or node.get("value") is None:
                continue
            memo_key = ("acta_row_party", party, repr(node.get("value")), repr(node.get("proof")))
            if memo_key not in memo:
                found = resolve_field(node, ctx, anchor=ctx.anchor(answer, f"rows[{i}].{key}"))
                memo[memo_key] = _other_party(fold(party).split(), found, index, ctx)
            other = memo[memo_key]
            if other is not None:
                out.append(
                    Violation(
                        code="row_proof_party",
                        fields=(f"rows[{i}].{key}",),
                        expected=row.get("party"),
                        found=other,
                        message=f"{_row_label(i, row)}: {key} cite a line of party {other}, not of "
                        f"{row.get('party')}; read this row's own line",
                    )
                )
    return out


RULES = [
    rows_layout,
    required_fields_rule(_required),
    negative_count,
    row_digits_words,
    total_digits_words,
    sum_valid_votes,
    valid_plus_null_total,
    degenerate_answer,
    acta_id_format,
    row_proof_party,
]
