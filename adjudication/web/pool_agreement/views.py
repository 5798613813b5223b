"""The researcher console's "agreement so far" of one pool: an htmx fragment (the progress page
loads it per pool) and, without htmx, the same fragment on a page of its own.

Authorized with ``get_study_for_researcher`` like the reports: annotators 403, strangers and
unknown pools 404.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from adjudication.analysis.pool_agreement import pool_agreement_so_far
from adjudication.web.common import report_errors
from annotation.access import get_study_for_researcher
from concord.access import access_policy
from concord.http import htmx_render


@access_policy("researcher")
@require_GET
@report_errors
def pool_agreement_fragment(request: HttpRequest, slug: str, pool_id: int) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    agreement = pool_agreement_so_far(study=study, pool_id=pool_id)
    return htmx_render(
        request,
        "adjudication/pool_agreement.html",
        {"study": study, "agreement": agreement},
        fragment="adjudication/_pool_agreement.html",
    )
