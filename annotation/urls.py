from django.urls import path

from annotation import views
from annotation.console import invitee

app_name = "annotation"
urlpatterns = [
    path("", views.home, name="home"),
    path("pools/<int:pool_id>/continue/", views.pool_continue, name="pool-continue"),
    path("pools/<int:pool_id>/qualification/", views.qualification, name="qualification"),
    path("pools/<int:pool_id>/qualification/start/", views.qualification_start, name="qualification-start"),
    path("pools/<int:pool_id>/qualification/answer/", views.qualification_answer, name="qualification-answer"),
    path("assignments/<int:pk>/", views.item_page, name="item"),
    path("assignments/<int:pk>/labels/", views.label_save, name="label-save"),
    path("assignments/<int:pk>/submit/", views.assignment_submit, name="submit"),
    path("assignments/<int:pk>/skip/", views.assignment_skip, name="skip"),
    path("assignments/<int:pk>/aspects/", views.aspect_propose, name="aspect-propose"),
    path("assignments/<int:pk>/time/", views.active_time, name="active-time"),
    path("assignments/<int:pk>/undo/", views.label_undo, name="undo"),
    path("assignments/<int:pk>/reopen/", views.assignment_reopen, name="reopen"),
    path("history/", views.history, name="history"),
    path("invitations/<int:invitation_id>/", invitee.invitation_detail, name="invitation"),
    path("invitations/<int:invitation_id>/accept/", invitee.invitation_accept, name="invitation-accept"),
    path("invitations/<int:invitation_id>/decline/", invitee.invitation_decline, name="invitation-decline"),
]
