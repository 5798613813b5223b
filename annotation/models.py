"""The annotation data model (docs/architecture.md).

Units are addressed by stable keys, never by text: ``item`` for the answer as a whole, ``s:<index>``
for a sentence, ``c:<rank>`` for a retrieved chunk and ``a:<aspect id>`` for an expected aspect.
Rules about one row live here; anything spanning rows or with side effects lives in services.py.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation import units
from concord.jobs import Job


class Role(models.TextChoices):
    RESEARCHER = "researcher", "Researcher"
    ADJUDICATOR = "adjudicator", "Adjudicator"
    ANNOTATOR = "annotator", "Annotator"


class Scope(models.TextChoices):
    ITEM = "item", "Item"
    SENTENCE = "sentence", "Sentence"
    CHUNK = "chunk", "Chunk"
    ASPECT = "aspect", "Aspect"


class QuestionKind(models.TextChoices):
    BINARY = "binary", "Binary"
    NOMINAL = "nominal", "Nominal"
    ORDINAL = "ordinal", "Ordinal"
    MULTILABEL = "multilabel", "Multi-label"
    TEXT = "text", "Free text"
    ALIGNMENT = "alignment", "Alignment"
    NUMBER = "number", "Number"


class ScopeClass(models.TextChoices):
    EMERGENCY = "emergency", "Emergency"
    IN_SCOPE = "in_scope", "In scope"
    OUT_OF_SCOPE = "out_of_scope", "Out of scope"
    NON_CLINICAL = "non_clinical", "Non-clinical"


class StudyQuerySet(models.QuerySet["Study"]):
    def for_user(self, user: settings.AUTH_USER_MODEL) -> StudyQuerySet:
        return self.filter(roles__user=user).distinct()

    def with_role(self, user: settings.AUTH_USER_MODEL, *roles: str) -> StudyQuerySet:
        return self.filter(roles__user=user, roles__role__in=roles).distinct()


class Study(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_studies")
    guidelines = models.TextField(blank=True, help_text="Markdown, rendered safely to annotators.")
    protocol_presets = models.JSONField(
        default=list, blank=True, help_text="Names of the presets the protocol started from."
    )
    blind_system = models.BooleanField(
        default=True, help_text="Hide which system produced each answer from annotators."
    )
    visible_metadata_fields = models.JSONField(
        default=list, blank=True,
        help_text="Item metadata keys annotators see (an allow-list): every other key is hidden from them.",
    )
    hidden_metadata_fields = models.JSONField(
        default=list, blank=True, help_text="Item metadata keys annotators never see, even when listed as visible."
    )
    independent_pools = models.BooleanField(
        default=True, help_text="An annotator may belong to at most one pool of the study."
    )
    show_scores_to_adjudicators = models.BooleanField(default=False)
    licence = models.TextField(
        blank=True, help_text="Licence and attribution of the imported data, carried into exports."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = StudyQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "studies"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class StudyRole(models.Model):
    """A person's role in one study. One person may hold several roles in a study."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="roles")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="study_roles")
    role = models.CharField(max_length=20, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "user", "role"], name="unique_study_user_role")]

    def __str__(self) -> str:
        return f"{self.user} — {self.role} in {self.study}"


