from django.contrib import admin

from annotation.sso.models import SsoIdentity


@admin.register(SsoIdentity)
class SsoIdentityAdmin(admin.ModelAdmin):
    """Which provider identities sign in to which account. Read-only: an identity is created by its first sign-in;
    deleting one unlinks it (its next sign-in creates a new account)."""

    list_display = ("user", "protocol", "provider", "subject", "created_at", "last_login_at")
    list_filter = ("protocol", "provider")
    search_fields = ("user__username", "subject", "issuer")
    readonly_fields = ("user", "protocol", "issuer", "subject", "provider", "created_at", "last_login_at")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
