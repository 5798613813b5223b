"""Disagreement cases and gold labels with provenance (DESIGN.md §4)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotation.models import Item, Label, Pool, Question, Study


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
    adjudicator_name = models.CharField(
        max_length=150, blank=True, help_text="Adjudicator as recorded by an imported export (no account here)."
    )
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


class ConsensusRule(models.Model):
    """How a pool turns agreeing labels of one question into gold without an adjudicator.

    Unanimity always makes gold. ``majority`` additionally lets a strict majority (more than half
    of the submitted annotators, at least three of them) make gold with source ``majority``;
    services.consensus_rule_set refuses it for pools with overlap below three.
    """

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="consensus_rules")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="consensus_rules")
    majority = models.BooleanField(default=False)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pool", "question"], name="unique_consensus_rule")]


class ExportFormat(models.TextChoices):
    JSONL = "jsonl", "JSON Lines"
    CSV = "csv", "CSV (long format)"
    HF = "hf", "Hugging Face datasets folder"


class ExportStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class ExportJob(models.Model):
    """One export of a study. ``path`` is the file written (for ``hf``, a zip of the folder)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="export_jobs")
    format = models.CharField(max_length=5, choices=ExportFormat.choices)
    status = models.CharField(max_length=8, choices=ExportStatus.choices, default=ExportStatus.QUEUED)
    n_total = models.PositiveIntegerField(default=0)
    n_done = models.PositiveIntegerField(default=0)
    path = models.CharField(max_length=500, blank=True)
    size_bytes = models.BigIntegerField(default=0)
    error = models.TextField(blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    @property
    def progress(self) -> float:
        return (self.n_done / self.n_total) if self.n_total else (1.0 if self.status == ExportStatus.DONE else 0.0)


class ExportDownload(models.Model):
    """Audit: who downloaded which export, and when. The content itself is never recorded."""

    job = models.ForeignKey(ExportJob, on_delete=models.CASCADE, related_name="downloads")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True)


class ReportJobKind(models.TextChoices):
    AGREEMENT = "agreement", "Agreement"
    VALIDITY = "validity", "Metric vs human"


class ReportJobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class ReportJob(models.Model):
    """A bootstrap of one report (agreement or metric vs human), computed by a worker.

    Unique on (study, params_hash): the same report with the same resample count and seed is computed
    once; asking again returns the existing job, and a redelivered task overwrites its own result.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="report_jobs")
    kind = models.CharField(max_length=10, choices=ReportJobKind.choices)
    params = models.JSONField(default=dict)
    params_hash = models.CharField(max_length=40)
    status = models.CharField(max_length=8, choices=ReportJobStatus.choices, default=ReportJobStatus.QUEUED)
    n_done = models.PositiveIntegerField(default=0)
    n_total = models.PositiveIntegerField(default=0)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["study", "params_hash"], name="unique_report_job_params")]

    @property
    def progress(self) -> float:
        if self.status == ReportJobStatus.DONE:
            return 1.0
        return (self.n_done / self.n_total) if self.n_total else 0.0
