"""Django settings. Everything a deployment changes comes from the environment (see docs/CONFIGURATION.md)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import dj_database_url
from botocore.config import Config
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from extraction.common.env import env_bool, env_choice, env_float, env_int, env_list, env_networks, env_str
from extraction.llm.config import llm_config_from_env

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("PROOFDESK_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

PROOFDESK_ENV = env_choice("PROOFDESK_ENV", "development", ["development", "production"])
PRODUCTION = PROOFDESK_ENV == "production"
# Set by reviewer/wsgi.py and asgi.py: this process serves requests (calls outside are bounded tighter).
SERVES_WEB = env_choice("PROOFDESK_PROCESS", "worker", ["worker", "web"]) == "web"
# Off unless asked for, however the server is started: Django's debug pages list every URL and setting to
# whoever asks for a page that is not there. Turn it on for your own work with DJANGO_DEBUG=1.
DEBUG = env_bool("DJANGO_DEBUG", False)


def _secret_key() -> str:
    key = env_str("SECRET_KEY")
    if key:
        return key
    if PRODUCTION:
        raise ImproperlyConfigured("SECRET_KEY must be set when PROOFDESK_ENV=production")
    # One machine, no configuration: a random key kept beside the database, never in the code.
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", [] if PRODUCTION else ["localhost", "127.0.0.1", "[::1]", "testserver"])
if PRODUCTION and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must be set when PROOFDESK_ENV=production")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "extraction",
    "reviewer",
    "ninja",  # django-ninja: its templates and static files serve the API's docs from here, not a CDN
    "reviewer.api",
    "reviewer.webhooks",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "reviewer.middleware.drop_cookies_with_nul",  # before the session reads its key from the database
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "reviewer.middleware.private_cache_for_users",
    "django_htmx.middleware.HtmxMiddleware",
    "reviewer.middleware.refuse_nul_characters",  # after messages and auth: its 400 page has both
    "reviewer.middleware.StorageUnavailable",  # its 503 page too
]

# Django's model backend, which also reads the user's roles with the user (one query per request, not two)
AUTHENTICATION_BACKENDS = ["reviewer.users.auth_backend.UserWithRolesBackend"]

ROOT_URLCONF = "reviewer.urls"
WSGI_APPLICATION = "reviewer.wsgi.application"
ASGI_APPLICATION = "reviewer.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "reviewer.access.roles_context",
            ],
            "builtins": ["template_partials.templatetags.partials"],
        },
    },
]

# SQLite in the project by default; PostgreSQL in production (DATABASE_URL=postgres://...).
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
        # Connections kept for a minute (checked before reuse): opening one to PostgreSQL costs as much as a
        # whole desk request (docs/BENCHMARKS.md).
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0),
        conn_health_checks=True,
    )
}
if env_str("TEST_DATABASE_NAME"):  # lets concurrent test runs on one server keep apart
    DATABASES["default"]["TEST"] = {"NAME": env_str("TEST_DATABASE_NAME")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web server, the worker and its lease thread share the file: wait for a lock instead of failing at
    # once, and take the write lock when a transaction begins (a read that later writes cannot deadlock).
    # Write-ahead logging lets readers go on while one process writes, and with synchronous=NORMAL a commit
    # does not wait for the disk: a crash of the app loses nothing, a power cut at most the last commits
    # (SQLite's own advice for WAL, https://sqlite.org/wal.html).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        timeout=30, transaction_mode="IMMEDIATE", init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# A cache all processes share: a folder on one machine, Redis (CACHE_URL=redis://...) on many.
CACHE_URL = env_str("CACHE_URL")
if CACHE_URL.startswith(("redis://", "rediss://")):
    # A cache down or hung costs a request at most CACHE_TIMEOUT, then is skipped for CACHE_RETRY_SECONDS.
    CACHES = {"default": {"BACKEND": "reviewer.cache_backend.BoundedRedisCache", "LOCATION": CACHE_URL,
                          "OPTIONS": {"timeout": env_float("CACHE_TIMEOUT", 0.5, minimum=0.05, maximum=30),
                                      "retry_seconds": env_float("CACHE_RETRY_SECONDS", 5.0, minimum=0,
                                                                 maximum=600)}}}
elif CACHE_URL:
    raise ImproperlyConfigured(f"CACHE_URL={CACHE_URL!r} is not a redis:// URL (leave it empty for a local folder)")
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
                          "LOCATION": str(VAR_DIR / "cache")}}

# Logins (reviewer.users.throttle): after LOGIN_MAX_FAILURES for one account (or one known browser), or
# LOGIN_MAX_FAILURES_PER_ADDRESS from one client address, wait LOGIN_LOCKOUT_SECONDS.
LOGIN_MAX_FAILURES = env_int("LOGIN_MAX_FAILURES", 5, minimum=1)
LOGIN_MAX_FAILURES_PER_ADDRESS = env_int("LOGIN_MAX_FAILURES_PER_ADDRESS", 20, minimum=1)
LOGIN_LOCKOUT_SECONDS = env_int("LOGIN_LOCKOUT_SECONDS", 300, minimum=1)
LOGIN_DEVICE_DAYS = env_int("LOGIN_DEVICE_DAYS", 90, minimum=1)  # a browser that logged in is known this long
# The client address comes from CLIENT_ADDRESS_HEADER only when the peer is one of these proxies.
TRUSTED_PROXIES = env_networks("TRUSTED_PROXIES")
CLIENT_ADDRESS_HEADER = env_str("CLIENT_ADDRESS_HEADER", "X-Forwarded-For")

# Sign-in with OpenID Connect (reviewer/users/oidc.py, docs/CONFIGURATION.md), beside the password form: on only
# when OIDC_ISSUER is set, else no OIDC URL exists and nothing below is used. The provider's endpoints come from
# its discovery document, read at the first sign-in (the provider may start after the app), unless given here.
# A person's teams and roles are the OIDC_TEAMS_CLAIM values of the form <team-slug>:<role>, at every sign-in.
OIDC_ISSUER = env_str("OIDC_ISSUER")  # kept as written: the ID token's `iss` must equal it to the character
OIDC_CLIENT_ID = env_str("OIDC_CLIENT_ID")
OIDC_CLIENT_SECRET = env_str("OIDC_CLIENT_SECRET")
OIDC_TEAMS_CLAIM = env_str("OIDC_TEAMS_CLAIM", "groups") or "groups"
OIDC_PROVIDER_NAME = env_str("OIDC_PROVIDER_NAME")  # "Sign in with <name>"; the issuer's host when empty
OIDC_SCOPES = env_str("OIDC_SCOPES", "openid email profile") or "openid email profile"
OIDC_AUTHORIZATION_ENDPOINT = env_str("OIDC_AUTHORIZATION_ENDPOINT")
OIDC_TOKEN_ENDPOINT = env_str("OIDC_TOKEN_ENDPOINT")
OIDC_USERINFO_ENDPOINT = env_str("OIDC_USERINFO_ENDPOINT")
OIDC_JWKS_URI = env_str("OIDC_JWKS_URI")
OIDC_TIMEOUT = env_float("OIDC_TIMEOUT", 5.0, minimum=0.5, maximum=60)  # each call to the provider, in seconds
if OIDC_ISSUER:
    for _name in ("OIDC_ISSUER", "OIDC_AUTHORIZATION_ENDPOINT", "OIDC_TOKEN_ENDPOINT", "OIDC_USERINFO_ENDPOINT",
                  "OIDC_JWKS_URI"):
        _url = globals()[_name]
        if _url and not (_url.startswith("https://") or (_url.startswith("http://") and not PRODUCTION)):
            raise ImproperlyConfigured(f"{_name}={_url!r} is not an https:// URL (http:// only outside production)")
    if not OIDC_CLIENT_ID or not OIDC_CLIENT_SECRET:
        raise ImproperlyConfigured("OIDC_CLIENT_ID and OIDC_CLIENT_SECRET must be set when OIDC_ISSUER is set")
    if "openid" not in OIDC_SCOPES.split():
        raise ImproperlyConfigured(f"OIDC_SCOPES={OIDC_SCOPES!r} must include openid")
    AUTHENTICATION_BACKENDS.append("reviewer.users.oidc.OidcBackend")

# The API (reviewer/api): each token may make API_RATE_LIMIT requests per API_RATE_WINDOW_SECONDS; more get 429.
API_RATE_LIMIT = env_int("API_RATE_LIMIT", 120, minimum=1)
API_RATE_WINDOW_SECONDS = env_int("API_RATE_WINDOW_SECONDS", 60, minimum=1, maximum=86400)

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# Outside production WhiteNoise serves static files straight from static/, so the demo runs without DEBUG
# and without collectstatic; production serves the collected, hashed files.
WHITENOISE_USE_FINDERS = not PRODUCTION

# Uploaded originals, page images and exports. Never served directly: views check the role first.
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
STORAGE_BACKEND = env_choice("STORAGE_BACKEND", "local", ["local", "s3"])
if STORAGE_BACKEND == "s3":
    AWS_STORAGE_BUCKET_NAME = env_str("AWS_STORAGE_BUCKET_NAME")
    if not AWS_STORAGE_BUCKET_NAME:
        raise ImproperlyConfigured("AWS_STORAGE_BUCKET_NAME must be set when STORAGE_BACKEND=s3")
    AWS_S3_ENDPOINT_URL = env_str("AWS_S3_ENDPOINT_URL") or None
    AWS_S3_REGION_NAME = env_str("AWS_REGION") or None
    AWS_DEFAULT_ACL = None
    AWS_QUERYSTRING_AUTH = True
    AWS_S3_FILE_OVERWRITE = False
    # A store that refuses or stops answering fails a call within seconds, not botocore's minutes (60 s a
    # read, 5 attempts): the web answers "storage unavailable" (reviewer.middleware) long before the web
    # server's timeout, and the worker fails the document, retryable. AWS_MAX_ATTEMPTS is botocore's own
    # variable: it counts the first try.
    AWS_S3_CLIENT_CONFIG = Config(
        connect_timeout=env_float("AWS_S3_CONNECT_TIMEOUT", 3.0, minimum=0.1, maximum=60),
        read_timeout=env_float("AWS_S3_READ_TIMEOUT", 5.0, minimum=0.5, maximum=300),
        retries={"mode": "standard", "total_max_attempts": env_int("AWS_MAX_ATTEMPTS", 2, minimum=1, maximum=10)},
    )
    if SERVES_WEB:
        # A request holds a web worker while it waits: one try, bounded by AWS_S3_WEB_TIMEOUT, where a worker
        # can wait longer and try again.
        _web_timeout = env_float("AWS_S3_WEB_TIMEOUT", 2.0, minimum=0.1, maximum=60)
        AWS_S3_CLIENT_CONFIG = Config(connect_timeout=_web_timeout, read_timeout=_web_timeout,
                                      retries={"mode": "standard", "total_max_attempts": 1})
    _media_storage = {"BACKEND": "extraction.pipeline.s3.GuardedS3Storage"}
else:
    _media_storage = {"BACKEND": "django.core.files.storage.FileSystemStorage"}
# After a call could not reach the store, calls in that process fail at once for this long (extraction/pipeline/s3.py).
STORAGE_BREAKER_SECONDS = env_float("STORAGE_BREAKER_SECONDS", 10.0, minimum=0, maximum=600)
STORAGES = {
    "default": _media_storage,
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# Celery: an embedded broker (kombu's filesystem transport) unless CELERY_BROKER_URL names a server.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or "filesystem://"
if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dir = VAR_DIR / "broker"
    for sub in ("queue", "processed", "control"):
        (_broker_dir / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),  # kombu's default is ./control, in the working directory
        "store_processed": False,
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600),
        # A broker that accepts connections and never answers (stopped, stalled, a half-open connection) fails
        # a send as soon as one that refuses does: the upload answers and the reaper sends later. Without
        # these, redis-py waits forever and the web server's own timeout kills the request.
        "socket_connect_timeout": env_float("CELERY_BROKER_CONNECT_TIMEOUT", 2.0, minimum=0.1, maximum=60),
        "socket_timeout": env_float("CELERY_BROKER_SOCKET_TIMEOUT", 3.0, minimum=0.5, maximum=300),
    }
    CELERY_BROKER_CONNECTION_TIMEOUT = CELERY_BROKER_TRANSPORT_OPTIONS["socket_connect_timeout"]  # AMQP's
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE", "celery")
CELERY_TASK_IGNORE_RESULT = True  # tasks write their outcome to the database
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A worker runs at this niceness (0-19; reviewer/celery.py), below the web process, so a batch's OCR and
# rendering yield the CPU to a reviewer's request on a shared machine (docs/BENCHMARKS.md, Load).
WORKER_NICENESS = env_int("WORKER_NICENESS", 10, minimum=0, maximum=19)
CELERY_TASK_ACKS_ON_FAILURE_OR_TIMEOUT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# The reaper (extraction.pipeline.reaper, a thread in every worker): takes back documents whose worker's lease ran
# out, sends again messages the broker never got or lost; often enough that a document waits at most about
# a minute after the broker comes back.
REAPER_INTERVAL_SECONDS = env_int("REAPER_INTERVAL_SECONDS", 20, minimum=1)
# A worker renews its lease on a document every quarter of this; a lease older than this is taken back.
PROCESSING_LEASE_SECONDS = env_int("PROCESSING_LEASE_SECONDS", 120, minimum=2)
# A queued document sent this long ago, with nothing waiting in the broker's queue, lost its message.
DISPATCH_LOST_AFTER_SECONDS = env_int("DISPATCH_LOST_AFTER_SECONDS", 30, minimum=1)

# Pipeline
OCR_ENGINE = env_choice("OCR_ENGINE", "auto", ["auto", "pdf-text", "rapidocr", "tesseract", "textract"])
# An engine that reads every page again, for the confidence signal that two engines read a value alike (off
# by default: it costs a second OCR of every page).
OCR_SECOND_ENGINE = env_choice("OCR_SECOND_ENGINE", "", ["", "rapidocr", "tesseract", "textract"])
AWS_REGION = env_str("AWS_REGION", "us-east-1")
TEXTRACT_BUCKET = env_str("TEXTRACT_BUCKET")
RENDER_DPI = env_int("RENDER_DPI", 150, minimum=50, maximum=600)
# RapidOCR speed settings (defaults chosen on bench/ocr_engines.py, figures in docs/BENCHMARKS.md): what runs its
# networks (OpenVINO; onnxruntime reads the same networks slower), whether it may read Chinese, Japanese and
# Korean characters (slower, off unless needed), threads per page (0: every core), the longest side the
# text detector sees, lines per recogniser run, the narrowest width a batch of lines is padded to, threads
# recognising one page's lines, pages of one document read at once.
OCR_RUNTIME = env_choice("OCR_RUNTIME", "openvino", ["openvino", "onnxruntime"])
OCR_EAST_ASIAN = env_bool("OCR_EAST_ASIAN", False)
OCR_THREADS = env_int("OCR_THREADS", 0, minimum=0, maximum=64)
OCR_DET_LIMIT = env_int("OCR_DET_LIMIT", 0, minimum=0, maximum=8192)  # 0: no limit, RapidOCR's own rule
# A page is shrunk only while its short side exceeds this (px) and its long side 2000 px: 1414 reads an A4 page as
# RapidOCR's own rule did (long side at 2000) and a long thermal strip at full size; 0: RapidOCR's own rule.
OCR_PAGE_LIMIT = env_int("OCR_PAGE_LIMIT", 1414, minimum=0, maximum=20000)
OCR_REC_BATCH = env_int("OCR_REC_BATCH", 6, minimum=1, maximum=128)
OCR_REC_WIDTH = env_int("OCR_REC_WIDTH", 96, minimum=16, maximum=2048)
OCR_REC_WORKERS = env_int("OCR_REC_WORKERS", 1, minimum=1, maximum=64)
OCR_PAGE_WORKERS = env_int("OCR_PAGE_WORKERS", 1, minimum=1, maximum=64)
RENDERER = env_choice("RENDERER", "pymupdf", ["pymupdf", "pdf2image"])
# The LLM_* variables have one reader, extraction/llm/config.py. Start-up checks them with it; the pipeline
# reads them with it for each document, so a re-run or a test's environment takes effect without a restart.
llm_config_from_env(os.environ)
MAX_ROUNDS = env_int("MAX_ROUNDS", 3, minimum=1, maximum=10)

# Upload limits (bad input ends as a clear error on that document)
UPLOAD_MAX_FILE_MB = env_int("UPLOAD_MAX_FILE_MB", 50, minimum=1)
UPLOAD_MAX_PAGES = env_int("UPLOAD_MAX_PAGES", 200, minimum=1)
UPLOAD_MAX_PIXELS = env_int("UPLOAD_MAX_PIXELS", 60_000_000, minimum=1_000_000)
UPLOAD_MAX_ZIP_FILES = env_int("UPLOAD_MAX_ZIP_FILES", 500, minimum=1)
# A draft type's trial reads a sample, on a worker: its pages are bounded so that a long scan is refused at once
TRIAL_MAX_PAGES = env_int("TRIAL_MAX_PAGES", 20, minimum=1)
DATA_UPLOAD_MAX_NUMBER_FILES = UPLOAD_MAX_ZIP_FILES
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# The headers of one uploaded file (its name among them) may take this many bytes; Django's own limit, 1 KB,
# is less than a name some file systems allow (255 characters of up to 4 bytes). Applied by reviewer.apps.
UPLOAD_MAX_PART_HEADER_BYTES = 16 * 1024

# Review desk
CLAIM_TTL_MINUTES = env_int("CLAIM_TTL_MINUTES", 30, minimum=1)
# The currency of LLM_PRICE_INPUT / LLM_PRICE_OUTPUT, shown with every cost.
LLM_PRICE_CURRENCY = env_str("LLM_PRICE_CURRENCY", "USD") or "USD"
DESK_POLL_SECONDS = env_int("DESK_POLL_SECONDS", 10, minimum=1, maximum=300)  # presence and stale-page checks
# Fields whose confidence is under this are marked on the desk and listed least sure first.
DESK_LOW_CONFIDENCE = env_float("DESK_LOW_CONFIDENCE", 0.8, minimum=0.0, maximum=1.0)

# Webhooks (reviewer/webhooks): endpoints on private, loopback or link-local addresses are refused unless allowed
# (a receiver on the same network; the tests). An attempt gets WEBHOOK_TIMEOUT_SECONDS in all; the retry schedule
# (a day) is multiplied by WEBHOOK_BACKOFF_SCALE (tests shrink it); a worker sends what is due every
# WEBHOOK_SWEEP_SECONDS. Links in payloads start with WEBHOOK_SITE_URL (https://proofdesk.example.org; empty: paths).
WEBHOOK_ALLOW_PRIVATE_URLS = env_bool("WEBHOOK_ALLOW_PRIVATE_URLS", False)
WEBHOOK_TIMEOUT_SECONDS = env_float("WEBHOOK_TIMEOUT_SECONDS", 5.0, minimum=0.5, maximum=60)
WEBHOOK_BACKOFF_SCALE = env_float("WEBHOOK_BACKOFF_SCALE", 1.0, minimum=0.0001, maximum=10)
WEBHOOK_SWEEP_SECONDS = env_float("WEBHOOK_SWEEP_SECONDS", 5.0, minimum=0.2, maximum=300)
WEBHOOK_SITE_URL = env_str("WEBHOOK_SITE_URL")
# Deliveries have their own queue, so a slow receiver never waits in front of a document: a worker started
# without -Q takes both queues (the tests); `make demo` and a deployment run `-Q <the default queue>` for documents
# and `-Q WEBHOOK_QUEUE` for deliveries (compose.yaml).
WEBHOOK_QUEUE = env_str("WEBHOOK_QUEUE", f"{CELERY_TASK_DEFAULT_QUEUE}-webhooks")
if WEBHOOK_QUEUE == CELERY_TASK_DEFAULT_QUEUE:
    raise ImproperlyConfigured("WEBHOOK_QUEUE must differ from CELERY_TASK_DEFAULT_QUEUE.")
CELERY_TASK_QUEUES = (Queue(CELERY_TASK_DEFAULT_QUEUE, routing_key=CELERY_TASK_DEFAULT_QUEUE),
                      Queue(WEBHOOK_QUEUE, routing_key=WEBHOOK_QUEUE))

# Content-Security-Policy on every response (django-csp): scripts, styles, images and requests from this
# origin only; no inline script or style, no eval (htmx is configured without it in base.html), no
# plugins, no framing, forms post here only.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'none'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
        "base-uri": ["'none'"],
        "object-src": ["'none'"],
    },
}

# Security: strict by default in production (`manage.py check --deploy` is clean).
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the page, not the cookie
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if PRODUCTION:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"client_errors_one_line": {"()": "reviewer.log_filters.ClientErrorsOneLine"}},
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django.request": {"filters": ["client_errors_one_line"]}},
    "root": {"handlers": ["console"], "level": env_choice("LOG_LEVEL", "INFO", ["DEBUG", "INFO", "WARNING", "ERROR"])},
}
