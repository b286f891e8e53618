"""The suite's own limits: a test never waits longer than pytest lets it run."""

from __future__ import annotations

import ast

from tests.support import load
from tests.support.paths import ROOT


def _timeout_marks(path, test_name: str) -> list[str]:
    """The source of each pytest.mark.timeout(...) on a test function (read, not imported: test modules do
    not import one another)."""
    tree = ast.parse(path.read_text())
    (test,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == test_name]
    return [ast.unparse(d.args[0]) for d in test.decorator_list
            if isinstance(d, ast.Call) and ast.unparse(d.func) == "pytest.mark.timeout"]


def test_the_load_test_may_use_all_the_time_it_waits_for_its_documents():
    marks = _timeout_marks(ROOT / "tests" / "reviewer" / "desk" / "test_load.py",
                           "test_many_documents_through_two_workers_all_end_final_while_the_desk_answers")
    assert marks == ["TIMEOUT"]
    assert load.WAIT >= load.COUNT * 1.5 and load.TIMEOUT > load.WAIT + 60
