"""Shared rule types and helpers (pure): violations, the rule context, answer paths, number/date parsing.

A rule is a pure function `(answer, ctx) -> list[Violation]` over the JSON-shaped answer, where every
leaf field is a "proved" dict `{"value": ..., "proof": [...]}` and is named by a path such as
`rows[3].votes` or `line_items[0].line_total`.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from extraction.ocr.blocks import OcrBlock
from extraction.prompt_doc import PromptDocument

if TYPE_CHECKING:
    from extraction.doctypes.base import DocumentType

JsonScalar = str | int | float | None

# --- violations and context --------------------------------------------------------------------------


@dataclass(frozen=True)
class Violation:
    """One broken rule. `expected`/`found` are JSON-safe so they can be stored and fed back as they are."""

    code: str
    message: str
    fields: tuple[str, ...] = ()
    expected: JsonScalar = None
    found: JsonScalar = None
    # The whole answer is unusable (all counts zero while the page prints votes): such a round is never kept
    # over one that is not, whatever else either breaks.
    degenerate: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        object.__setattr__(self, "expected", _json_safe(self.expected))
        object.__setattr__(self, "found", _json_safe(self.found))

    @property
    def key(self) -> tuple[str, tuple[str, ...], JsonScalar]:
        """What makes two violations 'the same' for stagnation: code, fields and what was found."""
        return (self.code, self.fields, self.found)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "code": self.code,
            "message": self.message,
            "fields": list(self.fields),
            "expected": self.expected,
            "found": self.found,
        }
        if self.degenerate:
            out["degenerate"] = True
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Violation:
        return cls(
            code=data["code"],
            message=data.get("message", ""),
            fields=tuple(data.get("fields") or ()),
            expected=data.get("expected"),
            found=data.get("found"),
            degenerate=bool(data.get("degenerate")),
        )


def _json_safe(value: Any) -> JsonScalar:
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, int | float):
        return value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, Fraction):
        return str(value)
    return str(value)


@dataclass
class RuleContext:
    """What rules may look at besides the answer: the prompt the model read and the OCR blocks.

    `prompt` is None when the model saw no OCR text (vision input): proofs cannot be checked then.
    `cache` lets expensive derived data (the block index, resolved proofs) be built once per context.
    """

    prompt: PromptDocument | None = None
    blocks: list[OcrBlock] = field(default_factory=list)
    word_numbers: bool = False  # the document type spells numbers in digit words (DocumentType.word_numbers)
    cache: dict[str, Any] = field(default_factory=dict, repr=False)


Rule = Callable[[dict[str, Any], RuleContext], list[Violation]]
# judge(question, answer_json) -> (passed, reason)
Judge = Callable[[str, str], tuple[bool, str]]


@dataclass(frozen=True)
class RubricCheck:
    """A question for a judge model, asked only once every code rule passes."""

    code: str
    question: str
    fields: tuple[str, ...] = ()


def run_rules(answer: dict[str, Any], ctx: RuleContext, rules: Iterable[Rule]) -> list[Violation]:
    out: list[Violation] = []
    for rule in rules:
        out.extend(rule(answer, ctx))
    return out


def evaluate_rubric(answer: dict[str, Any], checks: Iterable[RubricCheck], judge: Judge) -> list[Violation]:
    """Ask the judge each rubric question; a failed check becomes a `rubric:<code>` violation."""
    answer_json = json.dumps(answer, ensure_ascii=False, default=str)
    out = []
    for check in checks:
        passed, reason = judge(check.question, answer_json)
        if not passed:
            out.append(
                Violation(
                    code=f"rubric:{check.code}",
                    message=f"A reviewer check failed: {check.question} — {reason or 'no reason given'}",
                    fields=check.fields,
                    expected="yes",
                    found=reason or "no",
                )
            )
    return out


def schema_violations(doctype: DocumentType, answer: Any) -> list[Violation]:
    """Check the answer against the type's schema; each error becomes a `schema` violation on its path."""
    import pydantic

    try:
        doctype.schema.model_validate(answer)
    except pydantic.ValidationError as err:
        out = []
        for item in err.errors(include_url=False):
            loc = list(item["loc"])
            if loc[-1:] == ["value"]:
                loc = loc[:-1]  # the field is the proved leaf the desk edits, not its inner "value"
            path = loc_to_path(loc)
            got = item.get("input") if item["type"] != "missing" else None
            out.append(
                Violation(
                    code="schema",
                    message=f"{path or 'the answer'}: {item['msg']}",
                    fields=(path,) if path else (),
                    expected=None,
                    found=_short(got) if item["type"] != "missing" else "missing",
                )
            )
        return out
    return []


