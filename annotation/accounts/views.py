"""The account page: a person changes their password; invited people choose their first one.

People created with a one-time password are sent here by PasswordChangeRequiredMiddleware until
they have chosen their own; changing it clears the flag.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.forms import Form
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.utils.decorators import method_decorator
from django.views.generic import TemplateView
from rest_framework.authtoken.models import Token

from annotation.accounts import tokens
from annotation.mfa import signin
from annotation.mfa.models import TokenOrigin
from annotation.models import PasswordChangeRequired


def _passwords_off(request: HttpRequest) -> HttpResponse | None:
    """With CONCORD_LOCAL_PASSWORDS=false (single sign-on only) passwords are neither set nor changed here,
    except a superuser's when CONCORD_PASSWORD_BREAK_GLASS keeps their password sign-in."""
    if settings.LOCAL_PASSWORDS:
        return None
    user = getattr(request, "user", None)
    if settings.PASSWORD_BREAK_GLASS and user is not None and user.is_authenticated and user.is_superuser:
        return None
    return render(request, "sso/passwords_off.html", status=403)


class PasswordChangeView(auth_views.PasswordChangeView):
    access_policy = "authenticated"
    template_name = "annotation/account/password_change.html"
    success_url = reverse_lazy("annotation:home")

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return _passwords_off(request) or super().dispatch(request, *args, **kwargs)

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

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return _passwords_off(request) or super().dispatch(request, *args, **kwargs)

    def form_valid(self, form: Form) -> HttpResponse:
        response = super().form_valid(form)
        PasswordChangeRequired.objects.filter(user=form.user).delete()
        messages.success(self.request, "Your password is set. Log in with your username and the new password.")
        return response


class TokensView(TemplateView):
    """The person's API token (when they have one): when, how and from where it was issued, when it expires;
    create one (in a session verified by a second factor when the person signs in with one); revoke it.

    Tokens are not covered by multi-factor sign-in, and the page says so."""

    access_policy = "authenticated"
    template_name = "annotation/account/tokens.html"
    http_method_names = ["get", "post"]

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        user = self.request.user
        context["ttl_days"] = round(settings.API_TOKEN_TTL_SECONDS / 86400, 1)
        context["mfa_applies"] = signin.mfa_applies(user)
        context["mfa_verified"] = signin.session_verified(self.request)
        context["tokens"] = [
            {
                "prefix": token.key[:6],
                "created": token.created,
                "expires_at": tokens.token_expires_at(token),
                "expired": tokens.token_expired(token),
                "origin": getattr(token, "origin", None),
            }
            for token in Token.objects.filter(user=user).select_related("origin")
        ]
        return context

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        action = request.POST.get("action", "revoke")
        if action == "create":
            verified = signin.session_verified(request)
            if signin.mfa_applies(request.user) and not verified:
                messages.error(request, "Sign in with your second factor before creating an API token.")
                return self.render_to_response(self.get_context_data(), status=403)
            if tokens.must_change_password(request.user):
                messages.error(request, tokens.PASSWORD_CHANGE_FIRST)
                return self.render_to_response(self.get_context_data(), status=403)
            before = Token.objects.filter(user=request.user).values_list("key", flat=True).first()
            token = tokens.token_issue(
                user=request.user, request=request, via=TokenOrigin.VIA_SESSION, mfa_verified=verified
            )
            context = self.get_context_data()
            if token.key != before:
                context["new_token"] = token.key  # shown this once
            else:
                messages.info(request, "You already have a valid API token; revoke it to create a new one.")
            return self.render_to_response(context)
        if action != "revoke":
            messages.error(request, "Unknown action.")
            return self.render_to_response(self.get_context_data(), status=400)
        revoked = tokens.tokens_revoke(user=request.user)
        messages.success(request, "Your API token has been revoked." if revoked else "You had no API token.")
        return redirect("account:tokens")
