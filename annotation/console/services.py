"""Services of the researcher console: studies, their protocol, pools, people and accounts.

Every function here is a domain write, keyword-only, taking the acting user explicitly. Each one
either completes inside one transaction or raises a ``concord.errors`` DomainError and changes
nothing. The console's htmx views and its REST API call these same functions.

Three rules recur:

* Labels are never lost or silently re-interpreted. A question that already has labels may only be
  changed in ways that keep every stored value meaningful (its option *labels* may be renamed, its
  keyboard keys and help changed, unused options of an unordered scale removed); anything else is
  refused with the reason. People who leave a pool or a study keep their past labels: their
  membership is deactivated, never deleted, once they have started work.
* Nobody changes their own role or their own pool: a researcher cannot quietly make themselves an
  annotator of a blinded pool, nor remove the last researcher of a study.
* Nobody is put into a study who is not in it already: a name (or address) outside the study gets an
  invitation that its person accepts or declines, and the researcher's answer does not tell whether an
  account of that name exists (see "Adding people by name" below).
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.tokens import default_token_generator
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.db.models import Max, ProtectedError, Q
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.text import slugify

from annotation.markdown import guidelines_check
from annotation.models import (
    Assignment,
    AssignmentStatus,
    InvitationState,
    Label,
    PasswordChangeRequired,
    Pool,
    PoolMembership,
    Question,
    QuestionKind,
    Role,
    Study,
    StudyInvitation,
    StudyRole,
    Visibility,
)
from annotation.presets import (
    KINDS_WITH_OPTIONS,
    PresetError,
    Spec,
    assign_keyboard_keys,
    parse_preset_names,
    validate_specs,
)
from annotation.protocols import study_protocol_apply
from annotation.pseudonyms import pseudonym_keys
from annotation.services import pool_assign_items
from concord.errors import Conflict, Forbidden, NotFound, ValidationFailed

User = get_user_model()

_QUESTION_FIELDS = (
    "key",
    "scope",
    "kind",
    "prompt",
    "help_text",
    "options",
    "condition",
    "required",
    "min_value",
    "max_value",
)
_METADATA_KEY = re.compile(r"^[A-Za-z0-9_.\-]{1,80}$")
_USERNAME = re.compile(r"^[\w.@+-]{3,150}$")
# What may be typed to name an existing account (Django's own username characters).
_TYPED_USERNAME = re.compile(r"^[\w.@+-]{1,150}$")
# Statuses that mean the annotator has opened the item: they have seen it, and may have labels on it (a
# withdrawn assignment holds answers: the data manager deletes the ones that hold none).
_TOUCHED = [AssignmentStatus.STARTED, AssignmentStatus.SUBMITTED, AssignmentStatus.SKIPPED, AssignmentStatus.WITHDRAWN]


# --- Concurrent edits -----------------------------------------------------------------------


def study_fingerprint(study: Study) -> str:
    return _fingerprint(
        {
            f: getattr(study, f)
            for f in (
                "name", "guidelines", "blind_system", "independent_pools", "hidden_metadata_fields",
                "visible_metadata_fields",
            )
        }
    )


def question_fingerprint(question: Question) -> str:
    return _fingerprint({field: getattr(question, field) for field in _QUESTION_FIELDS})


def pool_fingerprint(pool: Pool) -> str:
    keys = sorted(pool.questions.values_list("key", flat=True))
    return _fingerprint({
        "name": pool.name, "overlap": pool.overlap, "visibility": pool.visibility, "questions": keys,
        "reopen_allowed": pool.reopen_allowed,
    })


def _fingerprint(state: dict[str, Any]) -> str:
    """A short digest of what an editor saw; saving with a stale one is refused instead of overwriting."""
    return hashlib.sha256(json.dumps(state, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _check_base(current: str, base: str | None, what: str) -> None:
    if base and base != current:
        raise Conflict(f"{what} was changed by someone else since you opened it; reload to see the new version")


# --- Studies --------------------------------------------------------------------------------


def _unique_slug(name: str) -> str:
    base = slugify(name)[:60] or "study"
    slug, n = base, 2
    while Study.objects.filter(slug=slug).exists():
        slug, n = f"{base}-{n}", n + 1
    return slug


def _clean_hidden_fields(fields: Iterable[str], *, what: str = "hidden") -> list[str]:
    cleaned: list[str] = []
    for raw in fields:
        name = str(raw).strip()
        if not name:
            continue
        if not _METADATA_KEY.match(name):
            raise ValidationFailed(f"{what} metadata field {name!r} is not a metadata key (letters, digits, _ . -)")
        if name not in cleaned:
            cleaned.append(name)
    return cleaned


def study_create(
    *,
    owner: AbstractBaseUser,
    name: str,
    presets: list[str],
    slug: str = "",
    guidelines: str = "",
    blind_system: bool = True,
    independent_pools: bool = True,
    hidden_metadata_fields: Iterable[str] = (),
) -> Study:
    """A new study owned by ``owner`` (who becomes its researcher) with the protocol of ``presets``."""
    name = name.strip()
    if not name:
        raise ValidationFailed("a study needs a name")
    try:
        parse_preset_names(presets)
    except PresetError as exc:
        raise ValidationFailed(str(exc)) from None
    slug = slug.strip()
    if slug and slugify(slug) != slug:
        raise ValidationFailed(f"slug {slug!r} may hold only lower-case letters, digits and hyphens")
    hidden = _clean_hidden_fields(hidden_metadata_fields)
    guidelines_check(guidelines)
    with transaction.atomic():
        if slug and Study.objects.filter(slug=slug).exists():
            raise Conflict(f"a study with slug {slug!r} already exists")
        same_name = Study.objects.filter(owner=owner, name__iexact=name).values_list("slug", flat=True).first()
        if same_name is not None:
            raise Conflict(f"you already have a study named {name!r} (at {same_name}): give this one another name")
        study = Study.objects.create(
            name=name,
            slug=slug or _unique_slug(name),
            owner=owner,
            guidelines=guidelines,
            blind_system=blind_system,
            independent_pools=independent_pools,
            hidden_metadata_fields=hidden,
        )
        StudyRole.objects.create(study=study, user=owner, role=Role.RESEARCHER)
        study_protocol_apply(study=study, presets=presets)
    return study


def study_update(
    *,
    study: Study,
    actor: AbstractBaseUser,
    name: str | None = None,
    guidelines: str | None = None,
    blind_system: bool | None = None,
    independent_pools: bool | None = None,
    hidden_metadata_fields: Iterable[str] | None = None,
    visible_metadata_fields: Iterable[str] | None = None,
    base: str | None = None,
) -> Study:
    """Change a study's name, guidelines or blinding settings.

    ``base`` is the ``study_fingerprint`` the editor saw; a stale one is refused with Conflict.

    Turning ``independent_pools`` on is refused while someone belongs to two pools of the study;
    the flag is copied onto every membership so that the database keeps enforcing it.
    """
    if guidelines is not None and guidelines != study.guidelines:
        guidelines_check(guidelines)
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)
        _check_base(study_fingerprint(study), base, "the study's settings")
        if name is not None:
            if not name.strip():
                raise ValidationFailed("a study needs a name")
            study.name = name.strip()
        if guidelines is not None:
            study.guidelines = guidelines
        if blind_system is not None:
            study.blind_system = blind_system
        if hidden_metadata_fields is not None:
            study.hidden_metadata_fields = _clean_hidden_fields(hidden_metadata_fields)
        if visible_metadata_fields is not None:
            study.visible_metadata_fields = _clean_hidden_fields(visible_metadata_fields, what="visible")
        if independent_pools is not None and independent_pools != study.independent_pools:
            if independent_pools:
                doubled = _people_in_several_pools(study)
                if doubled:
                    raise Conflict(
                        "independent pools cannot be switched on while these people belong to several pools: "
                        + ", ".join(doubled),
                        details={"people": doubled},
                    )
            study.independent_pools = independent_pools
            PoolMembership.objects.filter(study=study).update(independent=independent_pools)
        study.save()
    return study


def _people_in_several_pools(study: Study) -> list[str]:
    seen: dict[int, str] = {}
    doubled: list[str] = []
    for user_id, username in PoolMembership.objects.filter(study=study).values_list("user_id", "user__username"):
        if user_id in seen and username not in doubled:
            doubled.append(username)
        seen[user_id] = username
    return sorted(doubled)


# --- Protocol -------------------------------------------------------------------------------


def _spec_of(question: Question) -> Spec:
    return {field: getattr(question, field) for field in _QUESTION_FIELDS}


def _clean_spec(raw: dict[str, Any]) -> Spec:
    """Normalise one question spec from a form or a JSON body into the shape presets use."""
    spec: Spec = {field: raw.get(field) for field in _QUESTION_FIELDS}
    spec["key"] = str(spec["key"] or "").strip()
    if not spec["key"] or slugify(spec["key"]).replace("-", "_") != spec["key"]:
        raise ValidationFailed(f"question key {spec['key']!r} must be lower-case letters, digits and underscores")
    spec["prompt"] = str(spec["prompt"] or "").strip()
    if not spec["prompt"]:
        raise ValidationFailed(f"question {spec['key']!r} needs a prompt")
    spec["help_text"] = str(spec["help_text"] or "")
    spec["required"] = True if spec["required"] is None else bool(spec["required"])
    options = spec["options"] or []
    if not isinstance(options, list):
        raise ValidationFailed(f"question {spec['key']!r}: options must be a list")
    cleaned_options = []
    for option in options:
        if not isinstance(option, dict) or not str(option.get("value", "")).strip():
            raise ValidationFailed(f"question {spec['key']!r}: every option needs a value")
        value = str(option["value"]).strip()
        cleaned_options.append(
            {
                "value": value,
                "label": str(option.get("label") or value).strip(),
                "key": str(option.get("key") or "").strip(),
            }
        )
    for option in cleaned_options:
        if len(option["key"]) > 1:
            raise ValidationFailed(f"question {spec['key']!r}: keyboard key {option['key']!r} must be one character")
    spec["options"] = cleaned_options
    condition = spec["condition"] or {}
    if not isinstance(condition, dict):
        raise ValidationFailed(f"question {spec['key']!r}: condition must be an object {{question, in}}")
    if condition:
        values = condition.get("in") or []
        if isinstance(values, str):
            values = [values]
        condition = {"question": str(condition.get("question") or "").strip(), "in": [str(v) for v in values]}
    spec["condition"] = condition
    for bound in ("min_value", "max_value"):
        if spec[bound] in ("", None):
            spec[bound] = None
        else:
            try:
                spec[bound] = float(spec[bound])
            except (TypeError, ValueError):
                raise ValidationFailed(f"question {spec['key']!r}: {bound} must be a number") from None
    if spec["min_value"] is not None and spec["max_value"] is not None and spec["min_value"] >= spec["max_value"]:
        raise ValidationFailed(f"question {spec['key']!r}: min_value must be below max_value")
    if spec["kind"] not in KINDS_WITH_OPTIONS and spec["options"]:
        raise ValidationFailed(f"question {spec['key']!r}: kind {spec['kind']} takes no options")
    return spec


def _validate_protocol(specs: list[Spec]) -> None:
    try:
        validate_specs(specs)
    except PresetError as exc:
        raise ValidationFailed(str(exc)) from None
    # validate_specs checks each condition's target; a chain of conditions must also end somewhere.
    by_key = {s["key"]: s for s in specs}
    for spec in specs:
        seen = {spec["key"]}
        cond = spec["condition"]
        while cond:
            target = cond["question"]
            if target in seen:
                raise ValidationFailed(f"question {spec['key']!r}: its conditions form a cycle through {target!r}")
            seen.add(target)
            cond = by_key[target]["condition"]


def _fill_keyboard_keys(spec: Spec, others: list[Spec]) -> None:
    """Give options without a key the next free key of the scope, leaving the ones the researcher chose."""
    taken = {o["key"] for s in others if s["scope"] == spec["scope"] for o in s["options"] if o["key"]}
    taken |= {o["key"] for o in spec["options"] if o["key"]}
    missing = [o for o in spec["options"] if not o["key"]]
    if not missing:
        return
    probe = {"scope": spec["scope"], "options": missing, "key": spec["key"]}
    try:
        assign_keyboard_keys([probe], taken={spec["scope"]: taken})
    except PresetError as exc:
        raise ValidationFailed(str(exc)) from None


def _used_values(question: Question) -> dict[str, int]:
    """How many stored labels of ``question`` hold each value (multi-label values counted per element)."""
    counts: dict[str, int] = {}
    for value in Label.objects.filter(question=question).values_list("value", flat=True).iterator():
        for v in value if isinstance(value, list) else [value]:
            if v is None:
                continue
            counts[str(v)] = counts.get(str(v), 0) + 1
    return counts


def _check_label_preserving(question: Question, new: Spec) -> None:
    """Refuse, with the reason, any change that would make existing labels of ``question`` mean something else."""
    n_labels = Label.objects.filter(question=question).count()
    if not n_labels:
        return
    why = f"{question.key!r} already has {n_labels} label{'s' if n_labels != 1 else ''}"
    for field in ("key", "scope", "kind"):
        if new[field] != getattr(question, field):
            raise Conflict(f"{why}; its {field} cannot change (add a new question instead)")
    if (new["condition"] or {}) != (question.condition or {}):
        raise Conflict(f"{why}; changing its condition would change which of those answers should exist")
    old_values = question.option_values
    new_values = [o["value"] for o in new["options"]]
    if question.kind in (QuestionKind.BINARY, QuestionKind.ORDINAL) and new_values != old_values:
        raise Conflict(
            f"{why}; the values of a {question.kind} scale and their order are fixed once labelled "
            "(rename an option's label instead: the stored value stays)"
        )
    used = _used_values(question)
    dropped = [v for v in old_values if v not in new_values and used.get(v)]
    if dropped:
        detail = ", ".join(f"{v!r} ({used[v]} label{'s' if used[v] != 1 else ''})" for v in dropped)
        raise Conflict(f"{why}; options still in use cannot be removed: {detail}")
    if question.kind == QuestionKind.NUMBER:
        lo, hi = new["min_value"], new["max_value"]
        outside = [
            v
            for v in used
            if _as_float(v) is not None
            and ((lo is not None and _as_float(v) < lo) or (hi is not None and _as_float(v) > hi))
        ]
        if outside:
            raise Conflict(f"{why}; the new range would exclude stored values {sorted(outside)[:5]}")


def _as_float(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def question_add(*, study: Study, actor: AbstractBaseUser, spec: dict[str, Any]) -> Question:
    """Append a question to the protocol; options without a keyboard key get the next free one."""
    new = _clean_spec(spec)
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        existing = [_spec_of(q) for q in study.questions.all()]
        if any(s["key"] == new["key"] for s in existing):
            raise Conflict(f"question key {new['key']!r} already exists in this study")
        _fill_keyboard_keys(new, existing)
        _validate_protocol([*existing, new])
        order = (study.questions.aggregate(m=Max("order"))["m"] or 0) + 1
        return Question.objects.create(study=study, order=order, **new)


def question_update(
    *, question: Question, actor: AbstractBaseUser, spec: dict[str, Any], base: str | None = None
) -> Question:
    """Change a question. Fields absent from ``spec`` keep their value.

    A renamed key is followed by the conditions that name it; changes that would re-interpret
    existing labels are refused (see ``_check_label_preserving``); so is a stale ``base``
    (the ``question_fingerprint`` the editor saw).
    """
    merged = {**_spec_of(question), **spec}
    new = _clean_spec(merged)
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=question.study_id)
        question = Question.objects.select_for_update().get(pk=question.pk)
        _check_base(question_fingerprint(question), base, f"question {question.key!r}")
        _check_label_preserving(question, new)
        others = [q for q in study.questions.exclude(pk=question.pk)]
        if new["key"] != question.key:
            if any(q.key == new["key"] for q in others):
                raise Conflict(f"question key {new['key']!r} already exists in this study")
            for other in others:
                if (other.condition or {}).get("question") == question.key:
                    other.condition = {**other.condition, "question": new["key"]}
        other_specs = [_spec_of(q) for q in others]
        _fill_keyboard_keys(new, other_specs)
        ordered = sorted(
            [
                *[(q.order, q.pk, s) for q, s in zip(others, other_specs, strict=True)],
                (question.order, question.pk, new),
            ]
        )
        _validate_protocol([s for _, _, s in ordered])
        for other in others:
            if (other.condition or {}).get("question") == new["key"] and new["key"] != question.key:
                other.save(update_fields=["condition"])
        for field in _QUESTION_FIELDS:
            setattr(question, field, new[field])
        question.save()
    return question


def question_remove(*, question: Question, actor: AbstractBaseUser) -> None:
    """Delete a question that has no labels and on which no other question depends."""
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=question.study_id).first()
        n_labels = Label.objects.filter(question=question).count()
        if n_labels:
            raise Conflict(
                f"{question.key!r} has {n_labels} label{'s' if n_labels != 1 else ''} and cannot be removed; "
                "remove it from the pools that ask it instead, so no new labels are collected"
            )
        dependants = list(
            Question.objects.filter(study_id=question.study_id, condition__question=question.key)
            .exclude(pk=question.pk)
            .values_list("key", flat=True)
        )
        if dependants:
            raise Conflict(
                f"{question.key!r} cannot be removed: the condition of "
                f"{', '.join(repr(k) for k in dependants)} refers to it",
                details={"dependants": dependants},
            )
        try:
            with transaction.atomic():
                question.delete()
        except ProtectedError as exc:
            # Referenced by a record that must outlive it (a validation study's target, a case, gold).
            kinds = sorted({obj._meta.verbose_name for obj in exc.protected_objects})
            raise Conflict(
                f"{question.key!r} cannot be removed: {', '.join(kinds)} refer{'s' if len(kinds) == 1 else ''} to it"
            ) from None


def question_reorder(*, study: Study, actor: AbstractBaseUser, keys: list[str]) -> list[Question]:
    """Put the protocol in the order of ``keys``, which must name every question exactly once."""
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        questions = {q.key: q for q in study.questions.all()}
        if sorted(keys) != sorted(questions) or len(set(keys)) != len(keys):
            missing = sorted(set(questions) - set(keys))
            unknown = sorted(set(keys) - set(questions))
            raise ValidationFailed(
                "the new order must list every question exactly once"
                + (f"; missing {missing}" if missing else "")
                + (f"; unknown {unknown}" if unknown else "")
            )
        for i, key in enumerate(keys):
            questions[key].order = i
        Question.objects.bulk_update(questions.values(), ["order"])
    return [questions[k] for k in keys]


def question_move(*, question: Question, actor: AbstractBaseUser, offset: int) -> list[Question]:
    """Move one question ``offset`` places up (negative) or down the protocol."""
    keys = list(Question.objects.filter(study_id=question.study_id).values_list("key", flat=True))
    i = keys.index(question.key)
    j = max(0, min(len(keys) - 1, i + offset))
    keys.insert(j, keys.pop(i))
    return question_reorder(study=question.study, actor=actor, keys=keys)


# --- Pools ----------------------------------------------------------------------------------


def pool_top_up(pool: Pool) -> int:
    """Top up the pool's assignments; a pool with fewer active members than k waits for more
    (the console shows why), since no item could get its k distinct annotators yet."""
    members = PoolMembership.objects.filter(pool=pool, active=True).count()
    if members < pool.overlap:
        return 0
    return pool_assign_items(pool=pool)


def _check_pool_questions(study: Study, questions: list[Question]) -> None:
    keys = {q.key for q in questions}
    for q in questions:
        if q.study_id != study.pk:
            raise NotFound("question not found")
        target = (q.condition or {}).get("question")
        if target and target not in keys:
            raise ValidationFailed(
                f"{q.key!r} is asked only depending on the answer to {target!r}; add {target!r} to the pool as well"
            )


def _check_overlap(overlap: int) -> None:
    if not isinstance(overlap, int) or overlap < 1:
        raise ValidationFailed("overlap k (annotators per item) must be a whole number of at least 1")


def pool_create(
    *,
    study: Study,
    actor: AbstractBaseUser,
    name: str,
    questions: list[Question],
    overlap: int = 1,
    visibility: str = Visibility.NOTHING,
    seed: int | None = None,
    reservation_minutes: int = 30,
    reopen_allowed: bool = False,
) -> Pool:
    name = name.strip()
    if not name:
        raise ValidationFailed("a pool needs a name")
    if not questions:
        raise ValidationFailed("a pool must ask at least one question")
    _check_overlap(overlap)
    if visibility not in Visibility.values:
        raise ValidationFailed(f"visibility must be one of {', '.join(Visibility.values)}")
    if reservation_minutes < 1:
        raise ValidationFailed("the reservation must last at least one minute")
    _check_pool_questions(study, questions)
    with transaction.atomic():
        if Pool.objects.filter(study=study, name=name).exists():
            raise Conflict(f"a pool named {name!r} already exists in this study")
        pool = Pool.objects.create(
            study=study,
            name=name,
            overlap=overlap,
            visibility=visibility,
            seed=secrets.randbelow(2**31) if seed is None else seed,
            reservation_minutes=reservation_minutes,
            reopen_allowed=reopen_allowed,
        )
        pool.questions.set(questions)
    return pool


def pool_update(
    *,
    pool: Pool,
    actor: AbstractBaseUser,
    name: str | None = None,
    questions: list[Question] | None = None,
    overlap: int | None = None,
    visibility: str | None = None,
    reopen_allowed: bool | None = None,
    base: str | None = None,
) -> Pool:
    """Change a pool. Questions with labels in the pool stay in it; k may grow (the items are topped
    up at once) but not shrink once items are assigned, since that would orphan assignments.
    ``base`` is the ``pool_fingerprint`` the editor saw; a stale one is refused with Conflict."""
    with transaction.atomic():
        pool = Pool.objects.select_for_update().get(pk=pool.pk)
        _check_base(pool_fingerprint(pool), base, f"pool {pool.name!r}")
        if name is not None:
            name = name.strip()
            if not name:
                raise ValidationFailed("a pool needs a name")
            if Pool.objects.filter(study_id=pool.study_id, name=name).exclude(pk=pool.pk).exists():
                raise Conflict(f"a pool named {name!r} already exists in this study")
            pool.name = name
        if visibility is not None:
            if visibility not in Visibility.values:
                raise ValidationFailed(f"visibility must be one of {', '.join(Visibility.values)}")
            pool.visibility = visibility
        if reopen_allowed is not None:
            pool.reopen_allowed = reopen_allowed
        if questions is not None:
            if not questions:
                raise ValidationFailed("a pool must ask at least one question")
            _check_pool_questions(pool.study, questions)
            dropped = set(pool.questions.values_list("pk", flat=True)) - {q.pk for q in questions}
            labelled = list(
                Question.objects.filter(pk__in=dropped, labels__assignment__pool=pool)
                .distinct()
                .values_list("key", flat=True)
            )
            if labelled:
                keys = ", ".join(repr(k) for k in labelled)
                raise Conflict(f"{keys} already has labels in this pool and stays in it")
            pool.questions.set(questions)
        grow = False
        if overlap is not None and overlap != pool.overlap:
            _check_overlap(overlap)
            if overlap < pool.overlap and pool.assignments.exists():
                raise Conflict(
                    f"items are already assigned to {pool.overlap} annotators each; k cannot shrink to {overlap} "
                    "without withdrawing assignments"
                )
            grow = overlap > pool.overlap
            pool.overlap = overlap
        pool.save()
        if grow:
            pool_top_up(pool)
    return pool


def _next_pseudonym(study: Study, user: AbstractBaseUser) -> str:
    """The person's pseudonym in the study: kept if they already have one, else the next ``A<n>`` that looks
    like no pseudonym of the study (``annotation.pseudonyms``: not "A2" beside an imported "a2")."""
    existing = PoolMembership.objects.filter(study=study, user=user).values_list("pseudonym", flat=True).first()
    if existing:
        return existing
    taken = set(PoolMembership.objects.filter(study=study).values_list("pseudonym", flat=True))
    keys = {key for pseudonym in taken for key in pseudonym_keys(pseudonym)}
    n = len(taken) + 1
    while not keys.isdisjoint(pseudonym_keys(f"A{n}")):
        n += 1
    return f"A{n}"


def _refuse_self(actor: AbstractBaseUser, user: AbstractBaseUser, what: str) -> None:
    if actor.pk == user.pk:
        raise Forbidden(f"nobody changes their own {what}; ask another researcher of the study")


def pool_membership_add(
    *, pool: Pool, user: AbstractBaseUser, actor: AbstractBaseUser, pseudonym: str = ""
) -> PoolMembership:
    """Put ``user`` in ``pool`` (granting them the annotator role) and assign them items at once.

    With the study's independent pools a person belongs to at most one pool; the refusal names the
    pool they are in, and the database's own constraint backs the check against races.
    """
    _refuse_self(actor, user, "pool")
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=pool.study_id)
        current = PoolMembership.objects.filter(pool=pool, user=user).first()
        if current and current.active:
            raise Conflict(f"{user.get_username()} is already a member of {pool.name}")
        if study.independent_pools:
            other = (
                PoolMembership.objects.filter(study=study, user=user).exclude(pool=pool).select_related("pool").first()
            )
            if other:
                raise Conflict(
                    f"{user.get_username()} already belongs to pool {other.pool.name!r}; this study keeps its pools "
                    "independent, so a person belongs to one pool only (move them instead, if they have not started)"
                )
        StudyRole.objects.get_or_create(study=study, user=user, role=Role.ANNOTATOR)
        if current:
            current.active = True
            current.save(update_fields=["active"])
            membership = current
        else:
            try:
                with transaction.atomic():
                    membership = PoolMembership.objects.create(
                        pool=pool, study=study, user=user, independent=study.independent_pools,
                        pseudonym=pseudonym.strip() or _next_pseudonym(study, user),
                    )
            except IntegrityError:
                raise Conflict(
                    f"{user.get_username()} was just added to a pool of this study by someone else"
                ) from None
        pool_top_up(pool)
    return membership


def _withdraw(membership: PoolMembership) -> None:
    """Take a person out of their pool: unopened assignments go back to the pool; the membership
    itself is kept (inactive) once they have opened anything, so their labels keep a pseudonym."""
    Assignment.objects.filter(
        pool_id=membership.pool_id,
        annotator_id=membership.user_id,
        status=AssignmentStatus.ASSIGNED,
        labels__isnull=True,
    ).delete()
    touched = Assignment.objects.filter(pool_id=membership.pool_id, annotator_id=membership.user_id).exists()
    if touched:
        membership.active = False
        membership.save(update_fields=["active"])
    else:
        membership.delete()


def pool_membership_move(*, membership: PoolMembership, to_pool: Pool, actor: AbstractBaseUser) -> PoolMembership:
    """Move a person to another pool of the same study, while the rules allow it.

    Refused while they have items open (started, not submitted) in their pool, and — in a study with
    independent pools — once they have opened any item of it: they have seen those items with that
    pool's questions, and judging them again in another pool would not be independent.
    """
    user = membership.user
    _refuse_self(actor, user, "pool")
    if to_pool.study_id != membership.study_id:
        raise NotFound("pool not found")
    if to_pool.pk == membership.pool_id:
        raise ValidationFailed(f"{user.get_username()} is already in {to_pool.name}")
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=membership.study_id)
        membership = PoolMembership.objects.select_for_update().select_related("pool").get(pk=membership.pk)
        source = membership.pool
        mine = Assignment.objects.filter(pool=source, annotator=user)
        started = mine.filter(status=AssignmentStatus.STARTED).count()
        if started:
            raise Conflict(
                f"{user.get_username()} has {started} item{'s' if started != 1 else ''} in progress in {source.name}; "
                "they must submit or skip them before moving"
            )
        opened = mine.filter(status__in=_TOUCHED).count()
        if study.independent_pools and opened:
            raise Conflict(
                f"{user.get_username()} has already worked on {opened} item{'s' if opened != 1 else ''} "
                f"of {source.name}; "
                "this study keeps its pools independent, so they cannot join another pool"
            )
        if PoolMembership.objects.filter(pool=to_pool, user=user, active=True).exists():
            raise Conflict(f"{user.get_username()} is already a member of {to_pool.name}")
        pseudonym = membership.pseudonym
        _withdraw(membership)
        # A membership they left in the target pool keeps its own pseudonym: their past work there is
        # credited to it, and a pseudonym is never rewritten (audit_verify fails on any such UPDATE).
        moved = PoolMembership.objects.filter(pool=to_pool, user=user).first()
        if moved is None:
            moved = PoolMembership.objects.create(
                pool=to_pool, user=user, study=study, independent=study.independent_pools, pseudonym=pseudonym,
            )
        else:
            moved.active, moved.independent = True, study.independent_pools
            moved.save(update_fields=["active", "independent"])
        pool_top_up(source)
        pool_top_up(to_pool)
    return moved


def pool_membership_remove(*, membership: PoolMembership, actor: AbstractBaseUser) -> None:
    """Take a person out of a pool; their past labels stay (and stay pseudonymous in exports)."""
    _refuse_self(actor, membership.user, "pool")
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=membership.study_id).first()
        membership = PoolMembership.objects.select_for_update().select_related("pool").get(pk=membership.pk)
        if not membership.active:
            raise Conflict(f"{membership.user.get_username()} has already left {membership.pool.name}")
        _withdraw(membership)
        pool_top_up(membership.pool)


# --- People and roles -----------------------------------------------------------------------


def study_role_grant(*, study: Study, user: AbstractBaseUser, role: str, actor: AbstractBaseUser) -> StudyRole:
    _refuse_self(actor, user, "role")
    if role not in Role.values:
        raise ValidationFailed(f"role must be one of {', '.join(Role.values)}")
    with transaction.atomic():
        granted, created = StudyRole.objects.get_or_create(study=study, user=user, role=role)
        if not created:
            raise Conflict(f"{user.get_username()} is already {role} of this study")
    return granted


def study_role_revoke(*, study: Study, user: AbstractBaseUser, role: str, actor: AbstractBaseUser) -> None:
    """Take a role away. Revoking ``annotator`` also takes the person out of the study's pools;
    their past labels are kept."""
    _refuse_self(actor, user, "role")
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        granted = StudyRole.objects.filter(study=study, user=user, role=role).first()
        if granted is None:
            raise NotFound(f"{user.get_username()} is not {role} of this study")
        others = StudyRole.objects.filter(study=study, role=Role.RESEARCHER).exclude(user=user)
        if role == Role.RESEARCHER and not others.exists():
            raise Conflict("a study keeps at least one researcher")
        if role == Role.ANNOTATOR:
            for membership in PoolMembership.objects.filter(study=study, user=user, active=True).select_related("pool"):
                _withdraw(membership)
                pool_top_up(membership.pool)
        granted.delete()


# --- Adding people by name: at once inside the study, by invitation outside it ----------------
#
# A researcher types a username (or an e-mail address, annotator_invite below). Someone who already has a
# role in the study or belongs to one of its pools is added at once: the researcher sees them on the People
# page anyway. Anyone else is only *invited*: a StudyInvitation they accept or decline on their home page,
# and nothing about them exists in the study until they accept. The researcher's answer must not tell
# whether such an account exists, so the invitation path does the same work whatever the name names: the
# same statements in the same order (the account lookup runs, and a row is written, for a name with no
# account, an inactive account or an import-only identity too; such a row is bound to nobody and can never
# be answered), the same message, and the same row in the researcher's list of invitations, which shows
# the name as it was typed. Only the invited person's own answer (accepted, declined) ever shows more.


def invitation_sent_message(invited: str, *, address: bool = False) -> str:
    """The one answer to "add or invite ``invited``" for anyone outside the study, whether or not an account
    of that name (or, with ``address``, that e-mail address) exists."""
    if address:
        return (
            f"If {invited!r} is not yet in this study, an invitation was mailed to it (with a new account when "
            "the address had none); the person joins once they accept it on their home page."
        )
    return (
        f"If an account {invited!r} exists and is not yet in this study, it has been invited; the person joins "
        "once they accept the invitation on their home page."
    )


def _study_person(study: Study, *, username: str = "", email: str = "") -> Any:
    """The account of that username (or e-mail address) that holds a role in ``study`` or belongs to one of its
    pools (also one they left), or None."""
    people = User.objects.filter(Q(study_roles__study=study) | Q(pool_memberships__study=study))
    people = people.filter(username__iexact=username) if username else people.filter(email__iexact=email)
    return people.distinct().order_by("pk").first()


def _outsider(*, username: str = "", email: str = "") -> Any:
    """The active account an invitation to someone outside the study is bound to, or None (no such account,
    or one that cannot log in: an inactive account, an import-only identity)."""
    accounts = User.objects.filter(is_active=True)
    accounts = accounts.filter(username__iexact=username) if username else accounts.filter(email__iexact=email)
    return accounts.order_by("pk").first()


def _check_typed_username(username: str) -> str:
    username = username.strip()
    if not _TYPED_USERNAME.match(username):
        raise ValidationFailed("a username has 1 to 150 letters, digits or the characters . @ + - _")
    return username


def _invitation_record(
    *, study: Study, pool: Pool | None, role: str, invited: str, user: Any, actor: AbstractBaseUser,
    pseudonym: str = "",
) -> StudyInvitation:
    """The pending invitation of ``invited`` to ``role`` (and ``pool``): the one still open for the same name,
    else a new one. Keyed by the name as typed (case aside), never by the account, so that a repeated
    invitation is answered the same whether or not the name has an account."""
    now = timezone.now()
    open_one = (
        StudyInvitation.objects.filter(
            study=study, pool=pool, role=role, invited__iexact=invited, state=InvitationState.PENDING,
            expires_at__gt=now,
        )
        .order_by("-created_at", "-id")
        .first()
    )
    if open_one is not None:
        return open_one
    return StudyInvitation.objects.create(
        study=study, pool=pool, role=role, invited=invited, user=user, pseudonym=pseudonym.strip(),
        invited_by=actor, updated_by=actor, created_at=now,
        expires_at=now + timedelta(seconds=settings.INVITATION_TTL_SECONDS),
    )


def pool_member_add_or_invite(
    *, pool: Pool, username: str, actor: AbstractBaseUser, pseudonym: str = ""
) -> PoolMembership | StudyInvitation:
    """Add the person named ``username`` to ``pool``: at once (the membership) when they are already in the
    study, else by an invitation, the same whether or not the name has an account."""
    username = username.strip()
    if not username:
        raise ValidationFailed("name the person to add by their username")
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=pool.study_id)
        person = _study_person(study, username=username)
        if person is not None:
            return pool_membership_add(pool=pool, user=person, actor=actor, pseudonym=pseudonym)
        username = _check_typed_username(username)
        return _invitation_record(
            study=study, pool=pool, role=Role.ANNOTATOR, invited=username, user=_outsider(username=username),
            actor=actor, pseudonym=pseudonym,
        )


def study_role_grant_or_invite(
    *, study: Study, username: str, role: str, actor: AbstractBaseUser
) -> StudyRole | StudyInvitation:
    """Give the person named ``username`` a role: at once when they are already in the study, else by an
    invitation, the same whether or not the name has an account."""
    if role not in Role.values:
        raise ValidationFailed(f"role must be one of {', '.join(Role.values)}")
    username = username.strip()
    if not username:
        raise ValidationFailed("name the person by their username")
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)
        person = _study_person(study, username=username)
        if person is not None:
            return study_role_grant(study=study, user=person, role=role, actor=actor)
        username = _check_typed_username(username)
        return _invitation_record(
            study=study, pool=None, role=role, invited=username, user=_outsider(username=username), actor=actor
        )


def study_role_revoke_by_username(*, study: Study, username: str, role: str, actor: AbstractBaseUser) -> None:
    """Take a role away from the person of the study named ``username``. A name that is nobody in the study is
    refused with the words of a person without that role, whether or not an account of that name exists."""
    person = _study_person(study, username=username.strip())
    if person is None:
        raise NotFound(f"{username.strip()!r} is not {role} of this study")
    study_role_revoke(study=study, user=person, role=role, actor=actor)


def _lock_invitation(invitation: StudyInvitation) -> StudyInvitation:
    # The study first, as every service that changes its people does, then the invitation itself.
    Study.objects.select_for_update().filter(pk=invitation.study_id).first()
    locked = StudyInvitation.objects.select_for_update(of=("self",))
    return locked.select_related("study", "pool", "invited_by").get(pk=invitation.pk)


def _check_open(invitation: StudyInvitation, now: Any) -> None:
    if invitation.state != InvitationState.PENDING:
        raise Conflict(f"this invitation was already {invitation.state}")
    if invitation.expired(now):
        raise Conflict(
            f"this invitation expired on {timezone.localtime(invitation.expires_at):%Y-%m-%d %H:%M}; "
            "ask the researcher for a new one"
        )


def invitation_withdraw(*, invitation: StudyInvitation, actor: AbstractBaseUser) -> StudyInvitation:
    """A researcher takes back a pending invitation: it can no longer be accepted."""
    with transaction.atomic():
        invitation = _lock_invitation(invitation)
        now = timezone.now()
        _check_open(invitation, now)
        invitation.state = InvitationState.WITHDRAWN
        invitation.decided_at = now
        invitation.updated_by = actor
        invitation.save(update_fields=["state", "decided_at", "updated_by"])
    return invitation


def invitation_decline(*, invitation: StudyInvitation, user: AbstractBaseUser) -> StudyInvitation:
    """The invited person says no; the researcher sees that they declined."""
    with transaction.atomic():
        invitation = _lock_invitation(invitation)
        if invitation.user_id != user.pk:
            raise NotFound("no such invitation")
        now = timezone.now()
        _check_open(invitation, now)
        invitation.state = InvitationState.DECLINED
        invitation.decided_at = now
        invitation.updated_by = user
        invitation.save(update_fields=["state", "decided_at", "updated_by"])
    return invitation


def invitation_accept(*, invitation: StudyInvitation, user: AbstractBaseUser) -> StudyInvitation:
    """The invited person says yes: only now do they get the role, and the pool's membership (with its items).

    Refused while the invitation is not theirs (404), no longer pending or expired (409), and when the
    researcher who sent it is no longer a researcher of the study (409: a researcher whose role was taken
    away does not keep bringing people in). A role or pool they already have meanwhile is kept as it is.
    """
    with transaction.atomic():
        invitation = _lock_invitation(invitation)
        if invitation.user_id != user.pk:
            raise NotFound("no such invitation")
        now = timezone.now()
        _check_open(invitation, now)
        study, pool = invitation.study, invitation.pool
        inviter = StudyRole.objects.filter(study=study, user_id=invitation.invited_by_id, role=Role.RESEARCHER)
        if not inviter.exists():
            raise Conflict("this invitation is no longer valid: the person who sent it no longer runs the study")
        StudyRole.objects.get_or_create(study=study, user=user, role=invitation.role)
        if pool is not None and not PoolMembership.objects.filter(pool=pool, user=user, active=True).exists():
            other = PoolMembership.objects.filter(study=study, user=user).exclude(pool=pool).select_related("pool")
            elsewhere = other.first() if study.independent_pools else None
            if elsewhere is not None:
                raise Conflict(
                    f"you already belong to pool {elsewhere.pool.name!r} of this study, which keeps its pools "
                    "independent (one pool per person): decline this invitation, or ask the researcher to move you"
                )
            pool_membership_add(pool=pool, user=user, actor=invitation.invited_by, pseudonym=invitation.pseudonym)
        invitation.state = InvitationState.ACCEPTED
        invitation.decided_at = now
        invitation.updated_by = user
        invitation.save(update_fields=["state", "decided_at", "updated_by"])
    return invitation


@dataclass(frozen=True)
class NewAccount:
    user: AbstractBaseUser
    one_time_password: str


def _check_new_username(username: str) -> str:
    username = username.strip()
    if not _USERNAME.match(username):
        raise ValidationFailed("a username has 3 to 150 letters, digits or the characters . @ + - _")
    if User.objects.filter(username__iexact=username).exists():
        raise Conflict(f"the username {username!r} is taken")
    return username


def _check_email(email: str) -> str:
    email = email.strip()
    if email and not re.match(r"^[^@\s]+@[^@\s]+\.[^@\s]+$", email):
        raise ValidationFailed(f"{email!r} is not an e-mail address")
    return email


def account_create(
    *,
    study: Study,
    actor: AbstractBaseUser,
    username: str,
    email: str = "",
    role: str = Role.ANNOTATOR,
    pool: Pool | None = None,
) -> NewAccount:
    """A new account with a one-time password, shown once to the researcher; the person must
    choose their own password at first login."""
    username = _check_new_username(username)
    email = _check_email(email)
    if role not in Role.values:
        raise ValidationFailed(f"role must be one of {', '.join(Role.values)}")
    if pool is not None and pool.study_id != study.pk:
        raise NotFound("pool not found")
    password = secrets.token_urlsafe(12)
    with transaction.atomic():
        user = User.objects.create_user(username=username, email=email, password=password)
        PasswordChangeRequired.objects.create(user=user, created_by=actor)
        StudyRole.objects.get_or_create(study=study, user=user, role=role)
        if pool is not None:
            pool_membership_add(pool=pool, user=user, actor=actor)
    return NewAccount(user=user, one_time_password=password)


def _username_from_email(email: str) -> str:
    base = re.sub(r"[^\w.+-]", "", email.split("@")[0])[:140] or "annotator"
    base = base if len(base) >= 3 else f"{base}-user"
    username, n = base, 2
    while User.objects.filter(username__iexact=username).exists():
        username, n = f"{base}{n}", n + 1
    return username


def annotator_invite(
    *,
    study: Study,
    actor: AbstractBaseUser,
    email: str,
    site_url: str,
    role: str = Role.ANNOTATOR,
    pool: Pool | None = None,
) -> AbstractBaseUser | StudyInvitation:
    """Invite a person by e-mail. Someone of the study with that address gets the role (and pool) at once, as
    with a username. Anyone else gets an invitation (StudyInvitation) to accept on their home page: bound to
    the account that has the address, or to a new account made without a usable password, whose mail carries
    a link where they choose one. Returns the person added at once, or the invitation, which reads the
    same whether or not the address had an account.

    The mail is sent after the transaction commits, so a refused invitation sends nothing.
    """
    email = _check_email(email)
    if not email:
        raise ValidationFailed("an invitation needs an e-mail address")
    if role not in Role.values:
        raise ValidationFailed(f"role must be one of {', '.join(Role.values)}")
    if pool is not None and pool.study_id != study.pk:
        raise NotFound("pool not found")
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)
        person = _study_person(study, email=email)
        invitation = None
        if person is not None:
            _refuse_self(actor, person, "role")
            StudyRole.objects.get_or_create(study=study, user=person, role=role)
            if pool is not None:
                pool_membership_add(pool=pool, user=person, actor=actor)
            user, new = person, False
        else:
            # Any account with the address, an inactive one too: a second account for a deactivated person
            # would get round the deactivation; an inactive account simply cannot log in to accept.
            user = User.objects.filter(email__iexact=email).order_by("pk").first()
            new = user is None
            if new:
                user = User.objects.create_user(username=_username_from_email(email), email=email)
                user.set_unusable_password()
                user.save(update_fields=["password"])
            invitation = _invitation_record(study=study, pool=pool, role=role, invited=email, user=user, actor=actor)
        body = _invitation_body(
            study=study, actor=actor, user=user, new=new, site_url=site_url, invitation=invitation
        )
        transaction.on_commit(
            lambda: send_mail(
                subject=f"You are invited to annotate in {study.name}",
                message=body,
                from_email=settings.DEFAULT_FROM_EMAIL,
                recipient_list=[email],
            )
        )
    return person if invitation is None else invitation


def _invitation_body(
    *, study: Study, actor: AbstractBaseUser, user: AbstractBaseUser, new: bool, site_url: str,
    invitation: StudyInvitation | None,
) -> str:
    site = site_url.rstrip("/")
    inviter = actor.get_full_name() or actor.get_username()
    if new:
        uid = urlsafe_base64_encode(force_bytes(user.pk))
        token = default_token_generator.make_token(user)
        action = (
            f"Your username is {user.get_username()}. Choose your password here (the link works once, "
            f"for {max(1, settings.PASSWORD_RESET_TIMEOUT // 86400)} day(s)):\n"
            f"{site}/accounts/invitation/{uid}/{token}/\n"
        )
    else:
        action = f"Log in with your existing account ({user.get_username()}) at {site}/\n"
    if invitation is not None:
        until = timezone.localtime(invitation.expires_at)
        action += (
            f"\nThe invitation is on your home page once you are logged in: accept it to join the study, or "
            f"decline it. It can be accepted until {until:%Y-%m-%d %H:%M}.\n"
        )
    return f"{inviter} invites you to the study “{study.name}” on Concord.\n\n{action}"
