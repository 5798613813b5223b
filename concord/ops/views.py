"""/healthz, /readyz and /metrics: anonymous (no login redirect), answered over plain HTTP too (settings:
SECURE_REDIRECT_EXEMPT), never cached."""

from __future__ import annotations

import hmac
import ipaddress

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST

from concord.access import access_policy
from concord.ops import checks
from concord.ops.metrics import exposition


@access_policy("public")
@require_GET
@login_not_required
@never_cache
def healthz(request: HttpRequest) -> HttpResponse:
    """The process is up and answers: no database, no broker. JSON, as every non-HTML answer served inline is
    (anything else Concord serves is an attachment)."""
    return JsonResponse({"status": "ok"})


@access_policy("public")
@require_GET
@login_not_required
@never_cache
def readyz(request: HttpRequest) -> HttpResponse:
    """200 when the database answers, every migration is applied, the broker answers and every queue has a live
    worker; 503 otherwise. The body lists each check."""
    ok, results = checks.readiness()
    response = JsonResponse({"status": "ok" if ok else "fail", "checks": results}, status=200 if ok else 503)
    # Each failing check is logged (a WARNING of concord.ops.checks, with its exception); Django's own ERROR line
    # for a 503 would repeat at every probe of every load balancer.
    response._has_been_logged = True  # type: ignore[attr-defined]
    return response


def _loopback(request: HttpRequest) -> bool:
    try:
        return ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
    except ValueError:
        return False


def metrics_allowed(request: HttpRequest) -> bool:
    """A bearer token equal to CONCORD_METRICS_TOKEN, or (CONCORD_METRICS_LOOPBACK) a client on this machine."""
    token = settings.CONCORD_METRICS_TOKEN
    if token:
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
            return True
    return settings.CONCORD_METRICS_LOOPBACK and _loopback(request)


@access_policy("public")
@require_GET
@login_not_required
@never_cache
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus's text format, for a scraper that holds the token (or is on this machine, when allowed)."""
    if not settings.CONCORD_METRICS_TOKEN and not settings.CONCORD_METRICS_LOOPBACK:
        return HttpResponse("metrics are off (docs/operations.md)\n", status=404, content_type="text/plain")
    if not metrics_allowed(request):
        return HttpResponse(
            "a bearer token is required\n",
            status=401,
            content_type="text/plain",
            headers={"WWW-Authenticate": 'Bearer realm="metrics"'},
        )
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
