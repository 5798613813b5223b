"""Single sign-on: OpenID Connect (mozilla-django-oidc) and SAML 2.0 (pysaml2) providers, several at once.

docs/guide/sso.md explains the settings (``CONCORD_OIDC_PROVIDERS``, ``CONCORD_SAML_IDPS``,
``CONCORD_LOCAL_PASSWORDS``); ``config`` reads them, ``identity`` matches people by the provider's stable subject
id (never by e-mail), ``oidc`` and ``saml`` are the two protocols' views.
"""
