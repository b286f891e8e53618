"""Reading a document through the validation loop (pure: no Django).

`read_pages` is the reading's one entry point: the pipeline (extraction/pipeline/extract.py) hands it a
document's pages and records what it sees through its hooks; benchmarks and scripts call it on documents
that never enter the database. `round_extractor` is its `extract` for a model: round 1 asks for the whole
answer; from round 2 the model returns a patch of the fields the broken rules involve
(extraction/reading/patches.py), checked against the type's schema once merged, and in vision and hybrid
modes it sees crops of the page around those fields' proofs instead of whole pages (`proof_crops`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from extraction.doctypes.base import DocumentType
from extraction.llm.client import LlmClient
from extraction.llm.config import LlmConfig
from extraction.llm.errors import LlmBadAnswer
from extraction.llm.images import crop_to_data_url, image_to_data_url, redact_images
from extraction.ocr.blocks import BBox, OcrPage
from extraction.ocr.tagged_text import PromptDocument
from extraction.proofs.resolve import resolve_path
from extraction.reading.context import reading_context
from extraction.reading.feedback import build_messages, wants_patch
from extraction.reading.loop import AnswerParseError, Attempt, LoopObserver, LoopResult, run_validation_loop
from extraction.reading.patches import Patch, PatchError, apply_patch, parse_patch, patch_from_answer, patch_schema
from extraction.reading.validation import make_validator
from extraction.rules.answers import get_field
from extraction.rules.violations import RuleContext, Violation

__all__ = ["Reading", "proof_crops", "read_pages", "round_extractor"]

_CROP_MARGIN_LINES = 2.0  # text lines of context above and below the cited rows


def round_extractor(
    *,
    client: LlmClient,
    doctype: DocumentType,
    prompt_text: str | None,
    images: Callable[[Attempt], list[str]],
    on_request: Callable[[list[dict[str, Any]]], None] | None = None,
    on_reply: Callable[[Any], None] | None = None,
) -> Callable[[Attempt], dict[str, Any] | Patch]:
    """The loop's `extract`: build the round's messages, ask the model, read its answer or its patch."""

    def extract(attempt: Attempt) -> dict[str, Any] | Patch:
        messages = build_messages(doctype=doctype, prompt_text=prompt_text, images=images(attempt), attempt=attempt)
        if on_request is not None:
            on_request(messages)
        patch = wants_patch(attempt)
        schema: Any = patch_schema(involved=list(attempt.involved)) if patch else doctype.schema
        try:
            reply = client.complete_json(messages=messages, schema=schema,
                                         schema_name=f"{doctype.name}_changes" if patch else doctype.name)
        except LlmBadAnswer as err:
            if on_reply is not None:
                on_reply(err.reply)
            raise AnswerParseError(err.message, err.raw_text) from None
        if on_reply is not None:
            on_reply(reply)
        if not patch:
            return doctype.parse_answer(reply.data)
        found = _patch_of(reply, doctype=doctype, attempt=attempt)
        # the merged answer must still be the type's answer; its values come back typed ('56' -> 56)
        merged = doctype.parse_answer(apply_patch(attempt.previous_answer, found))
        typed = {path: get_field(merged, path) for path in found.changes}
        return Patch(changes=typed, outside=found.outside, unknown=found.unknown)

    return extract


def _patch_of(reply: Any, *, doctype: DocumentType, attempt: Attempt) -> Patch:
    """The reply as a patch; a whole answer (models sometimes send one anyway) counts as the changes it
    makes."""
    data = reply.data
    if isinstance(data, dict) and "changes" not in data:
        try:
            full = doctype.parse_answer(data)
        except AnswerParseError:
            full = None
        if full is not None:
            return patch_from_answer(full, previous=attempt.previous_answer, involved=attempt.involved)
    try:
        return parse_patch(data, involved=attempt.involved, answer=attempt.previous_answer)
    except PatchError as err:
        raise AnswerParseError(str(err), reply.raw_text) from None


def proof_crops(*, answer: dict[str, Any], involved: tuple[str, ...], ctx: RuleContext) -> dict[int, BBox]:
    """Per page, the band of the page that holds the involved fields' proofs, with a margin of a couple of
    text lines (measured on the cited blocks) above and below, across the page's whole width so each row's
    label stays in view. Empty when the involved fields cite nothing (vision input): send whole pages.
    `ctx` locates proofs through the prompt's ids even where the model did not read them
    (`RuleContext.locating`)."""
    ctx = ctx.locating()
    boxes: dict[int, list[BBox]] = {}
    for path in involved:
        try:
            node = get_field(answer, path)
        except KeyError:
            continue
        for found in resolve_path(answer, path, node, ctx) if isinstance(node, dict) else []:
            boxes.setdefault(found.page, []).append(found.bbox)
    crops = {}
    for page, found in boxes.items():
        union = BBox.enclosing(found)
        line = sorted(b.height for b in found)[len(found) // 2]
        top = max(0.0, union.top - _CROP_MARGIN_LINES * line)
        bottom = min(1.0, union.bottom + _CROP_MARGIN_LINES * line)
        crops[page] = BBox(0.0, top, 1.0, bottom - top)
    return crops


def round_images(*, pages: dict[int, Any], ctx: RuleContext, max_side: int) -> Callable[[Attempt], list[str]]:
    """Images for each round: every page in round 1 (and whenever no proof locates the involved fields);
    from round 2, the crops of `proof_crops`. `pages` maps page numbers to images (paths or PIL images)."""

    def images(attempt: Attempt) -> list[str]:
        crops = {}
        if attempt.round > 1 and isinstance(attempt.previous_answer, dict):
            crops = proof_crops(answer=attempt.previous_answer, involved=attempt.involved, ctx=ctx)
        if crops:
            return [crop_to_data_url(pages[n], box, max_side) for n, box in sorted(crops.items()) if n in pages]
        return [image_to_data_url(pages[n], max_side=max_side) for n in sorted(pages)]

    return images


@dataclass
class Reading:
    result: LoopResult
    prompt: PromptDocument
    validate: Callable[[Any], list[Violation]]
    ctx: RuleContext  # what the rules read besides the answer (reading_context)


def read_pages(*, pages: list[OcrPage], doctype: DocumentType, config: LlmConfig | None, max_rounds: int = 3,
               page_images: Mapping[int, Any] | None = None, judge: bool = False, deadline: float | None = None,
               observer: LoopObserver | None = None,
               on_request: Callable[[Any], None] | None = None,
               on_reply: Callable[[Any], None] | None = None,
               on_client: Callable[[LlmClient], None] | None = None) -> Reading:
    """The reading's one entry point: these pages through the validation loop, read by the model of `config`,
    or (`config` None) by the type's own offline reader in one round (it gives the same answer every time).

    Vision and hybrid input need `page_images` (page number -> image or its path; the type's `prepare_image` is
    applied here); the proofs are checked only when the model read the text. `judge`: ask the type's rubric
    through the model once every rule passes. `deadline` (time.monotonic()) bounds the whole reading;
    `on_client` sees the client before its first call (the pipeline aborts it when its claim is lost);
    `on_request` sees each request, its images redacted, and `on_reply` each reply."""
    if config is None and doctype.offline_reader is None:
        raise ValueError(f"the document type {doctype.name!r} needs an LLM")
    if config is not None and config.input_mode != "text" and not page_images:
        raise ValueError(f"{config.input_mode} input needs the page images")
    ctx = reading_context(doctype=doctype, input_mode=config.input_mode if config else "ocr", pages=pages)
    prompt = ctx.page_prompt
    if config is None:
        def offline(attempt: Attempt) -> dict[str, Any]:
            if on_request is not None:
                on_request({"reader": "template", "pages": len(pages)})
            return doctype.parse_answer(doctype.offline_reader(pages=pages, prompt=prompt))

        validate = make_validator(doctype, ctx)
        result = run_validation_loop(offline, validate, 1, observer=observer)
        return Reading(result=result, prompt=prompt, validate=validate, ctx=ctx)

    client = LlmClient(config, deadline=deadline)
    if on_client is not None:
        on_client(client)
    validate = make_validator(doctype, ctx, judge=client.judge if judge and doctype.rubric else None)
    shown = {n: doctype.prepare_image(image) if doctype.prepare_image else image
             for n, image in (page_images or {}).items()}
    images = (round_images(pages=shown, ctx=ctx, max_side=config.image_max_side)
              if config.input_mode != "text" else (lambda attempt: []))
    extract = round_extractor(client=client, doctype=doctype, prompt_text=prompt.text if ctx.prompt else None,
                              images=images, on_request=None if on_request is None else
                              (lambda messages: on_request(redact_images(messages))), on_reply=on_reply)
    try:
        result = run_validation_loop(extract, validate, max_rounds, observer=observer)
    finally:
        client.close()
    return Reading(result=result, prompt=prompt, validate=validate, ctx=ctx)
