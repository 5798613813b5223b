from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from concord.access import access_policy
from concord.auth import ThrottledLoginView

login_view = access_policy("public")(login_not_required(ThrottledLoginView.as_view()))
logout_view = access_policy("authenticated")(auth_views.LogoutView.as_view())
schema_view = access_policy("authenticated")(SpectacularAPIView.as_view())
# The split view serves Swagger UI's start-up script as a file; the template has no inline style.
docs_view = access_policy("authenticated")(
    SpectacularSwaggerSplitView.as_view(url_name="schema", template_name="concord/swagger_ui.html")
)

urlpatterns = [
    # Probes and metrics (concord/ops, docs/operations.md): anonymous, at the root, for load balancers and Prometheus.
    path("", include("concord.ops.urls")),
    path("admin/", admin.site.urls),
    path("accounts/login/", login_view, name="login"),
    path("accounts/logout/", logout_view, name="logout"),
    path("accounts/mfa/", include("annotation.mfa.urls")),
    path("accounts/", include("annotation.accounts.urls")),
    # Single sign-on (annotation/sso, docs/guide/sso.md): OpenID Connect and SAML providers, by name.
    path("sso/", include("annotation.sso.urls")),
    path("api/schema/", schema_view, name="schema"),
    path("api/docs/", docs_view, name="api-docs"),
    # The annotators' API first: its label save is the most frequent request, and Django tries the patterns
    # in order (tests/test_urls.py: every route still resolves to itself).
    path("api/", include("annotation.api_urls")),
    path("", include("annotation.urls")),
    path("", include("annotation.imports.urls")),
    path("console/", include("annotation.console.urls")),
    path("help/", include("annotation.help.urls")),
    path("scoring/", include("scoring.urls")),
    path("adjudication/", include("adjudication.web.urls")),
    path("api/", include("annotation.imports.api_urls")),
    path("api/console/", include("annotation.console.api_urls")),
    path("api/scoring/", include("scoring.api_urls")),
    path("api/adjudication/", include("adjudication.web.api_urls")),
]

# Errors outside any endpoint: the API's paths answer in its one error shape (concord/api_errors.py).
handler404 = "concord.api_errors.page_not_found"
handler500 = "concord.api_errors.server_error"
