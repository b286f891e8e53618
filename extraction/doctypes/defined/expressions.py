"""Arithmetic over a document's fields, as a defined type's rules write it (pure): 'subtotal + tax',
'items.quantity * items.unit_price', 'sum(items.amount)'; and conditions, two of them compared:
'amount_due >= 0', 'paid <= total'.

A definition is data, never code: an expression is parsed by the small grammar below, never by `eval`, and
is bounded in length and depth. Numbers are exact (Decimal) so a sum of money closes to the cent.

    condition  := expression ('<' | '<=' | '>' | '>=' | '=' | '!=' | '≤' | '≥' | '≠') expression
    expression := term (('+' | '-') term)*
    term       := factor (('*' | '×' | '/' | '÷') factor)*
    factor     := NUMBER | NAME | 'sum' '(' NAME ')' | '(' expression ')' | '-' factor
    NAME       := key ('.' key)?          key := [a-z][a-z0-9_]*

A NAME is a single field ('total') or a column of a table ('items.amount'): in a rule over a table's rows
it is that row's value, inside sum() the column over every row.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

__all__ = ["COMPARISONS", "Condition", "Expr", "ExpressionError", "MAX_LENGTH", "parse_condition", "parse_expression"]

MAX_LENGTH = 300  # characters: a rule's arithmetic, not a program
_MAX_NODES = 60
_MAX_DEPTH = 12

_TOKEN = re.compile(r"\s*(?:(?P<number>\d+(?:\.\d+)?)|(?P<name>[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)?)"
                    r"|(?P<op>[-+*/()×÷])|(?P<comparison><=|>=|!=|[<>=≤≥≠]))")
_OPS: dict[str, Callable[[Decimal, Decimal], Decimal]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
}
_SPELLED = {"×": "*", "÷": "/", "≤": "<=", "≥": ">=", "≠": "!="}
# a comparison and the words a sentence says it in ("must be at least 0")
COMPARISONS: dict[str, tuple[Callable[[Decimal, Decimal], bool], str]] = {
    "<": (lambda a, b: a < b, "less than"), "<=": (lambda a, b: a <= b, "at most"),
    ">": (lambda a, b: a > b, "more than"), ">=": (lambda a, b: a >= b, "at least"),
    "=": (lambda a, b: a == b, "equal to"), "!=": (lambda a, b: a != b, "other than"),
}


class ExpressionError(ValueError):
    """An expression that does not parse; the message says where."""


@dataclass(frozen=True)
class Expr:
    """A parsed expression: a number, a name, sum(name), a negation or a binary operation."""

    kind: str  # "number" | "name" | "sum" | "neg" | one of + - * /
    value: Decimal | str | None = None  # the number, or the name
    left: Expr | None = None
    right: Expr | None = None

    def names(self) -> set[str]:
        """Every field or column the expression reads."""
        if self.kind in ("name", "sum"):
            return {str(self.value)}
        return (self.left.names() if self.left else set()) | (self.right.names() if self.right else set())

    def ordered_names(self) -> list[str]:
        """The names it reads, each once, in the order they are written."""
        if self.kind in ("name", "sum"):
            return [str(self.value)]
        both = (self.left.ordered_names() if self.left else []) + (self.right.ordered_names() if self.right else [])
        return list(dict.fromkeys(both))

    def sums(self) -> set[str]:
        """The columns read whole, inside sum()."""
        if self.kind == "sum":
            return {str(self.value)}
        return (self.left.sums() if self.left else set()) | (self.right.sums() if self.right else set())

    def evaluate(self, values: Mapping[str, Decimal | None], columns: Mapping[str, list[Decimal | None]]) -> Decimal | None:
        """The value, with `values` for names and `columns` for sum(); None when a value it needs is missing
        (a rule then has nothing to say) or a division by zero."""
        if self.kind == "number":
            return self.value  # type: ignore[return-value]
        if self.kind == "name":
            return values.get(str(self.value))
        if self.kind == "sum":
            column = columns.get(str(self.value))
            if column is None or any(v is None for v in column):
                return None
            return sum(column, Decimal(0))  # type: ignore[arg-type]
        left = self.left.evaluate(values, columns) if self.left else None
        if self.kind == "neg":
            return None if left is None else -left
        right = self.right.evaluate(values, columns) if self.right else None
        if left is None or right is None or (self.kind == "/" and right == 0):
            return None
        try:
            return _OPS[self.kind](left, right)
        except (InvalidOperation, ArithmeticError):
            return None

    def zero_divisor(self, values: Mapping[str, Decimal | None], columns: Mapping[str, list[Decimal | None]]
                     ) -> Expr | None:
        """The divisor that is 0 on these values, when that (and not a missing value) is why `evaluate` has no
        value: a problem of the definition, which did not say what the rule means then."""
        if self.kind in ("number", "name", "sum"):
            return None
        for side in (self.left, self.right):
            found = side.zero_divisor(values, columns) if side is not None else None
            if found is not None:
                return found
        if (self.kind == "/" and self.right is not None and self.left is not None
                and self.left.evaluate(values, columns) is not None and self.right.evaluate(values, columns) == 0):
            return self.right
        return None

    def __str__(self) -> str:
        if self.kind == "number":
            return format(self.value, "f")
        if self.kind == "name":
            return str(self.value)
        if self.kind == "sum":
            return f"sum({self.value})"
        if self.kind == "neg":
            return f"-{_wrapped(self.left)}"
        return f"{_wrapped(self.left)} {self.kind} {_wrapped(self.right)}"


def _wrapped(e: Expr | None) -> str:
    return f"({e})" if e is not None and e.kind in _OPS else str(e)


@dataclass(frozen=True)
class Condition:
    """Two expressions compared ('amount_due >= 0'): it holds, fails, or (a value missing) says nothing."""

    left: Expr
    op: str  # a key of COMPARISONS
    right: Expr

    @property
    def words(self) -> str:
        return COMPARISONS[self.op][1]

    def names(self) -> set[str]:
        return self.left.names() | self.right.names()

    def ordered_names(self) -> list[str]:
        return list(dict.fromkeys(self.left.ordered_names() + self.right.ordered_names()))

    def sums(self) -> set[str]:
        return self.left.sums() | self.right.sums()

    def holds(self, left: Decimal, right: Decimal) -> bool:
        return COMPARISONS[self.op][0](left, right)

    def zero_divisor(self, values: Mapping[str, Decimal | None], columns: Mapping[str, list[Decimal | None]]
                     ) -> Expr | None:
        return self.left.zero_divisor(values, columns) or self.right.zero_divisor(values, columns)

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


def parse_expression(text: str) -> Expr:
    """The expression `text` reads as; ExpressionError says what is wrong and where."""
    _bounded(text, "expression")
    return _Parser(text).parse()


def parse_condition(text: str) -> Condition:
    """The condition `text` reads as: two expressions and one comparison between them."""
    _bounded(text, "condition")
    return _Parser(text).parse_condition()


def _bounded(text: str, what: str) -> None:
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError(f"the {what} is empty")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"the {what} is longer than {MAX_LENGTH} characters")


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                if not text[pos:].strip():
                    break
                at = pos + len(text[pos:]) - len(text[pos:].lstrip())
                raise ExpressionError(f"unexpected {text[at]!r} at character {at + 1}")
            kind = m.lastgroup or ""
            token = m.group(kind)
            self.tokens.append((kind, _SPELLED.get(token, token), m.start(kind)))
            pos = m.end()
        self.i = 0
        self.nodes = 0

    def parse(self) -> Expr:
        e = self._expression(0)
        if self.i < len(self.tokens):
            kind, token, at = self.tokens[self.i]
            if kind == "comparison":
                raise ExpressionError(f"a comparison ({token}) at character {at + 1}: an expression computes a "
                                      "value; a condition rule compares two")
            raise ExpressionError(f"unexpected {token!r} at character {at + 1}")
        return e

    def parse_condition(self) -> Condition:
        left = self._expression(0)
        t = self._peek()
        if t is None or t[0] != "comparison":
            where = f"at character {t[2] + 1}" if t else "at the end"
            raise ExpressionError(f"a comparison (<, <=, >, >=, = or !=) expected {where}, as in amount_due >= 0")
        self.i += 1
        right = self._expression(0)
        if self.i < len(self.tokens):
            _, token, at = self.tokens[self.i]
            raise ExpressionError(f"unexpected {token!r} at character {at + 1}: a condition compares two "
                                  "expressions once")
        return Condition(left=left, op=t[1], right=right)

    def _peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _node(self, e: Expr, depth: int) -> Expr:
        self.nodes += 1
        if self.nodes > _MAX_NODES or depth > _MAX_DEPTH:
            raise ExpressionError("the expression is too large")
        return e

    def _expression(self, depth: int) -> Expr:
        left = self._term(depth + 1)
        while (t := self._peek()) is not None and t[1] in "+-":
            self.i += 1
            left = self._node(Expr(t[1], left=left, right=self._term(depth + 1)), depth)
        return left

    def _term(self, depth: int) -> Expr:
        left = self._factor(depth + 1)
        while (t := self._peek()) is not None and t[1] in "*/":
            self.i += 1
            left = self._node(Expr(t[1], left=left, right=self._factor(depth + 1)), depth)
        return left

    def _factor(self, depth: int) -> Expr:
        t = self._peek()
        if t is None:
            raise ExpressionError("the expression ends where a number or a field was expected")
        kind, text, at = t
        self.i += 1
        if kind == "number":
            return self._node(Expr("number", Decimal(text)), depth)
        if text == "-":
            return self._node(Expr("neg", left=self._factor(depth + 1)), depth)
        if text == "(":
            inner = self._expression(depth + 1)
            self._expect(")")
            return inner
        if kind == "name" and text == "sum" and (n := self._peek()) is not None and n[1] == "(":
            self.i += 1
            name = self._peek()
            if name is None or name[0] != "name":
                raise ExpressionError(f"sum() takes a table's column, such as sum(items.amount), at character {at + 1}")
            self.i += 1
            self._expect(")")
            return self._node(Expr("sum", name[1]), depth)
        if kind == "name":
            return self._node(Expr("name", text), depth)
        raise ExpressionError(f"unexpected {text!r} at character {at + 1}")

    def _expect(self, token: str) -> None:
        t = self._peek()
        if t is None or t[1] != token:
            where = f"at character {t[2] + 1}" if t else "at the end"
            raise ExpressionError(f"{token!r} expected {where}")
        self.i += 1
