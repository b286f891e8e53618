"""The HTTP API under /api/v1/ (django-ninja): tokens, document types, batches, documents and review."""
