from django.contrib import admin

from adjudication import models


@admin.register(models.AdjudicationCase)
class AdjudicationCaseAdmin(admin.ModelAdmin):
    list_display = ["pool", "item", "unit_key", "question", "status"]
    list_filter = ["status"]


@admin.register(models.GoldLabel)
class GoldLabelAdmin(admin.ModelAdmin):
    list_display = ["item", "unit_key", "question", "value", "source", "version", "is_current"]
    list_filter = ["source", "is_current"]
