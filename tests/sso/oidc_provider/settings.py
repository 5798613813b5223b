"""A test OpenID Connect provider: django-oauth-toolkit (OIDC mode) and Django's login page, nothing else.

Everything it needs comes from the environment set by tests/sso/providers.py: its SQLite file, its RSA key, its
issuer URL (http://127.0.0.1:<port>/o, the port being chosen when it binds).
"""

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
SECRET_KEY = "test-oidc-provider-not-a-secret-0123456789abcdefghijklmnop"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "oauth2_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "tests.sso.oidc_provider.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [HERE / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["OIDC_PROVIDER_DB"]}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
LOGIN_URL = "/accounts/login/"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # a test provider: fast logins
OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": os.environ["OIDC_PROVIDER_RSA_KEY"],
    "OIDC_ISS_ENDPOINT": os.environ["OIDC_PROVIDER_ISSUER"],
    "PKCE_REQUIRED": True,
    "SCOPES": {"openid": "OpenID Connect", "email": "e-mail", "profile": "profile"},
    "OAUTH2_VALIDATOR_CLASS": "tests.sso.oidc_provider.validator.Validator",
}
# Cookies are not kept apart by port: on 127.0.0.1 the provider's would replace Concord's (same names) in the browser.
SESSION_COOKIE_NAME = "provider_sessionid"
CSRF_COOKIE_NAME = "provider_csrftoken"
