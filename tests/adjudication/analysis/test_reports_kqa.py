"""The reports on K-QA's real physicians, imported through the real importer (as load_demo does)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from adjudication.analysis.agreement import agreement_report
from annotation.models import Pool, Study
from tests import factories

ROOT = Path(__file__).resolve().parents[3]
CANDIDATES = [
    ROOT / "data" / "demo" / "kqa" / "NLI_medical_annotator.csv",
    ROOT.parent / "shared" / "datasets" / "kqa" / "NLI_medical_annotator.csv",
]
KQA = next((p for p in CANDIDATES if p.exists()), CANDIDATES[0])


@pytest.fixture
def kqa_study(researcher, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    call_command(
        "import_items",
        str(KQA),
        "--study",
        "kqa-test",
        "--create",
        "--protocol",
        "kqa",
        "--adapter",
        "kqa-nli",
        "--owner",
        researcher.get_username(),
        verbosity=0,
    )
    study = Study.objects.get(slug="kqa-test")
    return study, Pool.objects.get(study=study, name="K-QA physicians")


@pytest.mark.slow
def test_physicians_agreement_reproduces_the_manifest_on_the_pages_too(client, researcher, annotator, kqa_study):
    # data/demo/kqa/MANIFEST.md: Fleiss κ 0.7189, α 0.7191, pairwise κ 0.6696 / 0.7612 / 0.7317.
    study, pool = kqa_study
    rep = agreement_report(pool=pool, question=pool.questions.get(key="aspect_entailment"))
    assert (rep["n_units"], rep["n_raters"], rep["n_excluded_units"], rep["n_off_scale_ratings"]) == (399, 3, 0, 0)
    assert round(rep["fleiss_kappa"]["value"], 4) == 0.7189
    assert round(rep["krippendorff_alpha"]["value"], 4) == 0.7191
    assert [round(p["value"], 4) for p in rep["cohen_kappa_pairs"]] == [0.6696, 0.7612, 0.7317]
    assert round(rep["per_label"][0]["value"], 4) == 0.7149 and rep["per_label"][0]["label"] == "entailment"

    # The pages render the same figures, for the study's researchers only (one import, so one test).
    client.force_login(researcher)
    index = client.get(reverse("adjudication:report-index", args=[study.slug]))
    assert index.status_code == 200 and "0.719" in index.content.decode()
    page = client.get(reverse("adjudication:report-agreement", args=[study.slug, pool.pk, "aspect_entailment"]))
    body = page.content.decode()
    assert page.status_code == 200 and "physician-1" in body and "0.670" in body and "0.761" in body
    factories.grant(study, annotator, "annotator")
    client.force_login(annotator)
    assert client.get(reverse("adjudication:report-index", args=[study.slug])).status_code == 403
    client.force_login(factories.make_user("outsider"))
    assert client.get(reverse("adjudication:report-index", args=[study.slug])).status_code == 404
