from django.contrib import admin

from annotation import models


@admin.register(models.Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "owner", "blind_system", "independent_pools", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}


@admin.register(models.StudyRole)
class StudyRoleAdmin(admin.ModelAdmin):
    list_display = ["study", "user", "role"]
    list_filter = ["role"]


@admin.register(models.Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ["study", "key", "scope", "kind", "order", "required"]
    list_filter = ["scope", "kind"]


class SentenceInline(admin.TabularInline):
    model = models.Sentence
    extra = 0
    readonly_fields = ["part", "index", "text", "start", "end"]


class ChunkInline(admin.TabularInline):
    model = models.Chunk
    extra = 0


class AspectInline(admin.TabularInline):
    model = models.Aspect
    extra = 0
    fk_name = "item"
    raw_id_fields = ["proposed_by", "decided_by"]


@admin.register(models.Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ["external_id", "study", "system", "scope_class"]
    list_filter = ["study"]
    search_fields = ["external_id", "question"]
    inlines = [SentenceInline, ChunkInline, AspectInline]


@admin.register(models.Pool)
class PoolAdmin(admin.ModelAdmin):
    list_display = ["name", "study", "overlap", "visibility"]
    filter_horizontal = ["questions"]


@admin.register(models.PoolMembership)
class PoolMembershipAdmin(admin.ModelAdmin):
    list_display = ["pool", "user", "pseudonym", "active"]
    readonly_fields = ["study", "independent"]


@admin.register(models.Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["pool", "item", "annotator", "status", "submitted_at"]
    list_filter = ["status"]
    raw_id_fields = ["item"]


@admin.register(models.Label)
class LabelAdmin(admin.ModelAdmin):
    """Read-only: labels change only through the annotator workspace, which keeps history."""

    list_display = ["assignment", "question", "unit_key", "value", "version", "updated_at"]

    def has_change_permission(self, request, obj=None) -> bool:  # type: ignore[no-untyped-def]
        return False

    def has_add_permission(self, request) -> bool:  # type: ignore[no-untyped-def]
        return False

    def has_delete_permission(self, request, obj=None) -> bool:  # type: ignore[no-untyped-def]
        return False
