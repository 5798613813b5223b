"""The researcher console's "agreement so far" of one pool: an htmx fragment (the progress page
loads it per pool) and, without htmx, the same fragment on a page of its own.

Authorized with ``study_get_for_researcher`` like the reports: annotators 403, strangers and
unknown pools 404.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET

from adjudication.pool_agreement import pool_agreement_so_far
from adjudication.selectors import study_get_for_researcher
from concord.access import access_policy
from concord.errors import DomainError


@access_policy("researcher")
@require_GET
def pool_agreement_fragment(request: HttpRequest, slug: str, pool_id: int) -> HttpResponse:
    try:
        study = study_get_for_researcher(user=request.user, slug=slug)
        agreement = pool_agreement_so_far(study=study, pool_id=pool_id)
    except DomainError as exc:
        template = "adjudication/_error.html" if request.htmx else "adjudication/report_error.html"
        response = render(request, template, {"error": exc}, status=exc.status_code)
    else:
        template = "adjudication/_pool_agreement.html" if request.htmx else "adjudication/pool_agreement.html"
        response = render(request, template, {"study": study, "agreement": agreement})
    patch_vary_headers(response, ("HX-Request",))
    return response
