"""Calls to any OpenAI-compatible chat endpoint: config (LLM_* settings), reply, errors, answers (structured
JSON asked for and read), client (transport, retries, deadlines)."""
