"""The account page: a person changes their password; invited people choose their first one.

People created with a one-time password are sent here by PasswordChangeRequiredMiddleware until
they have chosen their own; changing it clears the flag.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.forms import Form
from django.http import HttpResponse
from django.urls import reverse_lazy
from django.utils.decorators import method_decorator

from annotation.models import PasswordChangeRequired


class PasswordChangeView(auth_views.PasswordChangeView):
    access_policy = "authenticated"
    template_name = "annotation/account/password_change.html"
    success_url = reverse_lazy("annotation:home")

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["forced"] = PasswordChangeRequired.objects.filter(user=self.request.user).exists()
        return context

    def form_valid(self, form: Form) -> HttpResponse:
        response = super().form_valid(form)
        PasswordChangeRequired.objects.filter(user=self.request.user).delete()
        messages.success(self.request, "Your password has been changed.")
        return response


@method_decorator(login_not_required, name="dispatch")
class InvitationAcceptView(auth_views.PasswordResetConfirmView):
    """The link of an invitation e-mail: Django's one-use token, then the person sets a password."""

    access_policy = "public"
    template_name = "annotation/account/invitation.html"
    success_url = reverse_lazy("login")
    post_reset_login = False

    def form_valid(self, form: Form) -> HttpResponse:
        response = super().form_valid(form)
        PasswordChangeRequired.objects.filter(user=form.user).delete()
        messages.success(self.request, "Your password is set. Log in with your username and the new password.")
        return response
