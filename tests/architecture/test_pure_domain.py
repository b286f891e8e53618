"""The pure domain code imports neither Django nor Celery, so it runs and tests without either.

Every module of the pure packages (tests/support/domain_modules.py: their folders, not a list of modules) is imported
in a fresh interpreter where django, celery and kombu cannot be imported: a pure module that reaches them
through a helper fails here, and a new module is checked by its place alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.domain_modules import EXTRACTION, PURE_PACKAGES, ROOT, extraction_modules, imported_names, pure_modules

FORBIDDEN = ("django", "celery", "kombu")

_IMPORT_ALL = r"""
import importlib, importlib.abc, json, sys

class Forbidden(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in FORBIDDEN:
            raise ImportError(f"{name} may not be imported by pure domain code")
        return None

FORBIDDEN = tuple(json.loads(sys.argv[2]))
sys.meta_path.insert(0, Forbidden())
failures = {}
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except Exception as err:
        failures[name] = f"{type(err).__name__}: {err}"
print(json.dumps(failures))
"""


@pytest.fixture(scope="module")
def import_failures() -> dict[str, str]:
    """One fresh interpreter imports every pure module; the failure of each, by module."""
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALL, json.dumps(pure_modules()), json.dumps(FORBIDDEN)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", pure_modules())
def test_a_pure_module_imports_without_django_celery_or_kombu(name, import_failures):
    assert name not in import_failures, f"{name}: {import_failures.get(name)}"


@pytest.mark.parametrize("name", pure_modules())
def test_a_pure_module_names_neither_django_nor_celery_even_inside_a_function(name):
    path = extraction_modules()[name]
    named = {m.partition(".")[0] for m in imported_names(path, name)}
    assert not named & set(FORBIDDEN), f"{name} imports {sorted(named & set(FORBIDDEN))}"


def test_the_pure_packages_are_folders_that_hold_the_domain():
    missing = sorted(p for p in PURE_PACKAGES if not (EXTRACTION / p / "__init__.py").exists())
    assert not missing, f"no such packages: {missing}"
    assert (EXTRACTION / "reading" / "loop.py").exists() and "extraction.reading.loop" in pure_modules()
    assert "extraction.pipeline.process" not in pure_modules() and "extraction.doctypes.selectors" not in pure_modules()