class Question(models.Model):
    """One question of a study's protocol.

    ``options`` is a list of ``{"value": str, "label": str, "key": str}``; the stored label value is
    ``value``, so renaming ``label`` keeps existing labels meaningful. ``condition`` is either empty
    or ``{"question": <key>, "in": [values]}``: the question is asked only when the other answer (of
    the same unit, or of the item for item-scoped conditions) is one of those values.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="questions")
    key = models.SlugField(max_length=60)
    order = models.PositiveIntegerField(default=0)
    scope = models.CharField(max_length=10, choices=Scope.choices)
    kind = models.CharField(max_length=12, choices=QuestionKind.choices)
    prompt = models.CharField(max_length=300)
    help_text = models.TextField(blank=True)
    options = models.JSONField(default=list, blank=True)
    condition = models.JSONField(default=dict, blank=True)
    required = models.BooleanField(default=True)
    min_value = models.FloatField(null=True, blank=True)
    max_value = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["order", "id"]
        constraints = [models.UniqueConstraint(fields=["study", "key"], name="unique_question_key_per_study")]

    def __str__(self) -> str:
        return f"{self.key} ({self.scope}, {self.kind})"

    @property
    def option_values(self) -> list[str]:
        return [str(o["value"]) for o in self.options]

    @property
    def is_categorical(self) -> bool:
        return self.kind in {QuestionKind.BINARY, QuestionKind.NOMINAL, QuestionKind.ORDINAL}


class Item(models.Model):
    # No index of its own: the unique (study, external_id) constraint's index starts with it.
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items", db_index=False)
    external_id = models.CharField(max_length=200)
    question = models.TextField()
    answer = models.TextField()
    source = models.TextField(blank=True, help_text="Source document, for plain-language summaries.")
    scope_class = models.CharField(max_length=20, choices=ScopeClass.choices, blank=True)
    system = models.CharField(max_length=200, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "external_id"], name="unique_item_external_id_per_study")
        ]

    def __str__(self) -> str:
        return f"{self.study.slug}/{self.external_id}"


class Sentence(models.Model):
    """A sentence of the answer (``part='answer'``) or of the source document (``part='source'``).

    Split once at import; offsets index into the stored text, so ``text == answer[start:end]``.
    """

    # No index of its own: the unique (item, part, index) constraint's index starts with it.
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="sentences", db_index=False)
    part = models.CharField(max_length=6, default="answer", choices=[("answer", "Answer"), ("source", "Source")])
    index = models.PositiveIntegerField()
    text = models.TextField()
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()

    class Meta:
        ordering = ["item", "part", "index"]
        constraints = [models.UniqueConstraint(fields=["item", "part", "index"], name="unique_sentence_index")]

    def __str__(self) -> str:
        return f"{self.item_id}:{self.part}:{self.index}"

    @property
    def unit_key(self) -> str:
        return units.of_sentence(self.part, self.index)


class Chunk(models.Model):
    # No index of its own: the unique (item, rank) constraint's index starts with it.
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="chunks", db_index=False)
    rank = models.PositiveIntegerField(help_text="1 is the top-ranked retrieved chunk.")
    text = models.TextField()
    document_id = models.CharField(max_length=200, blank=True)
    is_labelled_target = models.BooleanField(default=False)

    class Meta:
        ordering = ["item", "rank"]
        constraints = [models.UniqueConstraint(fields=["item", "rank"], name="unique_chunk_rank")]

    def __str__(self) -> str:
        return f"{self.item_id}:c{self.rank}"

    @property
    def unit_key(self) -> str:
        return units.chunk(self.rank)


class Importance(models.TextChoices):
    MUST_HAVE = "must_have", "Must have"
    NICE_TO_HAVE = "nice_to_have", "Nice to have"


class AspectOrigin(models.TextChoices):
    REFERENCE = "reference", "Reference"
    PROPOSED = "proposed", "Proposed by an annotator"
    GENERATED = "generated", "Generated"


class AspectStatus(models.TextChoices):
    PROPOSED = "proposed", "Proposed"
    ACCEPTED = "accepted", "Accepted"
    REJECTED = "rejected", "Rejected"


class AspectQuerySet(models.QuerySet["Aspect"]):
    def accepted(self) -> AspectQuerySet:
        return self.filter(status=AspectStatus.ACCEPTED)

    def in_version(self, version: int) -> AspectQuerySet:
        """The aspect set as it stood at ``version`` of the item's aspect set."""
        return self.filter(status=AspectStatus.ACCEPTED, version__lte=version).exclude(
            retired_in_version__isnull=False, retired_in_version__lte=version
        )


