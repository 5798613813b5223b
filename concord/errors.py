"""One domain error type, mapped to HTTP once for pages (``concord.http``) and once for the REST API
(``concord.api_errors``, whose error body is ``as_dict``).

Services raise these; views and API classes never translate errors themselves.
"""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    status_code = 400
    code = "invalid"

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"error": self.code, "detail": self.message}
        if self.details is not None:
            body["details"] = self.details
        return body


class ValidationFailed(DomainError):
    status_code = 400
    code = "invalid"


class NotFound(DomainError):
    """For objects the user may not know exist: never distinguish 'absent' from 'not yours'."""

    status_code = 404
    code = "not_found"


class Forbidden(DomainError):
    status_code = 403
    code = "forbidden"


class Conflict(DomainError):
    status_code = 409
    code = "conflict"


class PayloadTooLarge(DomainError):
    status_code = 413
    code = "too_large"


class TooManyRequests(DomainError):
    """A bounded resource is busy (as many of these computations are running as allowed): try again later."""

    status_code = 429
    code = "too_many_requests"
