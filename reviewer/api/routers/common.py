"""What every router shares: the error responses it documents."""

from __future__ import annotations

from reviewer.api.schemas import Problem

# The problems any operation may answer with (besides its own).
PROBLEMS = {400: Problem, 401: Problem, 403: Problem, 404: Problem, 422: Problem, 429: Problem}
