"""Applying protocol presets to a study (creating its Question rows)."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Max

from annotation.models import Question, Study
from annotation.presets import PresetError, assign_keyboard_keys, parse_preset_names, preset_questions, validate_specs
from concord.errors import ValidationFailed


@transaction.atomic
def study_protocol_apply(*, study: Study, presets: list[str] | str) -> list[Question]:
    """Add the questions of ``presets`` that the study does not have yet; returns the new rows.

    Idempotent: a question whose key already exists is left as the researcher edited it. New
    questions go after the existing ones and get keyboard keys that the study's existing questions
    of the same scope do not use. Raises ValidationFailed for an unknown preset.
    """
    try:
        names = parse_preset_names(presets)
        specs = preset_questions(names)
    except PresetError as exc:
        raise ValidationFailed(str(exc)) from exc
    existing = list(Question.objects.filter(study=study))
    existing_keys = {q.key for q in existing}
    new_specs = [s for s in specs if s["key"] not in existing_keys]
    taken: dict[str, set[str]] = {}
    for q in existing:
        taken.setdefault(q.scope, set()).update(o.get("key", "") for o in q.options if o.get("key"))
    assign_keyboard_keys(new_specs, taken)
    # Conditions of new questions may point at questions the study already has.
    context = [
        {"key": q.key, "scope": q.scope, "kind": q.kind, "options": [{**o, "key": ""} for o in q.options],
         "condition": {}}
        for q in existing
    ]
    try:
        validate_specs(context + [{**s, "options": [{**o, "key": ""} for o in s["options"]]} for s in new_specs])
    except PresetError as exc:
        raise ValidationFailed(f"the presets do not fit this study's protocol: {exc}") from exc
    start = (Question.objects.filter(study=study).aggregate(m=Max("order"))["m"] or 0) + 1 if existing else 0
    created = Question.objects.bulk_create(
        Question(study=study, order=start + i, **spec) for i, spec in enumerate(new_specs)
    )
    applied = list(study.protocol_presets or [])
    for name in names:
        if name not in applied:
            applied.append(name)
    if applied != study.protocol_presets:
        study.protocol_presets = applied
        study.save(update_fields=["protocol_presets"])
    return created
