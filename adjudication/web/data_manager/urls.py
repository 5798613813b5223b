"""Routes of the data manager (included by adjudication/web/urls.py)."""

from django.urls import path

from adjudication.web.data_manager import views

urlpatterns = [
    path("studies/<slug:slug>/data/", views.data_manager, name="data-manager"),
    path("studies/<slug:slug>/data/bulk/", views.data_bulk, name="data-bulk"),
]
