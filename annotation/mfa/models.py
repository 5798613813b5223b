"""Where each API token was issued: API tokens are not covered by multi-factor sign-in, so the token page
shows when and from where each one was created (annotation/accounts/views.py)."""

from __future__ import annotations

from django.db import models
from rest_framework.authtoken.models import Token


class TokenOrigin(models.Model):
    """How and from where a token was issued; deleted with its token."""

    VIA_PASSWORD = "password"  # noqa: S105 (POST /api/token/ with a username and password)
    VIA_SESSION = "session"  # the token page, in a signed-in session
    VIA_CHOICES = [(VIA_PASSWORD, "username and password (/api/token/)"), (VIA_SESSION, "the token page")]

    token = models.OneToOneField(Token, on_delete=models.CASCADE, primary_key=True, related_name="origin")
    created_at = models.DateTimeField(auto_now_add=True)
    ip = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=200, blank=True, default="")
    via = models.CharField(max_length=20, choices=VIA_CHOICES)
    # Whether the session that created it had passed a second factor (always False for /api/token/).
    mfa_verified = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"token of user {self.token.user_id} via {self.via} from {self.ip or 'unknown address'}"