class Aspect(models.Model):
    """An expected aspect of the answer. ``version`` is the aspect-set version that introduced it."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="aspects")
    text = models.TextField()
    importance = models.CharField(max_length=12, choices=Importance.choices, default=Importance.MUST_HAVE)
    origin = models.CharField(max_length=10, choices=AspectOrigin.choices, default=AspectOrigin.REFERENCE)
    status = models.CharField(max_length=10, choices=AspectStatus.choices, default=AspectStatus.ACCEPTED)
    version = models.PositiveIntegerField(default=1)
    retired_in_version = models.PositiveIntegerField(null=True, blank=True)
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="proposed_aspects"
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="decided_aspects"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = AspectQuerySet.as_manager()

    class Meta:
        ordering = ["item", "id"]

    def __str__(self) -> str:
        return self.text[:60]

    @property
    def unit_key(self) -> str:
        return units.aspect(self.pk)


class Visibility(models.TextChoices):
    NOTHING = "nothing", "Own labels only"
    AFTER_SUBMIT = "after_submit", "Others' labels after submitting (calibration)"


class Pool(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="pools")
    name = models.CharField(max_length=120)
    questions = models.ManyToManyField(Question, related_name="pools", blank=True)
    overlap = models.PositiveIntegerField(default=1, help_text="Annotators per item (k).")
    visibility = models.CharField(max_length=15, choices=Visibility.choices, default=Visibility.NOTHING)
    seed = models.BigIntegerField(default=0, help_text="Seed of the per-annotator item order.")
    reservation_minutes = models.PositiveIntegerField(default=30)
    stop_at_half_width = models.FloatField(
        null=True,
        blank=True,
        help_text="Fixed-precision rule: close the pool once the 95% interval of each headline figure is at most "
        "± this wide (docs/guide/planning-a-validation.md). Empty: never close by itself.",
    )
    closed_at = models.DateTimeField(null=True, blank=True, help_text="When the pool stopped handing out items.")
    closed_reason = models.TextField(blank=True)
    reopen_allowed = models.BooleanField(
        default=False,
        help_text="Annotators may reopen an item they submitted and change their answers (each reopening "
        "is recorded; never after they saw other annotators' labels).",
    )
    control_rate = models.FloatField(
        default=0, help_text="Share of each annotator's queue drawn from the study's control items (0 to 1)."
    )
    attention_rate = models.FloatField(
        default=0, help_text="Share of each annotator's queue drawn from attention checks (0 to 1)."
    )
    flag_below = models.FloatField(
        null=True, blank=True,
        help_text="Flag annotators whose accuracy on control items (or attention pass rate) is below this share.",
    )
    qualification_required = models.BooleanField(
        default=False, help_text="Annotators pass the study's qualification set before any real item."
    )
    qualification_pass_mark = models.FloatField(default=0.8, help_text="Share of qualification items to get right.")
    qualification_max_attempts = models.PositiveIntegerField(default=2)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "name"]
        constraints = [models.UniqueConstraint(fields=["study", "name"], name="unique_pool_name_per_study")]

    def __str__(self) -> str:
        return f"{self.study.slug}/{self.name}"


class PoolMembership(models.Model):
    """A person in a pool.

    ``study`` and ``independent`` are copied from the pool's study at insert time so that the
    database itself refuses one person in two pools of a study with independent pools.
    """

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="memberships")
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="pool_memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="pool_memberships")
    independent = models.BooleanField()
    pseudonym = models.CharField(max_length=40, help_text="Stable pseudonym used in exports and adjudication.")
    active = models.BooleanField(default=True)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["pool", "user"], name="unique_pool_member"),
            models.UniqueConstraint(
                fields=["study", "user"], condition=Q(independent=True), name="one_pool_per_study_when_independent"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.pool}"


class InvitationState(models.TextChoices):
    PENDING = "pending", "Pending"
    ACCEPTED = "accepted", "Accepted"
    DECLINED = "declined", "Declined"
    WITHDRAWN = "withdrawn", "Withdrawn"


class StudyInvitation(models.Model):
    """An invitation to join a study (a role, and a pool for an annotator) that the invited person accepts or
    declines on their home page; until they accept, they have no role and no membership.

    ``invited`` is what the researcher typed (a username or an e-mail address), shown back to them as typed.
    ``user`` is the account the invitation was bound to when it was made, and only that account may see or
    answer it. A row is written whether or not such an account exists (``user`` is then empty, and nobody can
    ever answer it), so that the researcher's list of invitations reads the same either way
    (annotation.console.services). ``updated_by`` is whoever last changed the row: the researcher who
    invited or withdrew, or the invited person who accepted or declined (the audit trail's actor).
    A pending invitation past ``expires_at`` is expired: it can no longer be answered.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="invitations")
    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, null=True, blank=True, related_name="invitations")
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.ANNOTATOR)
    invited = models.CharField(max_length=254, help_text="The username or e-mail address typed by the researcher.")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="study_invitations"
    )
    pseudonym = models.CharField(max_length=40, blank=True, help_text="Empty: the next free one when accepted.")
    state = models.CharField(max_length=10, choices=InvitationState.choices, default=InvitationState.PENDING)
    invited_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.invited} to {self.pool or self.study} ({self.state})"

    def expired(self, now: datetime) -> bool:
        return self.state == InvitationState.PENDING and self.expires_at <= now

    def status(self, now: datetime) -> str:
        """What the researcher and the invited person read: the state, or ``expired`` for a lapsed pending one."""
        return "expired" if self.expired(now) else self.state


