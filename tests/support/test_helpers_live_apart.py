"""Test helpers live in helper modules (tests/support/), never inside a test module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.paths import ROOT

TEST_MODULES = sorted((ROOT / "tests").rglob("test_*.py"))


def _imported_modules(path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
    return names


@pytest.mark.parametrize("path", TEST_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_test_module_imports_another_test_module(path):
    borrowed = {m for m in _imported_modules(path) if m.startswith("tests.") and m.rsplit(".", 1)[-1].startswith("test_")}
    assert not borrowed, f"{path.name} imports helpers from {borrowed}: move them to a helper module"


def test_the_path_to_the_shared_data_is_worked_out_in_one_place():
    elsewhere = [p.relative_to(ROOT) for p in (ROOT / "tests").rglob("*.py")
                 if p.name not in ("paths.py", Path(__file__).name) and '/ "shared"' in p.read_text()]
    assert not elsewhere, f"use tests.support.paths.shared_data instead in {elsewhere}"
