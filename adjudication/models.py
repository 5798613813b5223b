"""Disagreement cases and gold labels with provenance (DESIGN.md §4)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotation.models import Item, Label, Pool, Question


class CaseStatus(models.TextChoices):
    OPEN = "open", "Open"
    RESOLVED = "resolved", "Resolved"
    UNRESOLVED = "unresolved", "Unresolved"


class AdjudicationCase(models.Model):
    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="cases")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="cases")
    unit_key = models.CharField(max_length=40)
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="cases")
    labels = models.ManyToManyField(Label, related_name="cases", blank=True)
    status = models.CharField(max_length=10, choices=CaseStatus.choices, default=CaseStatus.OPEN)
    shuffle_seed = models.BigIntegerField(default=0)
    opened_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["pool", "item", "unit_key", "question"], name="unique_case_per_unit")
        ]


class GoldSource(models.TextChoices):
    UNANIMOUS = "unanimous", "Unanimous"
    MAJORITY = "majority", "Majority"
    ADJUDICATED = "adjudicated", "Adjudicated"
    UNRESOLVED = "unresolved", "Unresolved"
    IMPORTED = "imported", "Imported"


class GoldLabel(models.Model):
    """One version of the gold value of a unit. Re-adjudication appends a new version; the latest
    version (``is_current``) is the gold in force, and nothing is ever deleted."""

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="gold_labels")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="gold_labels")
    unit_key = models.CharField(max_length=40)
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="gold_labels")
    value = models.JSONField(null=True)
    source = models.CharField(max_length=12, choices=GoldSource.choices)
    case = models.ForeignKey(AdjudicationCase, null=True, blank=True, on_delete=models.SET_NULL, related_name="gold_labels")
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    rationale = models.TextField(blank=True)
    confidence = models.PositiveSmallIntegerField(null=True, blank=True, help_text="1 (low) to 5 (high).")
    guideline_gap = models.BooleanField(default=False)
    version = models.PositiveIntegerField(default=1)
    is_current = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item", "unit_key", "question", "version"]
        constraints = [
            models.UniqueConstraint(fields=["pool", "item", "unit_key", "question", "version"], name="unique_gold_version"),
            models.UniqueConstraint(
                fields=["pool", "item", "unit_key", "question"],
                condition=models.Q(is_current=True),
                name="one_current_gold_per_unit",
            ),
        ]
