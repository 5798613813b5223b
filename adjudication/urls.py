from django.urls import include, path

from adjudication import views

app_name = "adjudication"
urlpatterns = [
    path("studies/<slug:slug>/cases/", views.queue, name="queue"),
    path("cases/<int:pk>/", views.case_page, name="case"),
    path("aspects/<int:pk>/decide/", views.aspect_decide, name="aspect-decide"),
    path("studies/<slug:slug>/exports/", views.exports, name="exports"),
    path("exports/<int:pk>/download/", views.export_download, name="export-download"),
]
urlpatterns += [path("", include("adjudication.report_urls"))]
urlpatterns += [path("", include("adjudication.validation_urls"))]
