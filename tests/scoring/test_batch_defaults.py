"""Items per scoring task fit the backend without the user tuning them: a run that names no batch size
gets its backend's default (its descriptor's, unless the environment overrides it: settings.SCORING_BATCH_SIZE
and SCORING_BATCH_SIZES), a run that names one keeps it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings
from rest_framework.test import APIClient

from scoring import services
from scoring.backends import BACKEND_NAMES, BACKENDS
from scoring.models import ScoreBatch
from tests import factories
from tests.scoring.runs_support import eager_celery, nli_available
from tests.waiting import SUBPROCESS_TIMEOUT

ROOT = Path(__file__).resolve().parents[2]


def _start(study, researcher, **kw):
    args = {"metric": "probe", "backend": "lexical", "parameters": {}, "actor": researcher}
    args.update(kw)
    return services.score_run_start(study=study, **args)


def test_every_backend_has_a_default_batch_size_large_for_embedding_and_small_for_llm():
    sizes = {name: descriptor.batch_size for name, descriptor in BACKENDS.items()}
    assert set(sizes) == set(BACKEND_NAMES)
    assert all(1 <= size <= services.MAX_BATCH_SIZE for size in sizes.values())
    # One embedding or lexical task encodes its whole batch in one call: big batches amortise the
    # per-task overhead. An nli pair or an LLM request takes long: small batches keep retries and the
    # spread over workers fine-grained.
    for big in ("embedding", "learned", "lexical"):
        for small in ("nli", "llm"):
            assert sizes[big] >= 8 * sizes[small], (big, small, sizes)
    assert sizes["llm"] <= 8 and sizes["embedding"] >= 128


@pytest.mark.django_db
@pytest.mark.parametrize("backend", ["lexical", "nli"])
def test_a_run_without_a_batch_size_gets_its_backends_default(study, researcher, settings, tmp_path, backend):
    nli_available(settings, tmp_path / "nli")
    run = _start(study, researcher, backend=backend)
    assert run.batch_size == services.default_batch_size(backend)
    run.refresh_from_db()
    assert run.batch_size == services.default_batch_size(backend)


@pytest.mark.django_db
def test_an_explicit_batch_size_wins_over_the_backends_default(study, researcher, settings, tmp_path):
    nli_available(settings, tmp_path / "nli")
    assert services.default_batch_size("nli") != 7
    assert _start(study, researcher, backend="nli", batch_size=7).batch_size == 7


@pytest.mark.django_db
def test_the_api_without_a_batch_size_gets_the_backends_default(study, researcher, settings, tmp_path):
    nli_available(settings, tmp_path / "nli")
    client = APIClient()
    client.force_authenticate(researcher)
    response = client.post(
        f"/api/scoring/studies/{study.slug}/runs/", {"metric": "probe", "backend": "nli"}, format="json"
    )
    assert response.status_code == 201, response.content
    assert response.json()["batch_size"] == services.default_batch_size("nli")


@pytest.mark.django_db
def test_the_fan_out_cuts_batches_of_the_backends_default(study, researcher, django_capture_on_commit_callbacks):
    for i in range(7):
        factories.make_item(study, f"q{i}", answer="Metformin is first-line. Hello there!")
    sizes = {name: 1000 for name in BACKEND_NAMES} | {"lexical": 3}
    with override_settings(SCORING_BATCH_SIZES=sizes), eager_celery(), django_capture_on_commit_callbacks(execute=True):
        run = _start(study, researcher)
    assert run.batch_size == 3
    lengths = [len(b.item_ids) for b in ScoreBatch.objects.filter(run=run).order_by("index")]
    assert lengths == [3, 3, 1]


def test_an_override_changes_its_backend_only_and_a_backend_never_registered_is_a_configuration_error(settings):
    settings.SCORING_BATCH_SIZES = {"lexical": 10}
    assert services.default_batch_size("lexical") == 10
    assert services.default_batch_size("nli") == BACKENDS["nli"].batch_size
    settings.SCORING_BATCH_SIZE = 64
    assert (services.default_batch_size("lexical"), services.default_batch_size("nli")) == (10, 64)
    # A run row naming a backend this installation no longer has: its size cannot be guessed.
    with pytest.raises(ImproperlyConfigured, match="'retired-backend'"):
        services.default_batch_size("retired-backend")


def _sizes_under(**env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("SCORING_BATCH_SIZE")}
    base.update(env)
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'concord.settings'; "
            "django.setup(); from scoring import services; from scoring.backends import BACKEND_NAMES; "
            "print(' '.join(f'{b}={services.default_batch_size(b)}' for b in sorted(BACKEND_NAMES)))",
        ],
        cwd=ROOT,
        env=base,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
    )


def test_batch_sizes_come_from_the_environment_per_backend_or_for_all_and_refuse_bad_values(tmp_path):
    one = _sizes_under(CONCORD_VAR_DIR=str(tmp_path), SCORING_BATCH_SIZE="64", SCORING_BATCH_SIZE_LLM="2")
    assert one.returncode == 0, one.stderr
    assert one.stdout.split() == ["embedding=64", "learned=64", "lexical=64", "llm=2", "nli=64", "none=64"]
    too_big = _sizes_under(CONCORD_VAR_DIR=str(tmp_path), SCORING_BATCH_SIZE_NLI="20000")
    assert too_big.returncode != 0 and "ImproperlyConfigured" in too_big.stderr and "nli" in too_big.stderr
    zero = _sizes_under(CONCORD_VAR_DIR=str(tmp_path), SCORING_BATCH_SIZE_EMBEDDING="0")
    assert zero.returncode != 0 and "SCORING_BATCH_SIZE_EMBEDDING=0 must be at least 1" in zero.stderr
    # A misspelt backend would leave the embedding backend on its default unnoticed: the process stops.
    typo = _sizes_under(CONCORD_VAR_DIR=str(tmp_path), SCORING_BATCH_SIZE_EMBEDING="64")
    assert typo.returncode != 0 and "SCORING_BATCH_SIZE_EMBEDING names no backend" in typo.stderr
