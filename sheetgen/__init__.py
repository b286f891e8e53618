"""Tally sheets made for tests, benches and scripts (never by the app): fixed layouts, layouts sampled from the
conventions of real paper forms, their scans, and the truth each prints."""
