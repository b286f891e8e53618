"""The pure domain code imports neither Django nor Celery, so it runs and tests without either."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

EXTRACTION = Path(__file__).resolve().parents[2] / "extraction"
PURE = sorted(
    [EXTRACTION / f"{name}.py" for name in (
        "loop", "rules", "proofs", "feedback", "prompt", "prompt_doc", "llm", "intake", "render", "states",
        "stats", "charts", "annotate", "currency", "reading", "confidence", "confidence_signals",
        "calibration")]
    + list((EXTRACTION / "ocr").glob("*.py")) + list((EXTRACTION / "doctypes").glob("*.py"))
    + list((EXTRACTION / "acta").glob("*.py"))
)


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", PURE, ids=lambda p: str(p.relative_to(EXTRACTION)))
def test_pure_domain_modules_import_neither_django_nor_celery(path):
    assert path.exists()
    assert not _imports(path) & {"django", "celery", "kombu"}, path
