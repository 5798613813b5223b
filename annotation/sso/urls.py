from django.urls import path

from annotation.sso import oidc, saml

app_name = "sso"
urlpatterns = [
    path("oidc/<slug:provider>/login/", oidc.OidcLoginView.as_view(), name="oidc-login"),
    path("oidc/<slug:provider>/callback/", oidc.OidcCallbackView.as_view(), name="oidc-callback"),
    path("saml/metadata/", saml.SamlMetadataView.as_view(), name="saml-metadata"),
    path("saml/<slug:provider>/login/", saml.SamlLoginView.as_view(), name="saml-login"),
    path("saml/<slug:provider>/acs/", saml.SamlAcsView.as_view(), name="saml-acs"),
]
