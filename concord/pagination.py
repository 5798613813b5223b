"""The REST API's one pagination: ``?limit=`` and ``?offset=``, both bounded.

DRF's LimitOffsetPagination has no maximum by default, so ``?limit=1000000000`` read a whole table in one
response, and a 400-digit limit reached the database as ``LIMIT 999…`` and answered 500. Here a limit is a
whole number from 1 to ``MAX_LIMIT`` (1,000) and an offset one from 0 to ``MAX_OFFSET``; anything else is
refused with a 400 that names the parameter and its bounds (``concord.params.parse_int``), rather than read
as some other number. Without a limit a page holds ``PAGE_SIZE`` (100) results. The OpenAPI schema
documents both bounds. Every paginated endpoint uses this class: DRF's default (``REST_FRAMEWORK``), and
the endpoints that paginate by hand (``scoring.api.RunScoresApi``).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter
from rest_framework import pagination
from rest_framework.request import Request

from concord.params import MAX_ID, parse_int

MAX_LIMIT = 1000
# Any offset past the last result answers an empty page; this bound only keeps the number a number.
MAX_OFFSET = MAX_ID

LIMIT_DESCRIPTION = (
    f"Number of results to return per page: a whole number from 1 to {MAX_LIMIT} (the default is the "
    "site's page size, 100). Anything else answers 400."
)
OFFSET_DESCRIPTION = "The index of the first result to return, from 0 (the default). Anything else answers 400."


class LimitOffsetPagination(pagination.LimitOffsetPagination):
    max_limit = MAX_LIMIT
    limit_query_description = LIMIT_DESCRIPTION
    offset_query_description = OFFSET_DESCRIPTION

    def get_limit(self, request: Request) -> int:
        return parse_int(
            request.query_params.get(self.limit_query_param), name=self.limit_query_param,
            minimum=1, maximum=MAX_LIMIT, default=self.default_limit,
        )

    def get_offset(self, request: Request) -> int:
        return parse_int(
            request.query_params.get(self.offset_query_param), name=self.offset_query_param,
            minimum=0, maximum=MAX_OFFSET, default=0,
        )

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        limit, offset = super().get_schema_operation_parameters(view)
        limit["schema"].update(minimum=1, maximum=MAX_LIMIT)
        offset["schema"].update(minimum=0, maximum=MAX_OFFSET)
        return [limit, offset]


def schema_parameters() -> list[OpenApiParameter]:
    """The ``limit`` and ``offset`` parameters, with their bounds, for an endpoint that paginates by hand."""
    return [
        OpenApiParameter(
            "limit", {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}, required=False,
            description=LIMIT_DESCRIPTION,
        ),
        OpenApiParameter(
            "offset", {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET}, required=False,
            description=OFFSET_DESCRIPTION,
        ),
    ]