class AssignmentStatus(models.TextChoices):
    ASSIGNED = "assigned", "Assigned"
    STARTED = "started", "Started"
    SUBMITTED = "submitted", "Submitted"
    SKIPPED = "skipped", "Skipped"
    # Closed by a researcher while it was open, with answers saved (the data manager's reassign or remove):
    # the item left this annotator's queue and its answers never change again. They stay this annotator's
    # (exports, under their pseudonym) and are never counted as submitted work, never shown to another
    # annotator, and never moved to whoever receives the item (who gets an assignment of their own).
    WITHDRAWN = "withdrawn", "Withdrawn by a researcher"


class AssignmentQuerySet(models.QuerySet["Assignment"]):
    def for_annotator(self, user: settings.AUTH_USER_MODEL) -> AssignmentQuerySet:
        return self.filter(annotator=user)

    def open(self) -> AssignmentQuerySet:
        return self.filter(status__in=[AssignmentStatus.ASSIGNED, AssignmentStatus.STARTED])

    def done(self) -> AssignmentQuerySet:
        return self.filter(status=AssignmentStatus.SUBMITTED)


class Assignment(models.Model):
    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="assignments")
    status = models.CharField(max_length=10, choices=AssignmentStatus.choices, default=AssignmentStatus.ASSIGNED)
    order_key = models.BigIntegerField(default=0, help_text="Position in the annotator's seeded random order.")
    reserved_until = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    active_seconds = models.FloatField(default=0)
    skip_reason = models.TextField(blank=True)
    reopened_count = models.PositiveIntegerField(
        default=0, help_text="How many times the annotator reopened this item after submitting it."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        ordering = ["pool", "annotator", "order_key"]
        constraints = [models.UniqueConstraint(fields=["pool", "item", "annotator"], name="unique_assignment")]
        indexes = [
            models.Index(fields=["pool", "annotator", "status", "order_key"], name="assignment_queue_idx"),
            # The data manager's status-in-a-pool filters (adjudication.data_manager) read this index only.
            models.Index(fields=["pool", "item", "status"], name="asg_pool_item_status_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} → {self.item} ({self.status})"


class PoolItemCounts(models.Model):
    """How many assignments of an item in a pool are in each state: kept by database triggers on the assignment
    table in the same transaction as every insert, status change and delete (annotation/pool_counts.py), and
    read by the data manager's "done" and "not assigned" filters, which then count one index entry per item
    instead of joining every assignment of the pool. Never written by the application."""

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="+", db_index=False)
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    n_open = models.IntegerField(default=0, help_text="Assigned or started.")
    n_submitted = models.IntegerField(default=0)
    n_skipped = models.IntegerField(default=0)
    n_withdrawn = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["pool", "item"], name="unique_pool_item_counts"),
            # A count below zero means the triggers missed a change: refused loudly, never shown.
            models.CheckConstraint(
                condition=models.Q(n_open__gte=0, n_submitted__gte=0, n_skipped__gte=0, n_withdrawn__gte=0),
                name="pool_item_counts_not_negative",
            ),
        ]
        indexes = [
            # Done: at least one submitted, nothing assigned, started or skipped (withdrawn work aside).
            models.Index(
                fields=["pool", "item"], name="pool_item_done_idx",
                condition=models.Q(n_submitted__gt=0, n_open=0, n_skipped=0),
            ),
            # Assigned: someone has the item to do or done (withdrawn work does not count).
            models.Index(
                fields=["pool", "item"], name="pool_item_assigned_idx",
                condition=models.Q(n_open__gt=0) | models.Q(n_submitted__gt=0) | models.Q(n_skipped__gt=0),
            ),
        ]


class PoolItemExclusion(models.Model):
    """An item a researcher removed from a pool (the data manager's bulk action): its open assignments
    were deleted and the pool's top-up never assigns it again. Submitted work is kept."""

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="exclusions")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="pool_exclusions")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pool", "item"], name="unique_pool_item_exclusion")]


