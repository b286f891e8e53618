"""Where the tests find things: the project root, and ../shared's sample data (skipped where absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
MISSING = "the sample data lives in ../shared beside the project (CI has it)"


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, or skip the calling test when it is not there."""
    path = SHARED.joinpath("data", *parts)
    if not path.exists():
        pytest.skip(f"{path} is not here: {MISSING}")
    return path


def shared_data_if_present(*parts: str) -> Path | None:
    """A path under ../shared/data, or None: for module-level case lists, which must not skip."""
    path = SHARED.joinpath("data", *parts)
    return path if path.exists() else None


def needs_shared_data(*parts: str) -> pytest.MarkDecorator:
    """Skip a whole test or module where ../shared/data/<parts> is not there."""
    path = SHARED.joinpath("data", *parts)
    return pytest.mark.skipif(not path.exists(), reason=f"{path} is not here: {MISSING}")
