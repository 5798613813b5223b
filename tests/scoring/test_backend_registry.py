"""One descriptor per backend, registered by its module (``scoring.backends.base.BackendDescriptor``): the run
services, the option checks, the status page and the start-a-run form read it, and nothing else holds a
backend's queue, batch size, settings, option bounds or availability."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.urls import reverse
from rest_framework.test import APIClient

from concord.errors import ValidationFailed
from scoring import services
from scoring.backend_options import backend_options_clean
from scoring.backends import (
    BACKEND_NAMES,
    BACKENDS,
    Availability,
    Option,
    embedding,
    get_backend,
    llm,
    nli,
)
from scoring.backends.base import register
from scoring.metrics import METRICS, BackendUnavailable
from scoring.models import ScoreRun
from tests.scoring.runs_support import llm_available, nli_available


def test_every_backend_module_registers_one_descriptor_under_its_name():
    assert set(BACKEND_NAMES) == {"embedding", "lexical", "nli", "llm", "learned", "none"}
    assert tuple(BACKENDS) == BACKEND_NAMES
    for name, descriptor in BACKENDS.items():
        assert descriptor.name == name
    with pytest.raises(ValueError, match="'lexical' registered twice"):
        register(BACKENDS["lexical"])
    with pytest.raises(BackendUnavailable, match="unknown backend 'nope'; known: "):
        get_backend("nope")


def test_every_backend_a_metric_allows_is_registered():
    for metric in METRICS.values():
        assert set(metric.backends) <= set(BACKENDS), metric.name


def test_every_setting_a_descriptor_names_exists_and_its_model_settings_are_among_them():
    for descriptor in BACKENDS.values():
        for name in descriptor.settings:
            assert hasattr(django_settings, name), (descriptor.name, name)
        assert set(descriptor.model_settings) <= set(descriptor.settings), descriptor.name
        for key, option in descriptor.options.items():
            assert not option.model_setting or option.model_setting in descriptor.settings, (descriptor.name, key)


def test_an_option_without_the_limit_its_kind_needs_is_refused_when_declared():
    with pytest.raises(ValueError, match="bounds"):
        Option("integer")
    with pytest.raises(ValueError, match="maximum length"):
        Option("text")
    with pytest.raises(ValueError, match="bounds"):
        Option("text", max_length=10, bounds=(0, 1))


@pytest.mark.django_db
def test_availability_is_decided_without_loading_any_model(settings, tmp_path, study):
    nli_available(settings, tmp_path / "nli")
    llm_available(settings)
    settings.LLM_ALLOW_PRIVATE_ENDPOINTS = False  # the endpoint is neither resolved nor called either
    loaded = (dict(embedding._BACKENDS), dict(nli._BACKENDS), dict(llm._BACKENDS))
    statuses = {name: d.availability(study_id=study.pk) for name, d in BACKENDS.items()}
    assert statuses == {
        "embedding": Availability(True), "lexical": Availability(True), "nli": Availability(True),
        "llm": Availability(True), "none": Availability(True),
        "learned": Availability(False, statuses["learned"].reason),
    }
    assert (dict(embedding._BACKENDS), dict(nli._BACKENDS), dict(llm._BACKENDS)) == loaded


@pytest.mark.django_db
def test_a_runs_own_options_decide_its_availability(settings, tmp_path, study):
    """A model the run names (inside an allowed directory) counts, not only the configured one."""
    settings.SCORING_MODEL_DIRS = [str(tmp_path)]
    own = nli_available(settings, tmp_path / "own-nli")
    settings.NLI_MODEL_DIR = ""  # none configured: only the run's own model_dir can make it available
    descriptor = BACKENDS["nli"]
    assert not descriptor.availability(study_id=study.pk).available
    options = backend_options_clean("nli", {"model_dir": str(own)}, study_id=study.pk)
    assert descriptor.availability(study_id=study.pk, options=options).available
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = descriptor.availability(study_id=study.pk, options={"model_dir": str(empty)})
    assert refused == Availability(False, f"model_dir {empty} holds no transformers model (no config.json)")
    settings.LLM_BASE_URL, settings.LLM_MODEL = "https://llm.invalid/v1", ""
    assert not BACKENDS["llm"].availability(study_id=study.pk).available
    assert BACKENDS["llm"].availability(study_id=study.pk, options={"model": "m"}).available


@pytest.mark.django_db
def test_the_status_page_the_form_and_the_api_read_the_same_descriptor(client, researcher, study, monkeypatch):
    """Change a descriptor and every reader follows: the page's status box and option rules, and the refusals the
    page and the API give."""
    switched_off = Availability(False, "switched off here")
    off = dataclasses.replace(BACKENDS["lexical"], check=lambda options, study_id: switched_off)
    samples = Option("integer", bounds=(1, 3))
    tight = dataclasses.replace(BACKENDS["llm"], options={**BACKENDS["llm"].options, "samples": samples})
    monkeypatch.setitem(BACKENDS, "lexical", off)
    monkeypatch.setitem(BACKENDS, "llm", tight)
    client.force_login(researcher)
    page = client.get(reverse("scoring:runs", args=[study.slug])).content.decode()
    assert "<strong>lexical</strong>: <span class=\"warn\">unavailable</span> — switched off here" in page
    assert "<code>samples</code> (an integer from 1 to 3)" in page
    api = APIClient()
    api.force_authenticate(researcher)
    refused = api.post(f"/api/scoring/studies/{study.slug}/runs/", {"metric": "cf", "backend": "lexical"},
                       format="json")
    assert refused.status_code == 400
    assert refused.json()["detail"] == "The lexical backend is not available here: switched off here."
    posted = client.post(reverse("scoring:run-start", args=[study.slug]), {"metric": "cf", "cf__backend": "lexical"})
    assert posted.status_code == 400 and "The lexical backend is not available here: switched off here." in (
        posted.content.decode()
    )
    with pytest.raises(ValidationFailed, match=r"llm\.samples must be an integer between 1 and 3"):
        backend_options_clean("llm", {"samples": 5}, study_id=study.pk)
    assert not ScoreRun.objects.exists()


@pytest.mark.django_db
def test_a_queued_run_is_named_by_its_backends_model_settings_until_a_worker_loads_it(
    settings, tmp_path, study, researcher
):
    llm_available(settings)
    run = services.score_run_start(study=study, metric="cf", backend="llm", parameters={}, actor=researcher)
    assert run.model_identity == "judge-model @ https://llm.invalid/v1"
    lexical = services.score_run_start(study=study, metric="cf", backend="lexical", parameters={}, actor=researcher)
    assert lexical.model_identity == "lexical"


def test_the_guide_lists_every_backend_with_its_queue_and_items_per_task():
    """docs/guide/run-scores.md's backend table states the descriptors' defaults; it must not drift from them."""
    guide = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "run-scores.md").read_text()
    rows = {
        m.group(1): (m.group(2), int(m.group(3)))
        for m in re.finditer(r"^\| `(\w+)` \| [^|]* \| `([\w-]+)` \| (\d+) \|", guide, re.M)
    }
    assert rows == {name: (d.queue, d.batch_size) for name, d in BACKENDS.items()}
