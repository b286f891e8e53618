"""Test data for the review desk, built with the ORM in well under a second (no rendering, no OCR).

`flagged_acta()` draws an acta's rows onto page PNGs with Pillow, stores LINE and WORD blocks whose boxes are
where the text was drawn, then runs the real offline template reader, the acta rules and the proof resolution
over those blocks — so FieldValues, proofs and Violations are exactly what the pipeline would store.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass

from django.core.files.base import ContentFile
from PIL import Image, ImageDraw, ImageFont

from extraction.doctypes.acta.layout import PARTIES
from extraction.doctypes.acta.template_reader import read_acta
from extraction.doctypes.registry import get_doctype
from extraction.models import Batch, Block, Document, Extraction, Page, Round, Violation
from extraction.pipeline.extract import fieldvalues_save, ocr_pages_of, violations_save
from extraction.reading.context import reading_context
from extraction.reading.prompt import render_prompt
from extraction.reading.validation import make_validator
from extraction.states import Status
from sheetgen.generate import spell_digits

PAGE_W, PAGE_H = 1275, 1650
ROW_H = 0.05


@dataclass
class ActaDoc:
    document: Document
    extraction: Extraction
    counts: list[int]
    wrong_row: int | None  # the row whose words disagree with its digits
    true_words: str | None  # what the words of that row should say


def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


def _layout(pages: int, rows: list[tuple[str, str, str]], header: str, totals: list[tuple[str, str, str]],
            filler_words: int) -> list[list[tuple[float, list[str]]]]:
    """Per page: (top, words of the line). Rows are spread over the pages; totals go on the last one."""
    per_page = -(-len(rows) // pages)
    out = []
    for n in range(pages):
        lines: list[tuple[float, list[str]]] = [(0.04, ["ACTA", header])]
        chunk = rows[n * per_page:(n + 1) * per_page]
        for i, (party, digits, words) in enumerate(chunk):
            lines.append((0.1 + i * ROW_H, [*party.split(), digits, *words.split()]))
        top = 0.1 + len(chunk) * ROW_H + 0.02
        if n == pages - 1:
            for label, digits, words in totals:
                lines.append((top, [*label.split(), digits, *words.split()]))
                top += ROW_H
        filler = [f"NOTA{k}" for k in range(filler_words // pages)]
        for k in range(0, len(filler), 8):
            lines.append((top, filler[k:k + 8]))
            top += 0.025
        out.append(lines)
    return out


def _draw_page(lines: list[tuple[float, list[str]]]) -> tuple[bytes, list[tuple[float, list[tuple[str, tuple]]]]]:
    """A PNG with the lines drawn, and for each line its words with their normalized boxes."""
    img = Image.new("RGB", (PAGE_W, PAGE_H), "white")
    draw = ImageDraw.Draw(img)
    font = _font(22)
    placed = []
    for top, words in lines:
        x = int(0.06 * PAGE_W)
        y = int(top * PAGE_H)
        boxes = []
        for word in words:
            x0, y0, x1, y1 = draw.textbbox((x, y), word, font=font)
            draw.text((x, y), word, fill="black", font=font)
            boxes.append((word, (x0 / PAGE_W, y0 / PAGE_H, (x1 - x0) / PAGE_W, (y1 - y0) / PAGE_H)))
            x = x1 + 14
        placed.append((top, boxes))
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=1)
    return buf.getvalue(), placed


def flagged_acta(*, batch: Batch | None = None, seed: int = 1, pages: int = 1, wrong_row: int | None = 4,
                 filler_words: int = 0, filename: str | None = None) -> ActaDoc:
    """A processed acta; with `wrong_row` its words disagree with its digits, so it is flagged."""
    rng = random.Random(seed)
    counts = [rng.choice([0, 0, 1, 3, 7, 12, 25, 40, 88, 120]) for _ in PARTIES]
    width = 4
    rows = [(party, str(c).zfill(width), spell_digits(str(c).zfill(width))) for party, c in zip(PARTIES, counts,
                                                                                               strict=True)]
    true_words = None
    if wrong_row is not None:
        party, digits, true_words = rows[wrong_row]
        slip = str((int(digits[-1]) + 1) % 10)
        rows[wrong_row] = (party, digits, spell_digits(digits[:-1] + slip))
    valid, null = sum(counts), 3
    totals = [(label, str(n).zfill(width), spell_digits(str(n).zfill(width)))
              for label, n in (("VOTOS VALIDOS", valid), ("VOTOS NULOS", null), ("TOTAL VOTOS", valid + null))]
    acta_id = f"{170703045 + seed:09d}.05"

    batch = batch or Batch.objects.create(name=f"desk-{seed}", doctype="acta", ocr_engine="rapidocr")
    document = Document.objects.create(batch=batch, filename=filename or f"acta-{seed}.pdf", sha256=f"{seed:064d}",
                                       kind="pdf", page_count=pages, status=Status.PROCESSING.value)
    for number, lines in enumerate(_layout(pages, rows, acta_id, totals, filler_words), start=1):
        png, placed = _draw_page(lines)
        page = Page(document=document, number=number, width=PAGE_W, height=PAGE_H, engine="test")
        page.image.save(f"page-{number:04d}.png", ContentFile(png), save=False)
        page.save()
        _store_blocks(document, page, placed)

    ocr_pages = ocr_pages_of(document=document)
    prompt = render_prompt(ocr_pages)
    blocks = [b for p in ocr_pages for b in p.blocks]
    doctype = get_doctype("acta")
    answer = doctype.parse_answer(read_acta(pages=ocr_pages, prompt=prompt))
    ctx = reading_context(doctype=doctype, input_mode="ocr", prompt=prompt, blocks=blocks)
    violations = make_validator(doctype, ctx)(answer)
    extraction = Extraction.objects.create(document=document, doctype="acta", reader=Extraction.Reader.TEMPLATE,
                                           stop_reason="passed" if not violations else "exhausted", best_round=1,
                                           answer=answer)
    Round.objects.create(extraction=extraction, number=1, state=Round.State.COMPLETED, parsed=answer,
                         violations=[v.to_dict() for v in violations])
    fieldvalues_save(extraction=extraction, answer=answer, ctx=ctx)
    violations_save(extraction=extraction, violations=violations)
    Document.objects.filter(pk=document.pk).update(
        status=(Status.FLAGGED if violations else Status.PASSED).value, version=2)
    document.refresh_from_db()
    return ActaDoc(document=document, extraction=extraction, counts=counts, wrong_row=wrong_row,
                   true_words=true_words)


def _store_blocks(document: Document, page: Page, placed) -> None:
    """LINE blocks with their WORD children, in two inserts per page."""
    page_block = Block.objects.create(document=document, page=page, key=f"p{page.number}", type="PAGE",
                                      left=0, top=0, width=1, height=1, order=0)
    order = 0
    lines, words_of = [], []
    for li, (_top, words) in enumerate(placed):
        lefts = [b[0] for _, b in words]
        tops = [b[1] for _, b in words]
        rights = [b[0] + b[2] for _, b in words]
        bottoms = [b[1] + b[3] for _, b in words]
        order += 1
        lines.append(Block(
            document=document, page=page, key=f"p{page.number}l{li}", type="LINE", text=" ".join(w for w, _ in words),
            left=min(lefts), top=min(tops), width=max(rights) - min(lefts), height=max(bottoms) - min(tops),
            confidence=0.97, parent=page_block, order=order,
        ))
        word_rows = []
        for wi, (word, (left, top, width, height)) in enumerate(words):
            order += 1
            word_rows.append(Block(document=document, page=page, key=f"p{page.number}l{li}w{wi}", type="WORD",
                                   text=word, left=left, top=top, width=width, height=height,
                                   confidence=0.9 + (wi % 10) / 100, order=order))
        words_of.append(word_rows)
    Block.objects.bulk_create(lines)
    for line, word_rows in zip(lines, words_of, strict=True):
        for w in word_rows:
            w.parent_id = line.pk
    Block.objects.bulk_create([w for rows in words_of for w in rows])


def add_proof_on_page(*, extraction: Extraction, path: str, page_number: int) -> None:
    """Give a field a second proof on another page (a value cited on several pages)."""
    from extraction.models import FieldValue

    fv = FieldValue.objects.get(extraction=extraction, path=path)
    lines = Block.objects.filter(document=extraction.document, page__number=page_number, type="LINE")
    line = lines.order_by("order")[0]
    fv.proofs = [*fv.proofs, {"block_id": str(line.pk), "page": page_number, "type": "LINE", "text": line.text,
                              "method": "id", "score": 1.0,
                              "bbox": {"left": line.left, "top": line.top, "width": line.width,
                                       "height": line.height}}]
    fv.save(update_fields=["proofs"])


def tiny_flagged_document(*, seed: int = 0) -> Document:
    """A flagged document with one small page, one field and one broken rule: cheap, for access checks."""
    from extraction.models import FieldValue, Violation

    batch = Batch.objects.create(name=f"tiny-{seed}", doctype="acta", ocr_engine="rapidocr")
    document = Document.objects.create(batch=batch, filename=f"tiny-{seed}.pdf", sha256=f"{seed:064x}", kind="pdf",
                                       page_count=1, status=Status.FLAGGED.value, version=1)
    buf = io.BytesIO()
    Image.new("RGB", (40, 50), "white").save(buf, format="PNG")
    page = Page(document=document, number=1, width=40, height=50, engine="test")
    page.image.save("page-0001.png", ContentFile(buf.getvalue()), save=False)
    page.save()
    bbox = {"left": 0.1, "top": 0.1, "width": 0.5, "height": 0.1}
    answer = {"acta_id": {"value": "1", "proof": [{"type": "LINE", "id": 1}]}}
    extraction = Extraction.objects.create(document=document, doctype="acta", answer=answer, stop_reason="exhausted")
    FieldValue.objects.create(extraction=extraction, path="acta_id", value="1", model_value="1",
                              proofs=[{"block_id": "1", "page": 1, "type": "LINE", "text": "1", "bbox": bbox}])
    Violation.objects.create(extraction=extraction, code="acta_id_format", message="The acta id '1' is malformed",
                             fields=["acta_id"])
    return document


def add_triage_rules(extraction: Extraction) -> None:
    """Broken rules as reviewers get them to triage: three fields of one rule (rows 31, 32 and 34's words not
    what their proofs show) and a sum over 39 fields."""
    for row in (30, 31, 33):
        Violation.objects.create(extraction=extraction, code="value_grounded", fields=[f"rows[{row}].votes_words"],
                                 message=f"rows[{row}].votes_words: the answer says X but the cited text reads Y")
    Violation.objects.create(extraction=extraction, code="sum_valid_votes", message="Party votes add up to 1",
                             fields=[f"rows[{i}].votes" for i in range(38)] + ["valid_votes"])
