"""Shared fixtures: one user per role plus an outsider, clients logged in as each, the LLM environment."""

from __future__ import annotations

import pytest

from tests.support.accounts import make_users

# Fixtures of the scripted LLM server, the real Celery worker, the browser and the URL role matrix's world.
pytest_plugins = ["tests.support.llm_server", "tests.support.worker", "tests.support.browser", "tests.support.url_matrix"]

@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    """Real hashing is slow on purpose; the hasher is not what these tests test."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def users(db):
    return make_users()


@pytest.fixture
def llm_env(llm_server, monkeypatch, settings):
    """The production LLM configuration (environment) pointed at the scripted server."""
    monkeypatch.setenv("LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("LLM_MODEL", "scripted")
    monkeypatch.setenv("LLM_MAX_RETRIES", "1")
    monkeypatch.setenv("LLM_TIMEOUT", "10")
    monkeypatch.setenv("LLM_INPUT", "text")
    settings.MAX_ROUNDS = 3
    return llm_server


@pytest.fixture
def client_as(client, users):
    """client_as("reviewer") returns a test client logged in as that role."""

    def login(role: str):
        if role != "anonymous":
            client.force_login(users[role])
        return client

    return login
