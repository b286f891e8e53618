"""Evaluation sets: documents with the values people confirmed, read again under a version and settings, and
scored against those values (pure: `expected`, `scoring`; the reads and writes: `selectors`, `services`)."""
