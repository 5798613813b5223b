from django.urls import path

from annotation.help import views

app_name = "help"
urlpatterns = [
    path("", views.index, name="index"),
    path("<slug:slug>/", views.page, name="page"),
]
