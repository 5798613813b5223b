from django.urls import path

from annotation.console import api

urlpatterns = [
    path("studies/", api.StudyListCreateApi.as_view(), name="console-api-studies"),
    path("studies/<slug:slug>/", api.StudyDetailApi.as_view(), name="console-api-study"),
    path("studies/<slug:slug>/questions/", api.QuestionListCreateApi.as_view(), name="console-api-questions"),
    path("studies/<slug:slug>/questions/presets/", api.PresetApplyApi.as_view(), name="console-api-presets"),
    path(
        "studies/<slug:slug>/questions/reorder/", api.QuestionReorderApi.as_view(), name="console-api-questions-reorder"
    ),
    path("studies/<slug:slug>/questions/<slug:key>/", api.QuestionDetailApi.as_view(), name="console-api-question"),
    path("studies/<slug:slug>/items/", api.ItemListApi.as_view(), name="console-api-items"),
    path("studies/<slug:slug>/imports/", api.ImportJobListCreateApi.as_view(), name="console-api-imports"),
    path("studies/<slug:slug>/imports/<int:job_id>/", api.ImportJobDetailApi.as_view(), name="console-api-import"),
    path(
        "studies/<slug:slug>/imports/<int:job_id>/confirm/",
        api.ImportJobConfirmApi.as_view(),
        name="console-api-import-confirm",
    ),
    path("studies/<slug:slug>/pools/", api.PoolListCreateApi.as_view(), name="console-api-pools"),
    path("studies/<slug:slug>/pools/<int:pool_id>/", api.PoolDetailApi.as_view(), name="console-api-pool"),
    path(
        "studies/<slug:slug>/pools/<int:pool_id>/members/",
        api.PoolMemberAddApi.as_view(),
        name="console-api-pool-members",
    ),
    path(
        "studies/<slug:slug>/members/<int:membership_id>/",
        api.MembershipDetailApi.as_view(),
        name="console-api-membership",
    ),
    path(
        "studies/<slug:slug>/members/<int:membership_id>/move/",
        api.MembershipMoveApi.as_view(),
        name="console-api-membership-move",
    ),
    path("studies/<slug:slug>/roles/", api.RoleListGrantApi.as_view(), name="console-api-roles"),
    path("studies/<slug:slug>/roles/revoke/", api.RoleRevokeApi.as_view(), name="console-api-roles-revoke"),
    path("studies/<slug:slug>/accounts/", api.AccountCreateApi.as_view(), name="console-api-accounts"),
    path("studies/<slug:slug>/invitations/", api.InvitationApi.as_view(), name="console-api-invitations"),
    path(
        "studies/<slug:slug>/invitations/<int:invitation_id>/",
        api.InvitationDetailApi.as_view(),
        name="console-api-invitation",
    ),
    path("studies/<slug:slug>/progress/", api.ProgressApi.as_view(), name="console-api-progress"),
]
