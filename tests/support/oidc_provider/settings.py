"""The test provider's Django settings: everything it keeps lives in IDP_DATA_DIR (a test's temporary folder)."""

from __future__ import annotations

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA_DIR = Path(os.environ["IDP_DATA_DIR"])

SECRET_KEY = os.environ.get("IDP_SECRET_KEY", "test-provider-only")
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oidc_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
ROOT_URLCONF = "tests.support.oidc_provider.urls"
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [HERE / "templates"],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
}]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(DATA_DIR / "provider.sqlite3"),
                         "OPTIONS": {"timeout": 20}}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # a test provider: speed, not strength
LOGIN_URL = "/accounts/login/"
# The app under test may run on the same host name: the provider's cookies must never be the app's.
SESSION_COOKIE_NAME = "idp_sessionid"
CSRF_COOKIE_NAME = "idp_csrftoken"
LOGGING = {"version": 1, "disable_existing_loggers": False,
           "handlers": {"console": {"class": "logging.StreamHandler"}},
           "root": {"handlers": ["console"], "level": "INFO"}}

# django-oidc-provider: the standard claims from the provider's user, the groups in the ID token (as Azure AD or
# Keycloak's group mapper put them there), the issuer of another provider when told to stand in for it.
SITE_URL = os.environ.get("IDP_SITE_URL") or None
OIDC_USERINFO = "tests.support.oidc_provider.claims.userinfo"
OIDC_IDTOKEN_INCLUDE_CLAIMS = True
OIDC_IDTOKEN_PROCESSING_HOOK = "tests.support.oidc_provider.claims.id_token_hook"
