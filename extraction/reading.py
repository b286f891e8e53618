"""Read OCR'd pages with an LLM through the validation loop, without the database (pure).

The same steps as the pipeline's extraction run (extraction/services/extract.py) for text input: render the
tagged prompt, build each round's messages, ask the model for the type's JSON, check the answer with the
type's rules and the proof rules, feed the broken rules back, keep the best round. Benchmarks and scripts
call it to measure the production reading path on documents that never enter the database.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from extraction import llm as llm_mod
from extraction.doctypes.base import DocumentType
from extraction.feedback import build_messages
from extraction.loop import AnswerParseError, Attempt, LoopResult, run_validation_loop
from extraction.ocr.blocks import OcrPage
from extraction.prompt import render_prompt
from extraction.prompt_doc import PromptDocument
from extraction.rules import RuleContext, Violation, make_validator

__all__ = ["Reading", "read_pages"]


@dataclass
class Reading:
    result: LoopResult
    prompt: PromptDocument
    validate: Callable[[Any], list[Violation]]


def read_pages(*, pages: list[OcrPage], doctype: DocumentType, config: llm_mod.LlmConfig,
               max_rounds: int = 3) -> Reading:
    """Run the validation loop over these pages with the model of `config` (text input: the OCR text)."""
    if config.input_mode != "text":
        raise ValueError("read_pages sends the OCR text only; page images need the stored pages")
    prompt = render_prompt(pages)
    ctx = RuleContext(prompt=prompt, blocks=[b for p in pages for b in p.blocks])
    validate = make_validator(doctype, ctx)
    client = llm_mod.LlmClient(config)

    def extract(attempt: Attempt) -> dict:
        messages = build_messages(doctype=doctype, prompt_text=prompt.text, images=[], attempt=attempt)
        try:
            reply = client.complete_json(messages=messages, schema=doctype.schema, schema_name=doctype.name)
        except llm_mod.LlmBadAnswer as err:
            raise AnswerParseError(err.message, err.raw_text) from None
        return doctype.parse_answer(reply.data)

    try:
        result = run_validation_loop(extract, validate, max_rounds)
    finally:
        client.close()
    return Reading(result=result, prompt=prompt, validate=validate)
