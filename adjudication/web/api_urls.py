"""adjudication's REST API, gathered from each area's ``urls`` module."""

from django.urls import include, path

from adjudication.web.cases import urls as cases
from adjudication.web.exports import urls as exports
from adjudication.web.planning import urls as planning
from adjudication.web.quality import urls as quality
from adjudication.web.raters import urls as raters
from adjudication.web.reports import urls as reports
from adjudication.web.validation import urls as validation

urlpatterns: list = [
    path("", include(cases.api_urlpatterns)),
    path("", include(exports.api_urlpatterns)),
    path("", include(reports.api_urlpatterns)),
    path("", include(validation.api_urlpatterns)),
    path("", include(raters.api_urlpatterns)),
    path("", include(planning.api_urlpatterns)),
    path("", include(quality.api_urlpatterns)),
]
