"""Backend options of a score run: only documented options, bounded numbers, model locations only from
the directories an administrator allows, and no error that echoes a file's content."""

from __future__ import annotations

import json

import pytest

from concord.errors import ValidationFailed
from scoring import services
from scoring.backend_options import backend_options_clean
from scoring.backends.nli import map_labels
from scoring.metrics import BackendUnavailable
from scoring.models import RunStatus, ScoreRun
from tests.scoring.runs_support import llm_available, nli_available

pytestmark = pytest.mark.django_db

SECRET = "db-password-hunter2"


@pytest.fixture
def foreign_model(tmp_path):
    """A directory outside every allowed model directory, holding a config.json with a secret in it."""
    directory = tmp_path / "elsewhere"
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps({"id2label": {"0": SECRET, "1": "x"}}))
    (directory / "modules.json").write_text("[]")
    return directory


def _start(study, researcher, backend, options, metric="cf"):
    return services.score_run_start(
        study=study, metric=metric, backend=backend, parameters=None, actor=researcher, backend_options=options
    )


@pytest.mark.parametrize(("backend", "option"), [("nli", "model_dir"), ("embedding", "model")])
def test_a_model_outside_the_allowed_directories_is_refused_without_reading_it(
    study, researcher, foreign_model, backend, option, settings
):
    settings.SCORING_MODEL_DIRS = []
    with pytest.raises(ValidationFailed) as refused:
        _start(study, researcher, backend, {option: str(foreign_model)})
    assert SECRET not in refused.value.message and "SCORING_MODEL_DIRS" in refused.value.message
    assert not ScoreRun.objects.exists()


def test_a_model_inside_an_allowed_directory_is_accepted(study, researcher, tmp_path, settings):
    allowed = tmp_path / "models"
    nli_available(settings, allowed / "nli-small")
    settings.NLI_MODEL_DIR = ""  # none configured: the run's own model_dir is what makes the backend available
    settings.SCORING_MODEL_DIRS = [str(allowed)]
    run = _start(study, researcher, "nli", {"model_dir": str(allowed / "nli-small"), "max_length": 256})
    assert run.backend_options == {"model_dir": str(allowed / "nli-small"), "max_length": 256}


@pytest.mark.parametrize("escape", ["{d}/../elsewhere", "{d}/link", "relative/path", ""])
def test_escaping_an_allowed_directory_is_refused(study, researcher, tmp_path, foreign_model, settings, escape):
    allowed = tmp_path / "models"
    allowed.mkdir()
    (allowed / "link").symlink_to(foreign_model)
    settings.SCORING_MODEL_DIRS = [str(allowed)]
    with pytest.raises(ValidationFailed):
        _start(study, researcher, "nli", {"model_dir": escape.format(d=allowed)})


def test_the_configured_default_model_is_always_allowed(study, researcher, tmp_path, settings):
    settings.SCORING_MODEL_DIRS = []
    nli_available(settings, tmp_path / "configured")
    assert _start(study, researcher, "nli", {"model_dir": settings.NLI_MODEL_DIR}).pk


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("samples", 1_000_000), ("samples", 0), ("samples", 2.5), ("samples", True), ("samples", "3"),
        ("max_retries", 1e6), ("max_retries", -1), ("timeout", 86_400), ("timeout", 0), ("timeout", float("nan")),
        ("backoff_base", 1e9), ("backoff_cap", float("inf")), ("temperature", 5), ("json_mode", "yes"),
        ("base_url", "http://169.254.169.254/"), ("unknown_option", 1),
    ],
)  # fmt: skip
def test_llm_numbers_are_bounded_and_unknown_options_refused(study, researcher, settings, option, value):
    llm_available(settings)  # refused for the option, not because no endpoint is configured
    with pytest.raises(ValidationFailed) as refused:
        _start(study, researcher, "llm", {option: value})
    assert "not available here" not in refused.value.message
    assert not ScoreRun.objects.exists()


def test_llm_options_within_their_bounds_are_kept(study, researcher, settings):
    llm_available(settings)
    options = {
        "samples": 5,
        "max_retries": 2,
        "timeout": 30,
        "backoff_base": 0.5,
        "backoff_cap": 10,
        "temperature": 0.7,
    }
    assert _start(study, researcher, "llm", options).backend_options == options


@pytest.mark.parametrize(
    ("backend", "options"),
    [
        ("nli", {"max_length": 10**9}), ("lexical", {"measure": "../../etc"}), ("none", {"x": 1}),
        ("learned", {"model": "x" * 500}), ("learned", {"study": 999_999}), ("embedding", {"model": 3}),
    ],
)  # fmt: skip
def test_every_backend_checks_its_options(study, backend, options):
    with pytest.raises(ValidationFailed):
        backend_options_clean(backend, options, study_id=study.pk, study_slug=study.slug)


def test_the_learned_backend_may_name_only_its_own_study(study):
    for own in (study.slug, study.pk, str(study.pk)):
        cleaned = backend_options_clean(
            "learned", {"study": own, "model": "pf-judge"}, study_id=study.pk, study_slug=study.slug
        )
        assert cleaned["study"] == study.pk


def test_options_stored_before_the_rules_are_checked_again_by_the_worker(study, researcher):
    run = ScoreRun.objects.create(
        study=study, metric="cf", metric_version="1", backend="llm", created_by=researcher,
        backend_options={"samples": 1_000_000},
    )  # fmt: skip
    with pytest.raises(BackendUnavailable, match="samples"):
        services._load_backend(run)
    assert ScoreRun.objects.get(pk=run.pk).status == RunStatus.QUEUED


def test_an_nli_model_whose_labels_do_not_map_is_refused_without_echoing_them():
    with pytest.raises(BackendUnavailable) as refused:
        map_labels({0: SECRET, 1: "neutral"})
    assert SECRET not in str(refused.value)
    with pytest.raises(BackendUnavailable) as refused:
        map_labels({0: "neutral " + SECRET})
    assert SECRET not in str(refused.value)
