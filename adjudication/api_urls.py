from django.urls import include, path

from adjudication import api
from adjudication.rater_urls import api_urlpatterns as rater_api_urlpatterns
from adjudication.report_urls import api_urlpatterns as report_api_urlpatterns
from adjudication.validation_urls import api_urlpatterns as validation_api_urlpatterns

urlpatterns: list = [
    path("studies/<slug:slug>/cases/", api.CaseListApi.as_view(), name="adjudication-api-cases"),
    path("cases/<int:pk>/", api.CaseDetailApi.as_view(), name="adjudication-api-case"),
    path("cases/<int:pk>/decision/", api.CaseDecideApi.as_view(), name="adjudication-api-case-decide"),
    path("aspects/<int:pk>/decision/", api.AspectDecideApi.as_view(), name="adjudication-api-aspect-decide"),
    path("studies/<slug:slug>/exports/", api.ExportListCreateApi.as_view(), name="adjudication-api-exports"),
    path("exports/<int:pk>/", api.ExportDetailApi.as_view(), name="adjudication-api-export"),
    path("pools/<int:pk>/consensus-rules/", api.ConsensusRuleApi.as_view(), name="adjudication-api-consensus-rule"),
    path("pools/<int:pk>/human-measures/<slug:measure>/", api.HumanMeasureApi.as_view(), name="adjudication-api-human-measure"),
]
urlpatterns += [path("", include(report_api_urlpatterns))]
urlpatterns += [path("", include(validation_api_urlpatterns))]
urlpatterns += [path("", include(rater_api_urlpatterns))]
