"""What a score run may ask of its backend: the one validation of ``backend_options``.

A run's options come from a researcher (console form, REST API) and are stored on the run; the worker
reads them again when it loads the backend. Both paths go through ``backend_options_clean``:

* only the options each backend's descriptor declares are accepted (``BackendDescriptor.options``, in
  the backend's module), each of its type (a boolean is not a number, NaN and infinity are not numbers);
* numbers are bounded by the descriptor: a run cannot ask for a million LLM samples, retries or a
  day-long timeout;
* a model location (an option with a ``model_setting``: ``nli.model_dir``, ``embedding.model``) must lie
  inside one of the directories an administrator allows (``settings.SCORING_MODEL_DIRS``), or be the
  configured default (that setting: ``NLI_MODEL_DIR``, ``EMBEDDING_MODEL``); symbolic links and ``..`` are
  resolved first. Nothing else on the server's disk can be named;
* the LLM endpoint is the administrator's (``base_url`` is refused: ``LLM_BASE_URL``);
* the learned backend names trained judges (``model``, ``supports_model``, ``informative_model``, ``kind_model``,
  ``relevance_model``) and reads the run's own study's judges only (and those shared with it);
* error messages name the option and the rule, never the content of a file.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from django.conf import settings

from concord.errors import ValidationFailed
from scoring.backends import BACKENDS, Option


def allowed_model_dirs() -> list[Path]:
    return [Path(d).resolve() for d in settings.SCORING_MODEL_DIRS if d]


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def model_location_check(backend: str, option: str, spec: Option, value: str) -> str:
    """``value`` when it is the configured default (the setting the option's ``model_setting`` names) or a
    directory inside an allowed model directory."""
    if value == getattr(settings, spec.model_setting):
        return value
    refused = (
        f"{backend}.{option}: a model must be the configured one or lie in a model directory the administrator "
        "allows (SCORING_MODEL_DIRS)"
    )
    if "\x00" in value or not value.strip():
        raise ValidationFailed(refused)
    path = Path(value)
    if not path.is_absolute():
        raise ValidationFailed(refused)
    resolved = path.resolve()
    if not any(_inside(resolved, root) for root in allowed_model_dirs()):
        raise ValidationFailed(refused)
    return value


def _number(backend: str, key: str, spec: Option, value: Any) -> int | float:
    assert spec.bounds is not None  # every number option has bounds (Option checks it)
    low, high = spec.bounds
    integer = spec.kind == "integer"
    kind = "an integer" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationFailed(f"{backend}.{key} must be {kind} between {low:g} and {high:g}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValidationFailed(f"{backend}.{key} must be {kind} between {low:g} and {high:g}")
    if integer and isinstance(value, float):
        if not value.is_integer():
            raise ValidationFailed(f"{backend}.{key} must be {kind} between {low:g} and {high:g}")
        value = int(value)
    if not low <= value <= high:
        raise ValidationFailed(f"{backend}.{key} must be {kind} between {low:g} and {high:g}, got {_shown(value)}")
    return value


def _shown(value: int | float) -> str:
    """A refused number as the message shows it. An integer past a float's range (a 400-digit one: JSON reads
    integers of up to 4,300 digits) cannot be formatted with ``:g``, which raised OverflowError (a 500), nor
    be printed whole in a message; it is described by its size."""
    try:
        return f"{value:g}"
    except OverflowError:
        pass
    try:
        return f"a number of {len(str(abs(value)))} digits"
    except ValueError:  # past int()'s limit both ways (4,300 digits)
        return "a number of more than 4,300 digits"


def backend_options_clean(backend: str, options: Any, *, study_id: int, study_slug: str = "") -> dict[str, Any]:
    """The run's options for ``backend``, checked and normalised; ``ValidationFailed`` naming the first problem."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValidationFailed("backend options must be an object")
    if "base_url" in options:
        # Where the server sends study text is the administrator's choice (LLM_BASE_URL), never a run's.
        raise ValidationFailed(
            "backend option 'base_url' is not allowed: the LLM endpoint is set by an administrator (LLM_BASE_URL)"
        )
    descriptor = BACKENDS.get(backend)
    if descriptor is None:
        raise ValidationFailed(f"unknown backend {backend!r}")
    schema = descriptor.options
    unknown = sorted(str(k) for k in options if k not in schema)
    if unknown:
        offered = ", ".join(sorted(schema)) or "none"
        names = ", ".join(map(repr, unknown))
        raise ValidationFailed(f"the {backend} backend has no option {names}; options: {offered}")
    clean: dict[str, Any] = {}
    for key, value in options.items():
        spec = schema[key]
        if spec.kind in ("integer", "number"):
            if spec.nullable and value is None:
                clean[key] = None
                continue
            clean[key] = _number(backend, key, spec, value)
        elif spec.kind == "boolean":
            if not isinstance(value, bool):
                raise ValidationFailed(f"{backend}.{key} must be true or false")
            clean[key] = value
        elif spec.kind == "study":
            # The learned backend is trained on the run's own study's gold; no other study's model.
            if str(value) not in {str(study_id), study_slug}:
                raise ValidationFailed(f"backend option {key!r} is not allowed: a run uses its own study's judges")
            clean[key] = study_id
        else:
            if not isinstance(value, str) or len(value) > spec.max_length:
                raise ValidationFailed(f"{backend}.{key} must be text of at most {spec.max_length} characters")
            clean[key] = value
    for key, spec in schema.items():
        if key not in clean:
            continue
        if spec.choices and clean[key] not in spec.choices:
            raise ValidationFailed(f"{backend}.{key} must be one of {', '.join(spec.choices)}")
        if spec.model_setting:
            model_location_check(backend, key, spec, clean[key])
    return clean
