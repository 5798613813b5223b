"""The invited person's side of the console's invitations: see one, accept it or decline it.

An invitation (``annotation.models.StudyInvitation``) is listed on its person's home page
(``annotation.views.home``). These pages are theirs only: ``get_invitation_for_invitee`` answers 404 to
everyone else, the study's researchers and other people invited to it included. Accepting is what makes
the role and the pool membership exist (``annotation.console.services.invitation_accept``).
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from annotation.console import services as svc
from annotation.console.access import get_invitation_for_invitee
from annotation.models import StudyInvitation
from concord.access import access_policy
from concord.errors import DomainError
from concord.http import domain_errors


def _page(request: HttpRequest, invitation: StudyInvitation, *, error: str = "", status: int = 200) -> HttpResponse:
    return render(request, "annotation/invitation.html", {
        "invitation": invitation, "status": invitation.status(timezone.now()), "error": error,
    }, status=status)


@access_policy("authenticated")
@require_GET
@domain_errors
def invitation_detail(request: HttpRequest, invitation_id: int) -> HttpResponse:
    return _page(request, get_invitation_for_invitee(request.user, invitation_id))


@access_policy("authenticated")
@require_POST
@domain_errors
def invitation_accept(request: HttpRequest, invitation_id: int) -> HttpResponse:
    invitation = get_invitation_for_invitee(request.user, invitation_id)
    try:
        invitation = svc.invitation_accept(invitation=invitation, user=request.user)
    except DomainError as exc:
        invitation.refresh_from_db()
        return _page(request, invitation, error=exc.message, status=exc.status_code)
    where = f"pool {invitation.pool.name} of " if invitation.pool else ""
    messages.success(request, f"You joined {where}{invitation.study.name} as {invitation.role}.")
    return redirect("annotation:home")


@access_policy("authenticated")
@require_POST
@domain_errors
def invitation_decline(request: HttpRequest, invitation_id: int) -> HttpResponse:
    invitation = get_invitation_for_invitee(request.user, invitation_id)
    try:
        invitation = svc.invitation_decline(invitation=invitation, user=request.user)
    except DomainError as exc:
        invitation.refresh_from_db()
        return _page(request, invitation, error=exc.message, status=exc.status_code)
    messages.success(request, f"You declined the invitation to {invitation.study.name}.")
    return redirect("annotation:home")
