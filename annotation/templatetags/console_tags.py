"""Template filters of the page header."""

from __future__ import annotations

from typing import Any

from django import template

from annotation.console.access import can_create_studies
from annotation.models import Role, StudyRole

register = template.Library()


@register.filter
def shows_console(user: Any) -> bool:
    """Whether the header links the researcher console: to a researcher of some study, or to someone
    allowed to create studies; annotators and adjudicators never see it (the console would refuse them).
    Computed once per request's user object."""
    if not getattr(user, "is_authenticated", False):
        return False
    cached = getattr(user, "_concord_shows_console", None)
    if cached is None:
        cached = can_create_studies(user) or StudyRole.objects.filter(user=user, role=Role.RESEARCHER).exists()
        user._concord_shows_console = cached
    return bool(cached)
