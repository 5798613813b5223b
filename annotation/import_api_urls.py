from django.urls import path

from annotation import import_api

urlpatterns = [
    path("studies/<slug:slug>/items/import", import_api.ItemsImportApi.as_view(), name="api-items-import"),
]
