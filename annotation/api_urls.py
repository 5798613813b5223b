from django.urls import path

from annotation import api

urlpatterns = [
    path("token/", api.TokenApi.as_view(), name="api-token"),
    path("assignments/", api.AssignmentListApi.as_view(), name="api-assignments"),
    path("assignments/<int:pk>/", api.AssignmentDetailApi.as_view(), name="api-assignment"),
    path("assignments/<int:pk>/labels/", api.LabelApi.as_view(), name="api-labels"),
    path("assignments/<int:pk>/submit/", api.SubmitApi.as_view(), name="api-submit"),
    path("assignments/<int:pk>/skip/", api.SkipApi.as_view(), name="api-skip"),
    path("assignments/<int:pk>/reopen/", api.ReopenApi.as_view(), name="api-reopen"),
    path("assignments/<int:pk>/undo/", api.UndoApi.as_view(), name="api-undo"),
    path("assignments/<int:pk>/aspects/", api.AspectProposalApi.as_view(), name="api-aspect-propose"),
    path("assignments/<int:pk>/time/", api.ActiveTimeApi.as_view(), name="api-active-time"),
    path("pools/<int:pool_id>/next/", api.PoolNextApi.as_view(), name="api-pool-next"),
]
