from django.apps import AppConfig

from annotation.audit import Audited


class SsoConfig(AppConfig):
    name = "annotation.sso"
    label = "sso"
    verbose_name = "Single sign-on"
    default_auto_field = "django.db.models.BigAutoField"
    # Whose account an identity signs in to is written once, when the identity is first seen; every sign-in
    # updates last_login_at, so the audit trail records each single sign-on (annotation.audit).
    audited_tables = (
        Audited("sso_identity", fixed_columns=("user_id", "protocol", "issuer", "subject")),
    )
