"""Forms of the researcher console. They parse; the services validate the domain rules."""

from __future__ import annotations

from typing import Any

from django import forms

from annotation.console.services import pool_fingerprint, question_fingerprint, study_fingerprint
from annotation.models import Pool, Question, QuestionKind, Role, Scope, Study, Visibility
from annotation.presets import PRESET_DESCRIPTIONS, PRESET_ORDER
from concord.forms import ModelChoiceField, ModelMultipleChoiceField
from concord.params import MAX_INT


class _OwnIds:
    """Several of these forms share a page (People: role, account, invitation; a pool: member, account,
    invitation); each prefixes its element ids so that a label never focuses another form's field."""

    id_prefix = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", f"{self.id_prefix}_%s")
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]


def _csv(value: str) -> list[str]:
    return [part.strip() for part in (value or "").replace("\n", ",").split(",") if part.strip()]


class StudyCreateForm(forms.Form):
    name = forms.CharField(max_length=200)
    slug = forms.SlugField(max_length=80, required=False, help_text="Left empty, it is made from the name.")
    presets = forms.MultipleChoiceField(
        choices=[(p, PRESET_DESCRIPTIONS[p]) for p in PRESET_ORDER],
        widget=forms.CheckboxSelectMultiple,
        help_text="Questions of the chosen presets are combined; edit them afterwards.",
    )
    guidelines = forms.CharField(widget=forms.Textarea(attrs={"rows": 8}), required=False, help_text="Markdown.")
    blind_system = forms.BooleanField(required=False, initial=True, label="Hide which system produced each answer")
    independent_pools = forms.BooleanField(
        required=False, initial=True, label="Independent pools (a person belongs to one pool only)"
    )
    hidden_metadata_fields = forms.CharField(
        required=False, label="Metadata fields annotators never see", help_text="Comma-separated keys."
    )

    def clean_hidden_metadata_fields(self) -> list[str]:
        return _csv(self.cleaned_data["hidden_metadata_fields"])


class StudySettingsForm(forms.Form):
    name = forms.CharField(max_length=200)
    guidelines = forms.CharField(widget=forms.Textarea(attrs={"rows": 10}), required=False, help_text="Markdown.")
    blind_system = forms.BooleanField(required=False, label="Hide which system produced each answer (blind_system)")
    independent_pools = forms.BooleanField(
        required=False, label="Independent pools (a person belongs to one pool only)"
    )
    visible_metadata_fields = forms.CharField(
        required=False, label="Metadata fields annotators see",
        help_text="Comma-separated keys; every other metadata key is hidden from annotators.",
    )
    hidden_metadata_fields = forms.CharField(
        required=False, label="Metadata fields annotators never see", help_text="Comma-separated keys."
    )
    base = forms.CharField(required=False, widget=forms.HiddenInput)

    @classmethod
    def for_study(cls, study: Study, data: Any = None) -> StudySettingsForm:
        return cls(data, initial={
            "base": study_fingerprint(study),
            "name": study.name, "guidelines": study.guidelines, "blind_system": study.blind_system,
            "independent_pools": study.independent_pools,
            "hidden_metadata_fields": ", ".join(study.hidden_metadata_fields or []),
            "visible_metadata_fields": ", ".join(study.visible_metadata_fields or []),
        })

    def clean_hidden_metadata_fields(self) -> list[str]:
        return _csv(self.cleaned_data["hidden_metadata_fields"])

    def clean_visible_metadata_fields(self) -> list[str]:
        return _csv(self.cleaned_data["visible_metadata_fields"])


class QuestionForm(forms.Form):
    """One question. Options are edited as lines ``value | label | key``; the value is what labels
    store, so it stays put when the label is reworded."""

    key = forms.SlugField(max_length=60, help_text="Lower-case, with underscores; exports name the question by it.")
    prompt = forms.CharField(max_length=300)
    scope = forms.ChoiceField(choices=Scope.choices)
    kind = forms.ChoiceField(choices=QuestionKind.choices)
    options = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 5}), required=False,
        help_text="One option per line: value | label | keyboard key (label and key optional).",
    )
    condition_question = forms.ChoiceField(required=False, label="Ask only when question")
    condition_values = forms.CharField(
        required=False, label="has one of the values", help_text="Comma-separated values."
    )
    help_text = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)
    required = forms.BooleanField(required=False, initial=True)
    min_value = forms.FloatField(required=False)
    max_value = forms.FloatField(required=False)
    base = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args: Any, study: Study, exclude_key: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        keys = [k for k in study.questions.values_list("key", flat=True) if k != exclude_key]
        self.fields["condition_question"].choices = [("", "— always ask —"), *[(k, k) for k in keys]]

    @classmethod
    def for_question(cls, question: Question, data: Any = None) -> QuestionForm:
        condition = question.condition or {}
        return cls(
            data,
            study=question.study,
            exclude_key=question.key,
            initial={
                "base": question_fingerprint(question),
                "key": question.key,
                "prompt": question.prompt,
                "scope": question.scope,
                "kind": question.kind,
                "options": "\n".join(
                    f"{o['value']} | {o.get('label', '')} | {o.get('key', '')}" for o in question.options
                ),
                "condition_question": condition.get("question", ""),
                "condition_values": ", ".join(condition.get("in", [])),
                "help_text": question.help_text,
                "required": question.required,
                "min_value": question.min_value,
                "max_value": question.max_value,
            },
        )

    def clean_options(self) -> list[dict[str, str]]:
        options = []
        for n, line in enumerate((self.cleaned_data["options"] or "").splitlines(), start=1):
            if not line.strip():
                continue
            parts = [p.strip() for p in line.split("|")]
            if len(parts) > 3:
                raise forms.ValidationError(f"line {n}: at most three parts, value | label | key")
            value, label, key = [*parts, "", ""][:3]
            if not value:
                raise forms.ValidationError(f"line {n}: an option needs a value")
            options.append({"value": value, "label": label or value, "key": key})
        return options

    def spec(self) -> dict[str, Any]:
        data = self.cleaned_data
        condition = {}
        if data["condition_question"]:
            condition = {"question": data["condition_question"], "in": _csv(data["condition_values"])}
        return {
            "key": data["key"], "prompt": data["prompt"], "scope": data["scope"], "kind": data["kind"],
            "options": data["options"], "condition": condition, "help_text": data["help_text"],
            "required": data["required"], "min_value": data["min_value"], "max_value": data["max_value"],
        }


