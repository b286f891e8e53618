"""The apps depend one way: `reviewer` (the site, the audit models) uses `extraction`, never the reverse."""

from __future__ import annotations

import ast
from pathlib import Path

EXTRACTION = Path(__file__).resolve().parents[2] / "extraction"


def _reviewer_imports(path: Path) -> list[str]:
    """Each `import reviewer...` / `from reviewer... import` in the module, at any depth, with its line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        else:
            continue
        found += [f"line {node.lineno}: {m}" for m in modules if m.split(".")[0] == "reviewer"]
    return found


def test_no_module_under_extraction_imports_reviewer():
    modules = sorted(EXTRACTION.rglob("*.py"))
    assert len(modules) > 50  # the walk found the package
    offenders = {str(p.relative_to(EXTRACTION.parent)): found for p in modules if (found := _reviewer_imports(p))}
    assert not offenders, f"extraction must not import reviewer: {offenders}"
