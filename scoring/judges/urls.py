from django.urls import path

from scoring.judges import views

app_name = "judges"
urlpatterns = [
    path("studies/<slug:slug>/judges/", views.judge_list, name="list"),
    path("studies/<slug:slug>/judges/train", views.judge_train, name="train"),
    path("studies/<slug:slug>/judges/jobs/<int:job_id>/", views.judge_job, name="job"),
    path("studies/<slug:slug>/judges/<int:judge_id>/", views.judge_detail, name="detail"),
    path("studies/<slug:slug>/judges/<int:judge_id>/retire", views.judge_retire, name="retire"),
    path("studies/<slug:slug>/judges/<int:judge_id>/share", views.judge_share, name="share"),
]
