"""Shared fixtures: one user per role plus an outsider, and paths to ../shared."""

from __future__ import annotations

from pathlib import Path

import pytest

# Fixtures of the scripted LLM server, the real Celery worker and the browser.
pytest_plugins = ["tests.llm_server", "tests.worker", "tests.browser"]

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
PASSWORD = "correct-horse-battery-9"


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, or skip the test when ../shared is not beside the project."""
    path = SHARED.joinpath("data", *parts)
    if not path.exists():
        pytest.skip(f"{path} is not here: the sample data lives in ../shared beside the project (CI has it)")
    return path


@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    """Real hashing costs about a second per test user; the hasher is not what these tests test."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def users(db):
    from django.contrib.auth.models import Group, User

    made = {}
    for role in ("admin", "reviewer", "supervisor", "outsider"):
        user = User.objects.create_user(username=role, password=PASSWORD)
        if role != "outsider":
            user.groups.add(Group.objects.get_or_create(name=role)[0])  # flushed by transactional tests
        made[role] = user
    return made


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
