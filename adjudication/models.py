"""Disagreement cases and gold labels with provenance."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotation.models import Item, Label, Pool, Question, Study
from concord.jobs import Job, JobStatus


class CaseStatus(models.TextChoices):
    OPEN = "open", "Open"
    RESOLVED = "resolved", "Resolved"
    UNRESOLVED = "unresolved", "Unresolved"
    WITHDRAWN = "withdrawn", "Withdrawn (the annotators agreed after reopening)"


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
    case = models.ForeignKey(
        AdjudicationCase, null=True, blank=True, on_delete=models.SET_NULL, related_name="gold_labels"
    )
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
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
            models.UniqueConstraint(
                fields=["pool", "item", "unit_key", "question", "version"], name="unique_gold_version"
            ),
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


ExportStatus = JobStatus


class ExportJob(Job):
    """One export of a study. ``path`` is the file written (for ``hf``, a zip of the folder)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="export_jobs")
    format = models.CharField(max_length=5, choices=ExportFormat.choices)
    path = models.CharField(max_length=500, blank=True)
    size_bytes = models.BigIntegerField(default=0)
    # What the export is limited to (adjudication.exports.filters.ExportFilters): gold only, pools, questions.
    filters = models.JSONField(default=dict, blank=True)


class ExportDownload(models.Model):
    """Audit: who downloaded which export, and when. The content itself is never recorded."""

    job = models.ForeignKey(ExportJob, on_delete=models.CASCADE, related_name="downloads")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True)


class ReportJobKind(models.TextChoices):
    AGREEMENT = "agreement", "Agreement"
    VALIDITY = "validity", "Metric vs human"
    RATERS = "raters", "Model as rater"
    OUTCOME = "outcome", "Outcome prediction"
    PLANNING = "planning", "Planning"


ReportJobStatus = JobStatus


class ReportJob(Job):
    """A slow report computed by a worker: a bootstrap (agreement, metric vs human, model as rater), an
    outcome cross-validation or a planning simulation (see adjudication.report_jobs).

    Unique on (study, params_hash): the same report with the same resample count and seed is computed
    once; asking again returns the existing job, and a redelivered task overwrites its own result.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="report_jobs")
    kind = models.CharField(max_length=10, choices=ReportJobKind.choices)
    params = models.JSONField(default=dict)
    params_hash = models.CharField(max_length=40)
    result = models.JSONField(null=True, blank=True)

    class Meta(Job.Meta):
        constraints = [models.UniqueConstraint(fields=["study", "params_hash"], name="unique_report_job_params")]


class ValidationTemplate(models.TextChoices):
    ASTRID = "astrid", "ASTRID: conversational faithfulness vs perceived faithfulness"
    ICAT = "icat", "ICAT: coverage under the original and the expanded aspect set"
    PUBHEALTH = "pubhealth", "PubHealthBench: single-target vs multi-label relevance"
    PLAINQAFACT = "plainqafact", "PlainQAFact: explanation-only AUC, kind-aware vs source-only"


class ValidationTargetMode(models.TextChoices):
    GOLD = "gold", "Gold labels of pool B"
    MAJORITY = "majority", "Majority of pool B"
    PER_ANNOTATOR = "per_annotator", "Each annotator of pool B separately"


class ValidationStatus(models.TextChoices):
    READY = "ready", "Ready to run"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class ValidationStudy(models.Model):
    """A metric (a score run, or a measure derived from pool A's labels) against a target (a question
    answered by pool B), with pool B's independence and blinding checked (adjudication.validation.checks).

    ``checks`` are recorded at creation and again at each run. A study whose blocking checks fail is
    only created when the researcher explicitly chose to run it anyway: ``not_independent`` is then
    true and stamped on every output (page, downloads, API).
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="validation_studies")
    name = models.CharField(max_length=200)
    template = models.CharField(max_length=12, choices=ValidationTemplate.choices)
    metric_run = models.ForeignKey(
        "scoring.ScoreRun",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The automated metric (e.g. a cf, icat, rubric or plainqafact run).",
    )
    compare_run = models.ForeignKey(
        "scoring.ScoreRun",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The metric it is compared with, paired (rf for ASTRID, a source-only run for PlainQAFact).",
    )
    metric_pool = models.ForeignKey(
        Pool,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Pool A, whose labels give a human-derived measure (human CF, human aspect coverage).",
    )
    metric_rater = models.CharField(
        max_length=60,
        blank=True,
        default="gold",
        help_text="Pool A's rater for the measure: gold, majority or a pseudonym.",
    )
    target_pool = models.ForeignKey(Pool, on_delete=models.PROTECT, related_name="+", help_text="Pool B.")
    target_question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="+")
    target_mode = models.CharField(
        max_length=14, choices=ValidationTargetMode.choices, default=ValidationTargetMode.MAJORITY
    )
    positive = models.CharField(max_length=60, blank=True)
    parameters = models.JSONField(default=dict, blank=True, help_text="n_boot, seed, k (retrieval cut-off).")
    checks = models.JSONField(default=list, blank=True)
    checks_passed = models.BooleanField(default=False)
    not_independent = models.BooleanField(default=False)
    override_reason = models.TextField(blank=True)
    status = models.CharField(max_length=8, choices=ValidationStatus.choices, default=ValidationStatus.READY)
    results = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    run_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "validation studies"

    def __str__(self) -> str:
        return f"{self.study.slug}: {self.name}"


