from django.urls import path

from annotation.accounts import views

app_name = "account"
urlpatterns = [
    path("password/", views.PasswordChangeView.as_view(), name="password_change"),
    path("tokens/", views.TokensView.as_view(), name="tokens"),
    path("invitation/<uidb64>/<token>/", views.InvitationAcceptView.as_view(), name="invitation"),
]
