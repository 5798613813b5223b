from __future__ import annotations

from django.conf import settings
from django.db import models


class SsoIdentity(models.Model):
    """One person's identity at one identity provider: the provider's stable subject id, never an e-mail.

    OpenID Connect: ``issuer`` is the id_token's ``iss`` and ``subject`` its ``sub``. SAML: ``issuer`` is the
    IdP's entity id and ``subject`` the persistent NameID (or the attribute the IdP's settings name). The pair is
    what a sign-in is matched by; ``provider`` is the configured name it was first seen through (informative).
    """

    PROTOCOLS = [("oidc", "OpenID Connect"), ("saml", "SAML 2.0")]

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identities")
    protocol = models.CharField(max_length=8, choices=PROTOCOLS)
    issuer = models.CharField(max_length=512)
    subject = models.CharField(max_length=512)
    provider = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    last_login_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "sso_identity"
        constraints = [
            models.UniqueConstraint(fields=["protocol", "issuer", "subject"], name="sso_identity_unique_subject")
        ]

    def __str__(self) -> str:
        return f"{self.protocol}:{self.provider}:{self.subject} -> {self.user_id}"
