"""The modules of extraction/ and their imports, read from the source (for the purity and import-cycle tests)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXTRACTION = ROOT / "extraction"

# The modules that need Django or Celery (models, their reads and writes, tasks, commands). Every other module
# under extraction/ is pure domain code, checked by tests/unit/test_pure_domain.py.
IMPURE_PREFIXES = ("extraction.management", "extraction.migrations", "extraction.services")
IMPURE = {
    "extraction.apps",
    "extraction.models",
    "extraction.reaper",
    "extraction.selectors",
    "extraction.selectors_confidence",
    "extraction.selectors_dashboard",
    "extraction.selectors_doctypes",
    "extraction.sql_batch",
    "extraction.s3",
    "extraction.storage",
    "extraction.tasks",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def extraction_modules() -> dict[str, Path]:
    """Every module under extraction/ by dotted name (a package by its __init__.py)."""
    return {module_name(p): p for p in sorted(EXTRACTION.rglob("*.py"))}


def is_pure(name: str) -> bool:
    return name not in IMPURE and not name.startswith(IMPURE_PREFIXES)


def pure_modules() -> list[str]:
    return [name for name in extraction_modules() if is_pure(name)]


def imported_names(path: Path, name: str) -> set[str]:
    """Every module an import statement of the file names, at the top or inside a function; `from a import b`
    names a.b when that is a module, else a."""
    known = extraction_modules()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(parent + ([node.module] if node.module else []))
            for alias in node.names:
                out.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return out


def import_graph() -> dict[str, set[str]]:
    """extraction module -> the extraction modules it imports."""
    modules = extraction_modules()
    return {name: {m for m in imported_names(path, name) if m in modules and m != name} for name, path in modules.items()}
