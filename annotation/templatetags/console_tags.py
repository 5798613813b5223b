"""Template filters of the page header."""

from __future__ import annotations

from typing import Any

from django import template
from django.contrib.auth import get_user_model
from django.db.models import Q

from annotation.models import Role

register = template.Library()

_ADD_STUDY = {"codename": "add_study", "content_type__app_label": "annotation"}


@register.filter
def shows_console(user: Any) -> bool:
    """Whether the header links the researcher console: to a researcher of some study, or to someone
    allowed to create studies (``annotation.add_study``, as ``annotation.access.can_create_studies``);
    annotators and adjudicators never see it (the console would refuse them). One query, once per
    request's user object."""
    if not getattr(user, "is_authenticated", False):
        return False
    cached = getattr(user, "_concord_shows_console", None)
    if cached is None:
        if user.is_superuser and user.is_active:
            cached = True
        else:
            cached = get_user_model().objects.filter(pk=user.pk).filter(
                Q(study_roles__role=Role.RESEARCHER)
                | Q(**{f"user_permissions__{k}": v for k, v in _ADD_STUDY.items()})
                | Q(**{f"groups__permissions__{k}": v for k, v in _ADD_STUDY.items()})
            ).exists()
        user._concord_shows_console = cached
    return bool(cached)
