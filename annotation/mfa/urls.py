from django.contrib.auth.decorators import login_not_required
from django.urls import path

from annotation.mfa import views, webauthn

app_name = "mfa"
urlpatterns = [
    path("", views.SetupView.as_view(), name="setup"),
    path("verify/", views.VerifyView.as_view(), name="verify"),
    path("totp/", views.TotpEnrolView.as_view(), name="totp"),
    path("recovery-codes/", views.RecoveryCodesView.as_view(), name="recovery-codes"),
    path("remove/", views.DeviceRemoveView.as_view(), name="remove"),
    path("passkey/register/begin/", webauthn.RegistrationBeginView.as_view(), name="passkey-registration-begin"),
    path(
        "passkey/register/complete/", webauthn.RegistrationCompleteView.as_view(), name="passkey-registration-complete"
    ),
    path(
        "passkey/verify/begin/",
        login_not_required(webauthn.AuthenticationBeginView.as_view()),
        name="passkey-authentication-begin",
    ),
    path(
        "passkey/verify/complete/",
        login_not_required(webauthn.AuthenticationCompleteView.as_view()),
        name="passkey-authentication-complete",
    ),
]
