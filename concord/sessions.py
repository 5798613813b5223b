"""The session's idle timeout, written at most once a refresh interval instead of on every request.

``SESSION_COOKIE_AGE`` is an idle timeout: a session nobody uses for that long expires. Django's way to get one,
``SESSION_SAVE_EVERY_REQUEST``, rewrites the session row (an UPDATE and a commit) and re-sends the cookie on
every request, which on an annotator's hot pages is a write per page view for nothing but a new deadline.
Here the deadline is pushed forward when at least ``SESSION_IDLE_REFRESH_SECONDS`` have passed since the
session was last written (or when anything in it changed): a session then expires between
``SESSION_COOKIE_AGE - SESSION_IDLE_REFRESH_SECONDS`` and ``SESSION_COOKIE_AGE`` after its last request, never
later, with the cookie's max-age and the server's expiry date moved together."""

from __future__ import annotations

import time

from django.conf import settings
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpRequest, HttpResponse

# When the session was last written, in the session's own (server-side) data: seconds since the epoch.
WRITTEN_AT = "_concord_written_at"


def refresh_seconds() -> int:
    """How long a session may go without its deadline being written again."""
    return int(settings.SESSION_IDLE_REFRESH_SECONDS)


class IdleTimeoutSessionMiddleware(SessionMiddleware):
    """Django's session middleware, writing an unchanged session only once its last write is old enough."""

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        session = getattr(request, "session", None)
        if session is not None and response.status_code < 500 and not session.is_empty():
            now = int(time.time())
            written_at = session.get(WRITTEN_AT)
            stale = not isinstance(written_at, int) or not 0 <= now - written_at < refresh_seconds()
            # Loading the session (above) may find it gone or expired: then it is empty and nothing is written.
            if (session.modified or stale) and not session.is_empty():
                session[WRITTEN_AT] = now
        return super().process_response(request, response)
