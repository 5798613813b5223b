from django.urls import path

from scoring.judges import api

urlpatterns = [
    path("studies/<slug:slug>/judges/", api.JudgeListApi.as_view(), name="scoring-api-judges"),
    path("studies/<slug:slug>/judges/jobs/<int:job_id>/", api.JudgeJobApi.as_view(), name="scoring-api-judge-job"),
    path("studies/<slug:slug>/judges/<int:judge_id>/", api.JudgeDetailApi.as_view(), name="scoring-api-judge"),
    path("studies/<slug:slug>/judges/<int:judge_id>/retire/", api.JudgeRetireApi.as_view(),
         name="scoring-api-judge-retire"),
    path("studies/<slug:slug>/judges/<int:judge_id>/share/", api.JudgeShareApi.as_view(),
         name="scoring-api-judge-share"),
]
