from django.urls import include, path

from adjudication import pool_agreement_views, views

app_name = "adjudication"
urlpatterns = [
    path("studies/<slug:slug>/cases/", views.queue, name="queue"),
    path("cases/<int:pk>/", views.case_page, name="case"),
    path("aspects/<int:pk>/decide/", views.aspect_decide, name="aspect-decide"),
    path("pools/<int:pk>/consensus-rule/", views.consensus_rule, name="consensus-rule"),
    path("studies/<slug:slug>/exports/", views.exports, name="exports"),
    path("exports/<int:pk>/download/", views.export_download, name="export-download"),
]
urlpatterns += [path("", include("adjudication.report_urls"))]
urlpatterns += [
    # The researcher console's progress page hx-gets this per pool (annotation.console_selectors).
    path("studies/<slug:slug>/pools/<int:pool_id>/agreement/", pool_agreement_views.pool_agreement_fragment,
         name="pool_agreement_fragment"),
]
urlpatterns += [path("", include("adjudication.validation_urls"))]
urlpatterns += [path("", include("adjudication.rater_urls"))]
