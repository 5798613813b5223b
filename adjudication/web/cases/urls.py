"""Routes of the adjudicator's cases: pages (included by adjudication/web/urls.py) and the REST API (by api_urls.py)."""

from django.urls import path

from adjudication.web.cases import api, views

urlpatterns = [
    path("studies/<slug:slug>/cases/", views.queue, name="queue"),
    path("cases/<int:pk>/", views.case_page, name="case"),
    path("aspects/<int:pk>/decide/", views.aspect_decide, name="aspect-decide"),
    path("pools/<int:pk>/consensus-rule/", views.consensus_rule, name="consensus-rule"),
]

api_urlpatterns = [
    path("studies/<slug:slug>/cases/", api.CaseListApi.as_view(), name="adjudication-api-cases"),
    path("cases/<int:pk>/", api.CaseDetailApi.as_view(), name="adjudication-api-case"),
    path("cases/<int:pk>/decision/", api.CaseDecideApi.as_view(), name="adjudication-api-case-decide"),
    path("aspects/<int:pk>/decision/", api.AspectDecideApi.as_view(), name="adjudication-api-aspect-decide"),
    path("pools/<int:pk>/consensus-rules/", api.ConsensusRuleApi.as_view(), name="adjudication-api-consensus-rule"),
    path(
        "pools/<int:pk>/human-measures/<slug:measure>/",
        api.HumanMeasureApi.as_view(),
        name="adjudication-api-human-measure",
    ),
]