class BulkActionKind(models.TextChoices):
    REASSIGN = "reassign", "Reassign open assignments to another member"
    REMOVE = "remove", "Remove from the pool"
    REQUEUE = "requeue", "Re-queue skipped assignments"


class BulkAction(models.Model):
    """The audit row of one bulk action of the data manager: who did what to which items, when.
    Audited (annotation.audit) like every other change a researcher makes."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="bulk_actions")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    action = models.CharField(max_length=10, choices=BulkActionKind.choices)
    pool = models.ForeignKey(Pool, null=True, on_delete=models.SET_NULL, related_name="+")
    details = models.JSONField(default=dict, blank=True)
    item_ids = models.JSONField(default=list, help_text="External ids of the items acted on.")
    n_items = models.PositiveIntegerField(default=0)
    n_assignments = models.PositiveIntegerField(default=0)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at", "-id"]


class SampleDesign(models.TextChoices):
    UNIFORM = "uniform", "Uniform: a simple random sample of n items"
    PROBABILITY = "probability", "By the metric's uncertainty: each item drawn with its own probability"


class PoolSample(models.Model):
    """The sample of a score run's population that a pool labels, drawn at random and recorded before any
    item is handed out, so that estimates (adjudication.analysis.estimates) can rest on it.

    ``uniform``: ``n`` of the ``population`` items drawn without replacement (numpy's ``default_rng(seed)``),
    each with inclusion probability n/N. ``probability``: each item drawn independently with its recorded
    probability (``adjudication.stats.ppi.sampling_probabilities`` over √(f·(1 − f)) of the run's values,
    at least ``floor`` × n/N), n the expected number of labels. The pool hands out only the drawn items (the
    others are excluded from it); one sample per pool, never redrawn.
    """

    pool = models.OneToOneField(Pool, on_delete=models.CASCADE, related_name="sample")
    run = models.ForeignKey("scoring.ScoreRun", on_delete=models.PROTECT, related_name="pool_samples")
    design = models.CharField(max_length=12, choices=SampleDesign.choices)
    n = models.PositiveIntegerField(help_text="Items to draw (uniform) or expected to be drawn (probability).")
    seed = models.BigIntegerField()
    floor = models.FloatField(default=0.1, help_text="Lowest probability, as a share of the uniform rate n/N.")
    population = models.PositiveIntegerField(help_text="Items of the run with an ok item-level value (N).")
    n_drawn = models.PositiveIntegerField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(n__gte=1), name="pool_sample_n_positive"),
            models.CheckConstraint(
                condition=models.Q(floor__gt=0) & models.Q(floor__lte=1), name="pool_sample_floor_in_unit_interval"
            ),
        ]


class PoolSampleItem(models.Model):
    """One item of the population a sample was drawn from: its inclusion probability and whether it was drawn."""

    sample = models.ForeignKey(PoolSample, on_delete=models.CASCADE, related_name="items")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    probability = models.FloatField()
    drawn = models.BooleanField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["sample", "item"], name="unique_pool_sample_item"),
            models.CheckConstraint(
                condition=models.Q(probability__gt=0) & models.Q(probability__lte=1),
                name="pool_sample_probability_in_unit_interval",
            ),
        ]
