from django.apps import AppConfig

from annotation.audit import Audited


class MfaConfig(AppConfig):
    name = "annotation.mfa"
    label = "mfa"
    verbose_name = "Multi-factor sign-in"
    default_auto_field = "django.db.models.BigAutoField"
    # Sign-in factors in the audit trail (annotation/audit.py), secrets left out: enrolling or removing a device,
    # regenerating or using a recovery code (its row is deleted), and every check of a code or passkey (which
    # updates the device's last use, last accepted time step, sign counter or failure count).
    audited_tables = (
        Audited("otp_totp_totpdevice", actor_column="user_id", excluded_columns=("key",)),
        Audited("otp_static_staticdevice", actor_column="user_id"),
        Audited("otp_static_statictoken", excluded_columns=("token",)),
        Audited(
            "django_otp_webauthn_webauthncredential",
            actor_column="user_id",
            excluded_columns=("credential_id", "public_key"),
        ),
        Audited("mfa_tokenorigin"),
    )

    def ready(self) -> None:
        from annotation.mfa import signin
        from concord.auth import second_step_register

        second_step_register(signin.second_step)