def make_validator(
    doctype: DocumentType, ctx: RuleContext, judge: Judge | None = None
) -> Callable[[Any], list[Violation]]:
    """The `validate` callable for the loop: schema, then the type's rules and the universal proof rules,
    then (only when all of those pass) the type's rubric through the judge."""
    from extraction.proofs import universal_rules  # proofs imports this module

    rules = [*doctype.rules, *universal_rules(word_numbers=doctype.word_numbers)]
    ctx.word_numbers = doctype.word_numbers  # proofs narrow to the words that show a value the type's way

    def validate(answer: Any) -> list[Violation]:
        if hasattr(answer, "model_dump"):
            answer = answer.model_dump(mode="json")
        broken = schema_violations(doctype, answer)
        if broken:
            return broken
        broken = run_rules(answer, ctx, rules)
        if not broken and judge is not None and doctype.rubric:
            broken = evaluate_rubric(answer, doctype.rubric, judge)
        return broken

    return validate


def _short(value: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- answer paths ------------------------------------------------------------------------------------

_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def parse_path(path: str) -> list[str | int]:
    """'line_items[0].line_total' -> ['line_items', 0, 'line_total']."""
    parts: list[str | int] = []
    for name, index in _TOKEN.findall(path):
        parts.append(int(index) if index else name)
    if not parts:
        raise KeyError(f"empty field path {path!r}")
    return parts


def loc_to_path(loc: Iterable[str | int]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def is_proved(node: Any) -> bool:
    return isinstance(node, dict) and "value" in node and set(node) <= {"value", "proof"}


def iter_fields(answer: Any, prefix: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every proved leaf of the answer as (path, {"value", "proof"}), in document order."""
    if is_proved(answer):
        yield prefix, answer
    elif isinstance(answer, dict):
        for key, child in answer.items():
            yield from iter_fields(child, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(answer, list):
        for i, child in enumerate(answer):
            yield from iter_fields(child, f"{prefix}[{i}]")


def get_field(answer: Any, path: str) -> Any:
    """The node at `path` (a proved dict for a leaf); KeyError when the path does not exist."""
    node = answer
    for part in parse_path(path):
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            raise KeyError(f"no field {path!r} in the answer") from None
    return node


def get_value(answer: Any, path: str, default: Any = None) -> Any:
    """The value of the proved leaf at `path`, or `default` when it is missing."""
    try:
        node = get_field(answer, path)
    except KeyError:
        return default
    return node.get("value", default) if isinstance(node, dict) else node


def set_field(answer: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of the answer with the value at `path` replaced (a proved leaf keeps its proof)."""
    new = copy.deepcopy(answer)
    *parents, last = parse_path(path)
    node: Any = new
    for part in parents:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            raise KeyError(f"no field {path!r} in the answer") from None
    try:
        target = node[last]
    except (KeyError, IndexError, TypeError):
        raise KeyError(f"no field {path!r} in the answer") from None
    if is_proved(target):
        target["value"] = value
    else:
        node[last] = value
    return new


def proved_paths(answer: Any) -> list[str]:
    return [path for path, _ in iter_fields(answer)]


# --- numbers -----------------------------------------------------------------------------------------

# a minus sign only where it cannot be a hyphen inside a code ("XJ-7781" shows 7781, not -7781)
_NUMBER_TOKEN = re.compile(r"(?:(?<![\w.,])[-−])?\d[\d.,'’/]*%?")
_CLEAN_AMOUNT = re.compile(r"[^\d.,'’\-−+/%]")


def _group_ok(groups: list[str]) -> bool:
    return bool(groups[0]) and len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:])


def number_readings(token: str) -> set[Decimal]:
    """Every sensible reading of one numeric token: '1.234,56' -> {1234.56}; '1.234' -> {1.234, 1234};
    '0056' -> {56}. Separators are told apart by position, as writers in either convention use them."""
    t = token.strip().replace("−", "-").replace("’", "'").rstrip(".,")
    negative = t.startswith("-")
    t = t.lstrip("+-").replace("'", ",") if "'" in t else t.lstrip("+-")
    if not t or not t[0].isdigit():
        return set()
    out: set[Decimal] = set()
    seps = {c for c in t if c in ".,"}
    try:
        if not seps:
            out.add(Decimal(t))
        elif len(seps) == 2:
            dec = max(".,", key=t.rfind)  # the last separator is the decimal one
            thou = "," if dec == "." else "."
            whole, _, frac = t.rpartition(dec)
            if _group_ok(whole.split(thou)) and frac.isdigit():
                out.add(Decimal(whole.replace(thou, "") + "." + frac))
        else:
            sep = seps.pop()
            parts = t.split(sep)
            if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
                out.add(Decimal(parts[0] + "." + parts[1]))
            if _group_ok(parts) and all(p.isdigit() for p in parts):
                out.add(Decimal("".join(parts)))
    except InvalidOperation:
        return set()
    return {-d if negative else d for d in out}


def parse_number(value: Any) -> Decimal | None:
    """One number from a JSON value or text ('$1,234.56', '1.234,56 €', '(12.00)', 0.5); None if not one.

    An ambiguous '1.234' / '1,234' is read the way a single separator before three digits is most often
    meant in prices: ',' as thousands, '.' as decimals.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | Decimal):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(str(value))
    if not isinstance(value, str):
        return None
    text = value.strip()
    negative = text.startswith("(") and text.endswith(")")
    text = _CLEAN_AMOUNT.sub("", text.strip("()"))
    if not text or "/" in text or "%" in text or not _NUMBER_TOKEN.fullmatch(text):
        return None
    readings = number_readings(text)
    if not readings:
        return None
    if len(readings) > 1:
        sep = "," if "," in text else "."
        readings = {max(readings)} if sep == "," else {min(readings)}
    result = readings.pop()
    return -result if negative else result


def parse_fraction(value: Any) -> Fraction | None:
    """A share as an exact Fraction ('1/3', '33.33%', '33,33 %', 0.5, '0.5', 1); None if not one."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float | Decimal):
        return Fraction(Decimal(str(value)))
    if not isinstance(value, str):
        return None
    text = value.strip().replace(" ", "")
    m = re.fullmatch(r"(\d+)/(\d+)", text)
    if m:
        den = int(m.group(2))
        return Fraction(int(m.group(1)), den) if den else None
    percent = text.endswith("%")
    number = parse_number(text.rstrip("%"))
    if number is None:
        return None
    return Fraction(number) / 100 if percent else Fraction(number)


def numbers_in_text(text: str) -> set[Fraction]:
    """Every number a text may show, as exact Fractions: each reading of each numeric token, a/b
    fractions, and percentages both as written and divided by 100."""
    out: set[Fraction] = set()
    for token in _NUMBER_TOKEN.findall(text):
        token = token.rstrip(".,")
        percent = token.endswith("%")
        token = token.rstrip("%")
        if "/" in token:
            frac = parse_fraction(token)
            if frac is not None:
                out.add(frac)
            continue
        for reading in number_readings(token):
            out.add(Fraction(reading))
            if percent:
                out.add(Fraction(reading) / 100)
    return out


def as_int(value: Any) -> int | None:
    """An integer count from a JSON value ('0056' -> 56, 12.0 -> 12); None when it is not a whole number."""
    number = (
        parse_number(value)
        if not isinstance(value, str)
        else (Decimal(value.strip()) if re.fullmatch(r"\s*-?\d+\s*", value) else None)
    )
    if number is None or number != number.to_integral_value():
        return None
    return int(number)


# --- Spanish digit words (acta) ----------------------------------------------------------------------

DIGIT_WORD_VALUES = {
    w: i
    for i, w in enumerate(["CERO", "UNO", "DOS", "TRES", "CUATRO", "CINCO", "SEIS", "SIETE", "OCHO", "NUEVE"])
}


def fold(text: str) -> str:
    """Upper case without accents, for comparing OCR'd words."""
    nfkd = unicodedata.normalize("NFKD", text)
    return "".join(c for c in nfkd if not unicodedata.combining(c)).upper()


@functools.lru_cache(maxsize=4096)
def digit_word(token: str) -> int | None:
    """The digit a Spanish digit word stands for; tolerates one OCR slip ('CINC0', 'SIETF')."""
    from rapidfuzz import fuzz, process

    word = fold(token).strip(".,;:")
    if word in DIGIT_WORD_VALUES:
        return DIGIT_WORD_VALUES[word]
    if len(word) < 3 or not word.isalnum():
        return None
    best = process.extract(word, list(DIGIT_WORD_VALUES), scorer=fuzz.ratio, limit=2)
    if best and best[0][1] >= 80 and (len(best) < 2 or best[1][1] < best[0][1]):
        return DIGIT_WORD_VALUES[best[0][0]]
    return None


def digit_words(token: str) -> list[int] | None:
    """The digits a token spells: one digit word ('CINC0' too), or up to three run together where the OCR
    lost the space between them ('CUATROOCHO' -> [4, 8]; each part then exactly a digit word)."""
    d = digit_word(token)
    if d is not None:
        return [d]
    word = fold(token).strip(".,;:")
    return _joined_digit_words(word, parts=3) if word.isalpha() else None


def _joined_digit_words(word: str, *, parts: int) -> list[int] | None:
    if word in DIGIT_WORD_VALUES:
        return [DIGIT_WORD_VALUES[word]]
    if parts < 2:
        return None
    for i in range(2, len(word) - 1):
        if word[:i] in DIGIT_WORD_VALUES:
            rest = _joined_digit_words(word[i:], parts=parts - 1)
            if rest is not None:
                return [DIGIT_WORD_VALUES[word[:i]], *rest]
    return None


def parse_digit_words(text: str) -> int | None:
    """'CERO CERO CINCO SEIS' -> 56; None when any token is not a digit word or there is none."""
    tokens = re.split(r"[\s,;/\-]+", text.strip())
    digits = [digit_words(t) for t in tokens if t]
    if not digits or any(d is None for d in digits):
        return None
    return int("".join(str(d) for ds in digits for d in ds))  # type: ignore[union-attr]


def digit_word_runs(text: str) -> list[int]:
    """The numbers spelled by each run of consecutive digit words in a text ('56 CERO CINCO SEIS' -> [56])."""
    runs: list[int] = []
    current: list[int] = []
    for token in re.split(r"[\s,;/]+", text):
        d = digit_words(token) if token and not token[0].isdigit() else None  # "0" is a numeral, not a word
        if d is None:
            if current:
                runs.append(int("".join(map(str, current))))
            current = []
        else:
            current += d
    if current:
        runs.append(int("".join(map(str, current))))
    return runs


# --- dates -------------------------------------------------------------------------------------------

_MONTHS: dict[str, int] = {}
for _number, _names in enumerate(
    [
        "january jan januar janvier janv enero ene januari gennaio gen janeiro styczen stycznia",
        "february feb februar fevrier fevr fev febrero februari febbraio fevereiro luty lutego",
        "march mar marz mars marzo maart maar marco marzec marca",
        "april apr avril avr abril abr aprile kwiecien kwietnia",
        "may mai mayo mei maggio mag maio maj maja",
        "june jun juni juin junio giugno giu junho czerwiec czerwca",
        "july jul juli juillet juil julio luglio lug julho lipiec lipca",
        "august aug aout agosto ago augustus sierpien sierpnia",
        "september sep sept septembre septiembre set settembre setembro wrzesien wrzesnia",
        "october oct oktober octobre octubre okt ottobre ott outubro out pazdziernik pazdziernika",
        "november nov novembre noviembre novembro listopad listopada",
        "december dec dezember decembre dic diciembre dez dicembre dezembro grudzien grudnia",
    ],
    start=1,
):
    for _name in _names.split():
        _MONTHS.setdefault(_name, _number)

_DATE_NUMERIC = re.compile(r"(\d{1,4})[-/.](\d{1,2})[-/.](\d{1,4})")
DATE_EXAMPLES = "2023-03-20, 20/03/2023, 20.03.2023, 03/20/2023, 20 March 2023, March 20, 2023"


def _valid_date(y: int, m: int, d: int) -> date | None:
    if y < 100:
        y += 2000 if y < 70 else 1900
    try:
        return date(y, m, d) if 1900 <= y <= 2100 else None
    except ValueError:
        return None


def parse_dates(text: str) -> set[date]:
    """Every date a short text can be read as (both day/month orders when ambiguous); empty if none.

    Numeric forms (2023-03-20, 20/03/2023, 03.20.23) and month names in English, Spanish, French,
    German, Dutch, Italian, Portuguese and Polish ('20 de marzo de 2023', 'March 20, 2023', '20-Mar-2023').
    """
    folded = fold(text).lower().strip()
    folded = re.sub(r"(\d)(st|nd|rd|th|er|e)\b", r"\1", folded)
    m = _DATE_NUMERIC.fullmatch(folded)
    if m:
        a, b, c = (int(g) for g in m.groups())
        found = set()
        if len(m.group(1)) == 4:
            found.add(_valid_date(a, b, c))
        elif len(m.group(3)) in (2, 4):
            found.add(_valid_date(c, b, a))  # day first
            found.add(_valid_date(c, a, b))  # month first
        return {d for d in found if d}
    words = [w for w in re.split(r"[\s,./\-]+", folded) if w and w not in {"de", "del", "of", "the"}]
    if len(words) != 3:
        return set()
    months = [i for i, w in enumerate(words) if w in _MONTHS]
    nums = [i for i, w in enumerate(words) if w.isdigit()]
    if len(months) != 1 or len(nums) != 2:
        return set()
    month = _MONTHS[words[months[0]]]
    x, y = (int(words[i]) for i in nums)
    if len(words[nums[0]]) == 4:  # 2023 March 20
        found_date = _valid_date(x, month, y)
    else:
        found_date = _valid_date(y, month, x)
    return {found_date} if found_date else set()


def parse_date(text: Any) -> date | None:
    """The date a value states; for an ambiguous 03/04/2023 the day-first reading."""
    if not isinstance(text, str):
        return None
    dates = parse_dates(text)
    if not dates:
        return None
    m = _DATE_NUMERIC.fullmatch(fold(text).strip())
    if m and len(m.group(1)) != 4:
        day_first = _valid_date(int(m.group(3)), int(m.group(2)), int(m.group(1)))
        if day_first:
            return day_first
    return min(dates)


def dates_in_text(text: str) -> set[date]:
    """Dates found in any run of one to four words of a text."""
    words = text.split()
    out: set[date] = set()
    for size in range(1, 5):
        for i in range(len(words) - size + 1):
            out |= parse_dates(" ".join(words[i : i + size]).strip(",;:()"))
    return out


# --- generic rule builders ---------------------------------------------------------------------------


def required_fields_rule(paths: Callable[[dict[str, Any]], Iterable[tuple[str, str]]]) -> Rule:
    """A rule flagging each (path, label) given by `paths(answer)` whose value is null or empty."""

    def required(answer: dict[str, Any], ctx: RuleContext) -> list[Violation]:
        out = []
        for path, label in paths(answer):
            value = get_value(answer, path)
            if value is None or (isinstance(value, str) and not value.strip()):
                out.append(
                    Violation(
                        code="missing_value",
                        message=f"{label} is missing: read it from the document",
                        fields=(path,),
                        expected="a value",
                        found=None,
                    )
                )
        return out

    required.__name__ = "missing_value"
    return required
