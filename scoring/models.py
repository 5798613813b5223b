"""Score runs and scores (docs/architecture.md). Scores are never stored as human labels."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation import units
from annotation.models import Item, Study
from concord.jobs import Job


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
    model_identity = models.CharField(
        max_length=300, blank=True, help_text="Model name, path or endpoint and its revision."
    )
    parameters = models.JSONField(default=dict, blank=True)
    backend_options = models.JSONField(
        default=dict, blank=True, help_text="Options given to the backend (model, samples...)."
    )
    knowledge_base = models.ForeignKey(
        "KnowledgeBase", null=True, blank=True, on_delete=models.PROTECT, related_name="runs",
        help_text="Passages retrieved for metrics that verify against outside knowledge (icat, plainqafact).",
    )
    retrieval_alpha = models.FloatField(default=0.5, help_text="Weight of the dense ranking in hybrid retrieval.")
    batch_size = models.PositiveIntegerField(default=32)
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.QUEUED)
    n_total = models.PositiveIntegerField(default=0)
    n_done = models.PositiveIntegerField(default=0)
    n_failed = models.PositiveIntegerField(default=0)
    # Requests sent to an LLM endpoint and the tokens its answers reported, counted across every worker
    # (scoring.llm_runs.RunBudget: what the backend options max_requests / max_run_tokens bound).
    llm_requests = models.PositiveBigIntegerField(default=0)
    llm_tokens = models.PositiveBigIntegerField(default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # A running run whose fan-out (scoring.services.score_run_fan_out_chunks) has not yet read every item: it
    # is not done, even with every batch so far finished; the recovery re-sends its fan-out.
    fanning_out = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(batch_size__gte=1), name="run_batch_size_positive"),
            models.CheckConstraint(
                condition=Q(retrieval_alpha__gte=0) & Q(retrieval_alpha__lte=1), name="run_alpha_in_unit_interval"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.metric}@{self.metric_version}/{self.backend} on {self.study.slug} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in {RunStatus.QUEUED, RunStatus.RUNNING}

    @property
    def n_finished(self) -> int:
        return self.n_done + self.n_failed

    @property
    def percent(self) -> int:
        return int(100 * self.n_finished / self.n_total) if self.n_total else 0


class BatchStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    SKIPPED = "skipped", "Skipped"


class ScoreBatch(models.Model):
    """A slice of a run's items, the unit of work of one Celery task.

    Only the holder of an unexpired lease (``leased_by`` / ``lease_until``) writes scores for the
    batch; every write re-checks the lease in the same transaction, so a redelivered task whose twin
    is still alive waits instead of writing twice.
    """

    run = models.ForeignKey(ScoreRun, on_delete=models.CASCADE, related_name="batches")
    index = models.PositiveIntegerField()
    item_ids = models.JSONField(default=list)
    status = models.CharField(max_length=10, choices=BatchStatus.choices, default=BatchStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    leased_by = models.CharField(max_length=100, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="unique_batch_per_run")]
        indexes = [models.Index(fields=["run", "status"], name="batch_run_status_idx")]

    def __str__(self) -> str:
        return f"run {self.run_id} batch {self.index} ({self.status})"


class ScoreState(models.TextChoices):
    OK = "ok", "OK"
    UNDETERMINED = "undetermined", "Undetermined"
    FAILED = "failed", "Failed"


class Score(models.Model):
    """One metric value for one unit. Unique (run, item, unit_key): a retried task overwrites."""

    run = models.ForeignKey(ScoreRun, on_delete=models.CASCADE, related_name="scores")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="scores")
    unit_key = models.CharField(max_length=40, default=units.ITEM)
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
            models.CheckConstraint(condition=Q(state__in=ScoreState.values), name="score_state_known"),
            # PostgreSQL stores NaN and infinities in a float column; Concord never does. NaN compares
            # greater than every number there, so the bounds refuse it as well as +-inf.
            models.CheckConstraint(
                condition=Q(value__isnull=True) | (Q(value__gt=-1e300) & Q(value__lt=1e300)),
                name="score_value_finite",
            ),
        ]
        indexes = [models.Index(fields=["run", "state"], name="score_run_state_idx")]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.item_id}:{self.unit_key}={self.value} ({self.state})"

    @property
    def failure_kind(self) -> str:
        """What kind of failure a failed score records (the llm backend names it: malformed, refused, truncated,
        budget, http; else the error's type), for the run page's list of failed items."""
        details = self.details if isinstance(self.details, dict) else {}
        return str(details.get("failure") or details.get("error_type") or "error")


class KnowledgeBase(models.Model):
    study = models.ForeignKey(Study, null=True, blank=True, on_delete=models.CASCADE, related_name="knowledge_bases")
    name = models.CharField(max_length=200)
    chunk_size = models.PositiveIntegerField(default=200, help_text="Words per passage.")
    chunk_overlap = models.PositiveIntegerField(default=40)
    embedding_model = models.CharField(max_length=200, blank=True)
    version = models.PositiveIntegerField(default=0, help_text="Bumped on every upload; keys the in-process indexes.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(chunk_size__gte=1), name="kb_chunk_size_positive"),
            models.CheckConstraint(condition=Q(chunk_overlap__lt=models.F("chunk_size")), name="kb_overlap_below_size"),
        ]

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


class JudgeTask(models.TextChoices):
    SUPPORTS = "supports", "Supports (claim vs evidence)"
    INFORMATIVE = "informative", "Information-bearing sentence"
    RELEVANCE = "relevance", "Relevance (passage vs question)"
    KIND = "kind", "Sentence kind (simplification vs elaboration, sentence vs source)"


class TrainedJudge(models.Model):
    """A judge trained on labelled examples (a study's gold, or a labelled file) for the ``learned`` backend.

    ``study`` owns it: researchers of that study see, share and retire it. A study scores with its own
    judges and with judges explicitly shared with it (``shared_with``); nothing else, whatever a run's
    options say. A judge trained from a file on the command line has no owning study until shared.

    Names are per study, so that a study's researchers cannot learn from a refused name that another study
    has a judge of that name: unique among a study's own judges, and among the judges without a study
    (constraints below); ``scoring.judges.services`` also keeps them unique among the judges a study may use
    (its own and those shared with it), and every lookup by name is scoped to one study.
    """

    name = models.CharField(max_length=100)
    study = models.ForeignKey(
        Study, null=True, blank=True, on_delete=models.CASCADE, related_name="trained_judges",
        help_text="The owning study (None: registered on the command line from a file).",
    )
    task = models.CharField(max_length=12, choices=JudgeTask.choices)
    source_kind = models.CharField(max_length=5, choices=[("study", "Study gold"), ("file", "Labelled file")])
    source_study = models.ForeignKey(
        Study, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="The study whose gold it was trained on (cross-fitted when scoring this study).",
    )
    source_question = models.CharField(max_length=100, blank=True)
    source_positive = models.JSONField(default=list, blank=True, help_text="Gold values counted as positive.")
    source_file_name = models.CharField(max_length=255, blank=True)
    source_file_sha256 = models.CharField(max_length=64, blank=True)
    data_hash = models.CharField(max_length=64)
    model_type = models.CharField(max_length=20)
    feature_set = models.CharField(max_length=20)
    embedding_identity = models.CharField(max_length=300, blank=True)
    n = models.PositiveIntegerField()
    n_positive = models.PositiveIntegerField()
    cv = models.JSONField(default=dict, help_text="Cross-validated figures of the kept model.")
    comparison = models.JSONField(default=list, blank=True, help_text="CV figures of every candidate compared.")
    path = models.CharField(max_length=500, help_text="Artifact directory under VAR_DIR.")
    trained_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    trained_at = models.DateTimeField(auto_now_add=True)
    retired_at = models.DateTimeField(null=True, blank=True)
    retired_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    shared_with = models.ManyToManyField(Study, blank=True, related_name="judges_shared_with")

    class Meta:
        ordering = ["-trained_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(task__in=JudgeTask.values), name="judge_task_known"),
            models.CheckConstraint(condition=Q(n_positive__lte=models.F("n")), name="judge_positives_within_n"),
            models.UniqueConstraint(fields=["study", "name"], name="judge_name_unique_in_study"),
            models.UniqueConstraint(
                fields=["name"], condition=Q(study__isnull=True), name="judge_name_unique_without_study"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.task})"

    @property
    def is_retired(self) -> bool:
        return self.retired_at is not None

    @property
    def source_label(self) -> str:
        if self.source_kind == "study":
            slug = self.source_study.slug if self.source_study else "(deleted study)"
            return f"study {slug}, question {self.source_question}"
        return f"file {self.source_file_name} sha256:{self.source_file_sha256[:12]}"


class JudgeTrainJob(Job):
    """Training a judge from a study's gold for a researcher who waits (console or API)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="judge_train_jobs")
    name = models.CharField(max_length=100)
    question_key = models.CharField(max_length=100)
    task = models.CharField(max_length=12, choices=JudgeTask.choices)
    positive = models.JSONField(default=list, blank=True)
    options = models.JSONField(default=dict, blank=True, help_text="folds, model types, feature sets, epochs.")
    judge = models.ForeignKey(TrainedJudge, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta(Job.Meta):
        pass


class LLMAnswer(models.Model):
    """A valid answer of the LLM endpoint to one prompt, kept per study (``scoring.llm_runs``): the same prompt in a
    later run of the study is answered from here without a request. ``key`` is the sha256 of the endpoint, model,
    temperature, JSON mode, token limit, messages and sample number (``LLMBackend._cache_key``); the prompt's text
    is not kept. Deleted with its study."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=64)
    content = models.TextField()
    model = models.CharField(max_length=200)
    prompt = models.CharField(max_length=40)
    prompt_sha256 = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "key"], name="llm_answer_unique_per_study")]
