"""The test identity providers as pytest fixtures, shared by every single sign-on test module (tests/test_sso.py,
tests/e2e/test_sso_browser.py): each provider process is started once per test session (per pytest-xdist worker),
the first time a test asks for it, and stopped at the session's end. tests/conftest.py makes them available.

Sharing them keeps the tests independent of their order: the providers hold no state a test reads. The OIDC
provider's user and clients are fixed at its start (tests/sso/oidc_provider/serve.py) and every sign-in makes a
grant of its own; the SAML IdP answers each AuthnRequest on its own, the fault a test wants named in the form it
posts. Each test configures Concord for the providers through its own ``settings`` (restored after the test).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sso import providers


@pytest.fixture(scope="session")
def oidc_op(tmp_path_factory) -> Iterator[providers.OidcProviderInfo]:
    """django-oauth-toolkit's OpenID Connect provider, one client per behaviour (providers.OIDC_MODES)."""
    with providers.oidc_provider(Path(tmp_path_factory.mktemp("oidc"))) as info:
        yield info


@pytest.fixture(scope="session")
def saml_idp(tmp_path_factory) -> Iterator[providers.SamlIdpInfo]:
    """pysaml2's SAML 2.0 IdP, signing with a key generated for this session."""
    with providers.saml_idp(Path(tmp_path_factory.mktemp("saml"))) as info:
        yield info
