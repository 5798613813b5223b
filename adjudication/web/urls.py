"""adjudication's pages (namespace ``adjudication``), gathered from each area's ``urls`` module."""

from django.urls import include, path

from adjudication.web.cases import urls as cases
from adjudication.web.data_manager import urls as data_manager
from adjudication.web.exports import urls as exports
from adjudication.web.planning import urls as planning
from adjudication.web.pool_agreement import urls as pool_agreement
from adjudication.web.quality import urls as quality
from adjudication.web.raters import urls as raters
from adjudication.web.reports import urls as reports
from adjudication.web.validation import urls as validation

app_name = "adjudication"
urlpatterns = [
    path("", include(cases.urlpatterns)),
    path("", include(exports.urlpatterns)),
    path("", include(reports.urlpatterns)),
    path("", include(pool_agreement.urlpatterns)),
    path("", include(validation.urlpatterns)),
    path("", include(raters.urlpatterns)),
    path("", include(planning.urlpatterns)),
    path("", include(quality.urlpatterns)),
    path("", include(data_manager.urlpatterns)),
]
