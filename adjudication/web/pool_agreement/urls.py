"""Route of the pool agreement fragment (a page of its own without htmx)."""

from django.urls import path

from adjudication.web.pool_agreement import views

urlpatterns = [
    # The researcher console's progress page hx-gets this per pool (annotation.console.selectors).
    path(
        "studies/<slug:slug>/pools/<int:pool_id>/agreement/",
        views.pool_agreement_fragment,
        name="pool_agreement_fragment",
    ),
]