class Label(models.Model):
    """The current value of one answer. Changes go through labels.label_save, which bumps
    ``version`` and appends a LabelHistory row in the same transaction."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="labels")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="labels")
    unit_key = models.CharField(max_length=40)
    value = models.JSONField(null=True)
    version = models.PositiveIntegerField(default=1)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assignment", "question", "unit_key"], name="unique_label_per_unit")
        ]

    def __str__(self) -> str:
        return f"{self.assignment_id}:{self.question_id}:{self.unit_key}={self.value!r}"


class LabelHistory(models.Model):
    """Append-only: one row per change of a label, never updated or deleted."""

    label = models.ForeignKey(Label, on_delete=models.PROTECT, related_name="history")
    old_value = models.JSONField(null=True)
    new_value = models.JSONField(null=True)
    old_version = models.PositiveIntegerField(null=True)
    new_version = models.PositiveIntegerField()
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField()
    undoes = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="Set on a change made by 'undo': the change it reverted (the undo is itself a new version).",
    )

    class Meta:
        ordering = ["label", "new_version"]
        verbose_name_plural = "label history"
        constraints = [models.UniqueConstraint(fields=["label", "new_version"], name="unique_label_history_version")]


class ExposureKind(models.TextChoices):
    ITEM_PAGE = "item_page", "Item page"
    API = "api", "API"
    CALIBRATION = "calibration", "Others' labels (calibration)"


class Exposure(models.Model):
    """What an annotator was shown, recorded server-side so that blinding can be audited later
    (the validation studies check that a pool never saw scores or another pool's labels)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="exposures")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=12, choices=ExposureKind.choices)
    showed_scores = models.BooleanField(default=False)
    showed_other_labels = models.BooleanField(default=False)
    showed_system = models.BooleanField(default=False)
    metadata_keys = models.JSONField(default=list, blank=True, help_text="The item metadata keys that were shown.")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["pool", "user"], name="exposure_pool_user_idx")]


class AssignmentReopening(models.Model):
    """Append-only: one row each time an annotator reopened an item they had submitted (pools that
    allow it). The labels' own history records every change made after it."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="reopenings")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    submitted_at = models.DateTimeField(null=True, help_text="When the item had been submitted before.")
    at = models.DateTimeField()

    class Meta:
        ordering = ["assignment", "at", "id"]


class ImportBatch(models.Model):
    """A record of one successful import (file name, counts, who) for provenance and exports."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="imports")
    filename = models.CharField(max_length=300)
    adapter = models.CharField(max_length=40, blank=True)
    n_items = models.PositiveIntegerField(default=0)
    n_labels = models.PositiveIntegerField(default=0)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    at = models.DateTimeField(auto_now_add=True)


class AuditEvent(models.Model):
    """One change to an audited table, written by a database trigger (annotation/audit.py).

    Triggers insert events unsealed (``seq`` null, empty hashes); ``audit.events_seal`` later gives
    each a position in the chain and ``hash = sha256(prev_hash + canonical JSON of the event)``.
    Further triggers on this table refuse any DELETE and any UPDATE other than sealing an unsealed event.
    ``actor_id`` is the acting user as the audited row itself records it (e.g. a label's
    ``updated_by``); it is deliberately not a foreign key, so deleting a user never touches the trail.
    """

    table_name = models.CharField(max_length=100)
    row_pk = models.CharField(max_length=100)
    operation = models.CharField(max_length=6)
    old_row = models.JSONField(null=True)
    new_row = models.JSONField(null=True)
    actor_id = models.BigIntegerField(null=True)
    at = models.DateTimeField()
    seq = models.BigIntegerField(null=True, unique=True)
    prev_hash = models.CharField(max_length=64, blank=True, default="")
    hash = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        indexes = [models.Index(fields=["table_name", "row_pk"], name="auditevent_row_idx")]

    def __str__(self) -> str:
        return f"{self.operation} {self.table_name}#{self.row_pk}"


class ImportIdentity(models.Model):
    """An annotator known only from imported labels: an inactive account with no usable password that
    stands for a pseudonym of one pool. The pseudonym is data; the person who imported is the actor
    (``Label.updated_by``, ``LabelHistory.actor``, the audit trail). A live annotator's account is never
    used for imported labels, and an imported pseudonym never equals a live member's pseudonym in the study.
    """

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="import_identity")
    pool = models.ForeignKey("Pool", on_delete=models.CASCADE, related_name="import_identities")
    pseudonym = models.CharField(max_length=40)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["pool", "pseudonym"], name="unique_import_identity_per_pool")
        ]

    def __str__(self) -> str:
        return f"{self.pseudonym} (imported, pool {self.pool_id})"