class PoolForm(forms.Form):
    name = forms.CharField(max_length=120)
    questions = ModelMultipleChoiceField(queryset=Question.objects.none(), widget=forms.CheckboxSelectMultiple)
    overlap = forms.IntegerField(min_value=1, max_value=MAX_INT, initial=1, label="Overlap k (annotators per item)")
    visibility = forms.ChoiceField(choices=Visibility.choices, label="Members may see")
    reopen_allowed = forms.BooleanField(
        required=False, label="Annotators may reopen an item they submitted",
        help_text="Each reopening is recorded and every change kept; never after they saw others' labels.",
    )
    base = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args: Any, study: Study, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["questions"].queryset = study.questions.all()
        self.fields["questions"].label_from_instance = lambda q: f"{q.key} ({q.scope}) — {q.prompt}"

    @classmethod
    def for_pool(cls, pool: Pool, data: Any = None) -> PoolForm:
        return cls(
            data,
            study=pool.study,
            initial={
                "base": pool_fingerprint(pool),
                "name": pool.name,
                "questions": list(pool.questions.all()),
                "overlap": pool.overlap,
                "visibility": pool.visibility,
                "reopen_allowed": pool.reopen_allowed,
            },
        )


class MemberAddForm(_OwnIds, forms.Form):
    id_prefix = "member"
    username = forms.CharField(max_length=150, label="Username")


class MemberMoveForm(forms.Form):
    to_pool = ModelChoiceField(queryset=Pool.objects.none(), label="Move to")

    def __init__(self, *args: Any, study: Study, exclude: Pool | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        pools = study.pools.all()
        self.fields["to_pool"].queryset = pools.exclude(pk=exclude.pk) if exclude else pools


class RoleForm(_OwnIds, forms.Form):
    id_prefix = "role"
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Role.choices)


def _pool_field_setup(form: forms.Form, study: Study) -> None:
    pools = list(study.pools.order_by("name"))
    form.fields["pool"].queryset = study.pools.all()  # type: ignore[attr-defined]
    form.fields["pool"].label_from_instance = lambda pool: pool.name  # type: ignore[attr-defined]
    form.has_pools = bool(pools)  # type: ignore[attr-defined]
    if len(pools) == 1 and "pool" not in form.initial:
        form.initial["pool"] = pools[0]
    if pools:
        form.fields["pool"].help_text = "An annotator gets items only from a pool."


def _pool_required_for_annotators(form: forms.Form, data: dict[str, Any]) -> dict[str, Any]:
    if data.get("role") == Role.ANNOTATOR and not data.get("pool") and form.has_pools:  # type: ignore[attr-defined]
        form.add_error("pool", "Choose the annotator's pool: without one they get no items.")
    return data


class AccountForm(_OwnIds, forms.Form):
    """A new account. An annotator needs a pool to get any item: when the study has pools, one must be
    chosen (the only pool is preselected); an account made before any pool exists is named as
    "in no pool" on the People page until it joins one."""

    id_prefix = "account"
    username = forms.CharField(max_length=150)
    email = forms.EmailField(required=False)
    role = forms.ChoiceField(choices=Role.choices, initial=Role.ANNOTATOR)
    pool = ModelChoiceField(queryset=Pool.objects.none(), required=False, empty_label="— no pool yet —")

    def __init__(self, *args: Any, study: Study, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _pool_field_setup(self, study)

    def clean(self) -> dict[str, Any]:
        return _pool_required_for_annotators(self, super().clean() or {})


class InviteForm(_OwnIds, forms.Form):
    id_prefix = "invite"

    email = forms.EmailField()
    role = forms.ChoiceField(choices=Role.choices, initial=Role.ANNOTATOR)
    pool = ModelChoiceField(queryset=Pool.objects.none(), required=False, empty_label="— no pool yet —")

    def __init__(self, *args: Any, study: Study, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _pool_field_setup(self, study)

    def clean(self) -> dict[str, Any]:
        return _pool_required_for_annotators(self, super().clean() or {})


class UploadForm(forms.Form):
    file = forms.FileField(help_text="JSONL or CSV (optionally .gz) in the documented import schema.")
