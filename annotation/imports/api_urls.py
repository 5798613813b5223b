from django.urls import path

from annotation.imports import api as import_api

urlpatterns = [
    path("studies/<slug:slug>/items/import", import_api.ItemsImportApi.as_view(), name="api-items-import"),
]