class PasswordChangeRequired(models.Model):
    """The person logs in with a one-time password and must choose their own before anything else.

    Deleted when they change it (annotation.accounts.views); its presence is the whole flag.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="password_change_required"
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)


class ImportJobStatus(models.TextChoices):
    UPLOADED = "uploaded", "Uploaded"
    CHECKING = "checking", "Checking (dry run)"
    INVALID = "invalid", "Has errors"
    CHECKED = "checked", "Checked, ready to import"
    IMPORTING = "importing", "Importing"
    DONE = "done", "Imported"
    FAILED = "failed", "Failed"


class ImportJob(Job):
    """One upload through the researcher console: dry run, then the real import, run by a worker.

    A ``concord.jobs.Job`` with its own states (uploaded → checking → checked or invalid; checked →
    importing → done or invalid). The file stays in storage until the import is done or refused.
    ``n_done`` / ``n_total`` are the import's own progress reports, for the console's progress bar;
    ``errors`` lists a refused file's located errors (``error`` holds the refusal's message).
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="import_jobs")
    filename = models.CharField(max_length=300)
    stored_name = models.CharField(max_length=400)
    size_bytes = models.PositiveBigIntegerField(default=0)
    status = models.CharField(max_length=10, choices=ImportJobStatus.choices, default=ImportJobStatus.UPLOADED)
    summary = models.JSONField(default=dict, blank=True)
    errors = models.JSONField(default=list, blank=True)
    batch = models.ForeignKey(ImportBatch, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta(Job.Meta):
        ordering = ["-created_at", "-id"]

    @property
    def finished(self) -> bool:
        return self.status in (ImportJobStatus.DONE, ImportJobStatus.INVALID, ImportJobStatus.FAILED)


# --- Quality controls (docs/guide/quality.md) ----------------------------------------------------


class ControlKind(models.TextChoices):
    CONTROL = "control", "Control item (known answer)"
    QUALIFICATION = "qualification", "Qualification item (known answer, shown with feedback)"
    ATTENTION = "attention", "Attention check (instructed response)"


class ControlItem(models.Model):
    """An item whose answers are known, marked by a researcher (the controls page or the import field
    ``control``). ``answers`` maps item-scoped question keys to the known value (as a label stores it).

    Annotators never learn from Concord that an item is one: the workspace, the API and the history are
    built from the item itself, never from this row (qualification items excepted: they are shown, with
    their answers as feedback, on the qualification page only, and never in a queue).
    """

    item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="control")
    kind = models.CharField(max_length=14, choices=ControlKind.choices, default=ControlKind.CONTROL)
    answers = models.JSONField(default=dict, help_text="Known answer per item-scoped question key.")
    explanation = models.TextField(blank=True, help_text="Feedback shown after a qualification answer.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item_id"]

    def __str__(self) -> str:
        return f"{self.kind}: {self.item}"


class QualificationAttempt(models.Model):
    """One attempt of one annotator at a pool's qualification set. ``passed`` is None until finished."""

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="qualification_attempts")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    number = models.PositiveIntegerField()
    pass_mark = models.FloatField()
    n_items = models.PositiveIntegerField(default=0)
    n_correct = models.PositiveIntegerField(default=0)
    n_answered = models.PositiveIntegerField(default=0)
    passed = models.BooleanField(null=True)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["pool", "user", "number"]
        constraints = [
            models.UniqueConstraint(fields=["pool", "user", "number"], name="unique_qualification_attempt")
        ]


class QualificationAnswer(models.Model):
    """One answer given during a qualification attempt (one per item; all its known questions at once)."""

    attempt = models.ForeignKey(QualificationAttempt, on_delete=models.CASCADE, related_name="answers")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    values = models.JSONField(default=dict)
    correct = models.BooleanField()
    at = models.DateTimeField()

    class Meta:
        ordering = ["attempt", "at", "id"]
        constraints = [models.UniqueConstraint(fields=["attempt", "item"], name="unique_qualification_answer")]
