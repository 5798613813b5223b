from django.contrib import admin

from scoring import models


@admin.register(models.ScoreRun)
class ScoreRunAdmin(admin.ModelAdmin):
    list_display = ["metric", "backend", "study", "status", "n_done", "n_failed", "n_total", "created_at"]
    list_filter = ["metric", "backend", "status"]


@admin.register(models.KnowledgeBase)
class KnowledgeBaseAdmin(admin.ModelAdmin):
    list_display = ["name", "study", "created_at"]
