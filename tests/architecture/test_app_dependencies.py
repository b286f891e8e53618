"""The apps depend one way: `reviewer` (the site, the audit models) uses `extraction`, never the reverse."""

from __future__ import annotations

from tests.support.domain_modules import extraction_modules, imported_names


def test_no_module_under_extraction_imports_reviewer():
    modules = extraction_modules()
    assert len(modules) > 50  # the walk found the package
    offenders = {name: sorted(m for m in imported_names(path, name) if m.split(".")[0] == "reviewer")
                 for name, path in modules.items()}
    offenders = {name: found for name, found in offenders.items() if found}
    assert not offenders, f"extraction must not import reviewer: {offenders}"
