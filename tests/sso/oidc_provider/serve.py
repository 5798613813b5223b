"""Runs the test OpenID Connect provider: binds 127.0.0.1 on a free port, migrates its database, registers the
test user and one client per behaviour (validator.py), then prints ``LISTENING <port>`` and serves.

Environment: OIDC_PROVIDER_DB (a SQLite path), OIDC_PROVIDER_RSA_KEY (PEM), OIDC_PROVIDER_CLIENT_SECRET,
OIDC_PROVIDER_MODES (comma-separated client names), OIDC_PROVIDER_USER / _PASSWORD / _EMAIL.
"""

import os
import sys
from pathlib import Path
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))


class Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):
        sys.stderr.write("oidc-provider: " + (format % args) + "\n")


def main() -> None:
    httpd = make_server("127.0.0.1", 0, lambda environ, start: [], server_class=Server, handler_class=QuietHandler)
    port = httpd.server_port
    os.environ["OIDC_PROVIDER_ISSUER"] = f"http://127.0.0.1:{port}/o"
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.sso.oidc_provider.settings"
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application
    from oauth2_provider.models import Application

    call_command("migrate", verbosity=0, interactive=False)
    get_user_model().objects.create_user(
        os.environ["OIDC_PROVIDER_USER"],
        email=os.environ["OIDC_PROVIDER_EMAIL"],
        password=os.environ["OIDC_PROVIDER_PASSWORD"],
        first_name="Ada",
        last_name="Oidc",
    )
    for mode in os.environ["OIDC_PROVIDER_MODES"].split(","):
        Application.objects.create(
            name=mode,
            client_id=f"concord-{mode}",
            client_secret=os.environ["OIDC_PROVIDER_CLIENT_SECRET"],
            client_type=Application.CLIENT_CONFIDENTIAL,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            # The loopback address matches any port (RFC 8252, which DOT follows); testserver is Django's test client.
            redirect_uris=f"http://127.0.0.1/sso/oidc/{mode}/callback/ http://testserver/sso/oidc/{mode}/callback/",
            algorithm=Application.RS256_ALGORITHM,
            skip_authorization=True,
        )
    httpd.set_app(get_wsgi_application())
    print(f"LISTENING {port}", flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main()
