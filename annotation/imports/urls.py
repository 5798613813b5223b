from django.urls import path

from annotation.imports import views as import_views

app_name = "imports"
urlpatterns = [
    path("studies/<slug:slug>/import/", import_views.items_import_page, name="items-import"),
]
