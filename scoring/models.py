"""Score runs and scores (DESIGN.md §4). Scores are never stored as human labels."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotation.models import Item, Study


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class ScoreRun(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="score_runs")
    metric = models.CharField(max_length=40)
    metric_version = models.CharField(max_length=20)
    backend = models.CharField(max_length=20)
    model_identity = models.CharField(max_length=300, blank=True, help_text="Model name, path or endpoint and its revision.")
    parameters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.QUEUED)
    n_total = models.PositiveIntegerField(default=0)
    n_done = models.PositiveIntegerField(default=0)
    n_failed = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.metric}@{self.metric_version}/{self.backend} on {self.study.slug} ({self.status})"


class ScoreState(models.TextChoices):
    OK = "ok", "OK"
    UNDETERMINED = "undetermined", "Undetermined"
    FAILED = "failed", "Failed"


class Score(models.Model):
    """One metric value for one unit. Unique (run, item, unit_key): a retried task overwrites."""

    run = models.ForeignKey(ScoreRun, on_delete=models.CASCADE, related_name="scores")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="scores")
    unit_key = models.CharField(max_length=40, default="item")
    value = models.FloatField(null=True, blank=True)
    state = models.CharField(max_length=14, choices=ScoreState.choices)
    details = models.JSONField(default=dict, blank=True)
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "item", "unit_key"], name="unique_score_per_unit"),
            models.CheckConstraint(
                condition=~models.Q(state="ok") | models.Q(value__isnull=False), name="ok_score_has_value"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.item_id}:{self.unit_key}={self.value} ({self.state})"


class KnowledgeBase(models.Model):
    study = models.ForeignKey(Study, null=True, blank=True, on_delete=models.CASCADE, related_name="knowledge_bases")
    name = models.CharField(max_length=200)
    chunk_size = models.PositiveIntegerField(default=200, help_text="Words per passage.")
    chunk_overlap = models.PositiveIntegerField(default=40)
    embedding_model = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class Passage(models.Model):
    knowledge_base = models.ForeignKey(KnowledgeBase, on_delete=models.CASCADE, related_name="passages")
    document_id = models.CharField(max_length=200)
    index = models.PositiveIntegerField()
    text = models.TextField()
    embedding = models.BinaryField(null=True, blank=True, help_text="float32 vector, little-endian.")

    class Meta:
        ordering = ["knowledge_base", "document_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["knowledge_base", "document_id", "index"], name="unique_passage")
        ]
