"""Routes of planning: fragments (included by adjudication/web/urls.py) and the REST API (by api_urls.py)."""

from django.urls import path

from adjudication.web.planning import api as planning_api
from adjudication.web.planning import views as planning_views

urlpatterns = [
    path("pools/<int:pk>/plan/", planning_views.pool_plan, name="pool-plan"),
    path("pools/<int:pk>/stop-rule/", planning_views.pool_stop_rule, name="pool-stop-rule"),
    path("validation/<int:pk>/precision/", planning_views.validation_precision, name="validation-precision"),
]

api_urlpatterns = [
    path("studies/<slug:slug>/plan/", planning_api.PlanApi.as_view(), name="adjudication-api-plan"),
    path("pools/<int:pk>/plan/", planning_api.PoolPlanApi.as_view(), name="adjudication-api-pool-plan"),
    path(
        "validation-studies/<int:pk>/plan/",
        planning_api.ValidationPlanApi.as_view(),
        name="adjudication-api-validation-plan",
    ),
]
