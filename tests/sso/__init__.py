"""Real identity providers for the single sign-on tests, each run in a process of its own on 127.0.0.1.

``oidc_provider``: a tiny Django project serving django-oauth-toolkit in its OpenID Connect mode (RS256, with an
RSA key the test generates). ``saml_idp``: a WSGI app around pysaml2's own IdP (``saml2.server.Server``), signing
with a key and certificate the test generates. ``providers`` starts them and waits for the port they print.
"""
