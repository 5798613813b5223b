from django.urls import path

from annotation.console import quality, views

app_name = "console"
urlpatterns = [
    path("", views.index, name="index"),
    path("new/", views.study_create, name="study_create"),
    path("guidelines-preview/", views.guidelines_preview, name="guidelines_preview"),
    path("<slug:slug>/", views.study_detail, name="study"),
    path("<slug:slug>/protocol/", views.protocol, name="protocol"),
    path("<slug:slug>/protocol/add/", views.question_add, name="question_add"),
    path("<slug:slug>/protocol/presets/", views.presets_apply, name="presets_apply"),
    path("<slug:slug>/protocol/<slug:key>/", views.question_edit, name="question_edit"),
    path("<slug:slug>/protocol/<slug:key>/remove/", views.question_remove, name="question_remove"),
    path("<slug:slug>/protocol/<slug:key>/move/", views.question_move, name="question_move"),
    path("<slug:slug>/preview/", views.preview, name="preview"),
    path("<slug:slug>/items/", views.items, name="items"),
    path("<slug:slug>/items/upload/", views.import_upload, name="import_upload"),
    path("<slug:slug>/items/format/", views.import_format, name="import_format"),
    path("<slug:slug>/items/examples/<str:name>", views.import_example, name="import_example"),
    path("<slug:slug>/imports/<int:job_id>/", views.import_job, name="import_job"),
    path("<slug:slug>/imports/<int:job_id>/confirm/", views.import_confirm, name="import_confirm"),
    path("<slug:slug>/pools/", views.pools, name="pools"),
    path("<slug:slug>/pools/<int:pool_id>/", views.pool_detail, name="pool"),
    path("<slug:slug>/pools/<int:pool_id>/members/", views.member_add, name="member_add"),
    path("<slug:slug>/members/<int:membership_id>/move/", views.member_move, name="member_move"),
    path("<slug:slug>/members/<int:membership_id>/remove/", views.member_remove, name="member_remove"),
    path("<slug:slug>/people/", views.people, name="people"),
    path("<slug:slug>/people/grant/", views.role_grant, name="role_grant"),
    path("<slug:slug>/people/revoke/", views.role_revoke, name="role_revoke"),
    path("<slug:slug>/people/accounts/", views.account_create, name="account_create"),
    path("<slug:slug>/people/invite/", views.invite, name="invite"),
    path(
        "<slug:slug>/invitations/<int:invitation_id>/withdraw/", views.invitation_withdraw,
        name="invitation_withdraw",
    ),
    path("<slug:slug>/progress/", views.progress, name="progress"),
    path("<slug:slug>/quality/", quality.controls, name="quality"),
    path("<slug:slug>/quality/mark/", quality.control_mark, name="control_mark"),
    path("<slug:slug>/quality/items/<str:external_id>/unmark/", quality.control_unmark, name="control_unmark"),
    path("<slug:slug>/quality/pools/<int:pool_id>/", quality.pool_quality_settings, name="quality_pool"),
]
