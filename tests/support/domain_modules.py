"""The modules of extraction/ and their imports, read from the source (for the purity and import-cycle tests)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXTRACTION = ROOT / "extraction"

# Pure by place: every module of these packages of extraction/ is pure domain code, but for the reads and
# writes a package keeps beside it in `selectors.py` and `services.py`. Everything else (the pipeline, the
# models and the modules at extraction/'s top, commands, migrations) may use Django and Celery.
PURE_PACKAGES = ("common", "values", "ocr", "rules", "proofs", "doctypes", "llm", "reading", "confidence",
                 "evaluation")
ORM_MODULES = ("selectors", "services")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def extraction_modules() -> dict[str, Path]:
    """Every module under extraction/ by dotted name (a package by its __init__.py)."""
    return {module_name(p): p for p in sorted(EXTRACTION.rglob("*.py"))}


def app_modules() -> dict[str, Path]:
    """Every module of both apps but their migrations, by dotted name."""
    return {module_name(p): p for app in ("extraction", "reviewer") for p in sorted((ROOT / app).rglob("*.py"))
            if "migrations" not in p.parts}


def package_of(name: str, path: Path) -> str:
    """The package a module belongs to: a folder of an app (`extraction.proofs`, `reviewer.desk`, with any
    folder inside it), or a module at an app's top (`extraction.models`) on its own."""
    folders = path.relative_to(ROOT).parent.parts
    return name if len(folders) == 1 else ".".join(folders[:2])


def is_pure(name: str) -> bool:
    parts = name.split(".")
    return len(parts) >= 2 and parts[1] in PURE_PACKAGES and parts[-1] not in ORM_MODULES


def pure_modules() -> list[str]:
    return [name for name in extraction_modules() if is_pure(name)]


def imported_names(path: Path, name: str) -> set[str]:
    """Every module an import statement of the file names, at the top or inside a function; `from a import b`
    names a.b when that is a module, else a."""
    known = app_modules()
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


def package_graph() -> dict[str, set[str]]:
    """package -> the other packages its modules import (inside functions too)."""
    modules = app_modules()
    graph: dict[str, set[str]] = {package_of(n, p): set() for n, p in modules.items()}
    for name, path in modules.items():
        for target in imported_names(path, name):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and package_of(target, modules[target]) != package_of(name, path):
                graph[package_of(name, path)].add(package_of(target, modules[target]))
    return graph
