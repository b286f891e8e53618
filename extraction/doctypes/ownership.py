"""`ownership`: the shipped definition (ownership.yaml beside this file), under the name code imports it by."""

from extraction.doctypes.registry import get_doctype

DOCTYPE = get_doctype("ownership")
