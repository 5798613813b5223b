"""Export, then import into a new study: every label, gold version (with provenance) and score comes
back, on the K-QA demo study that `manage.py load_demo` builds."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from adjudication.exports.roundtrip import study_canonical, study_import_export
from adjudication.exports.writers import write_export
from adjudication.models import AdjudicationCase, GoldLabel
from adjudication.services import aspect_decide, case_resolve, item_disagreements_detect
from annotation.models import Aspect, AspectOrigin, AspectStatus, Item, Label, Pool, Study
from concord.errors import Conflict, ValidationFailed
from scoring.models import Score, ScoreRun


@pytest.fixture
def kqa_demo(db):
    """The demo study, with detection run over the physicians' labels, decisions (one re-adjudicated,
    one unresolved), an accepted and a rejected proposed aspect, and a score run on items and aspects."""
    call_command("load_demo", "--no-begin", stdout=io.StringIO())
    study = Study.objects.get(slug="kqa-demo")
    adjudicator = get_user_model().objects.get(username="demo-adjudicator")
    annotator = get_user_model().objects.get(username="demo-annotator-1")
    physicians = Pool.objects.filter(study=study, assignments__labels__isnull=False).distinct().get()
    for item_id in Item.objects.filter(study=study).values_list("pk", flat=True):
        item_disagreements_detect(pool_id=physicians.pk, item_id=item_id)
    first, second = AdjudicationCase.objects.filter(pool=physicians).order_by("pk")[:2]
    case_resolve(
        case_id=first.pk, actor=adjudicator, value="entailment", rationale="states it", confidence=4, expected_version=0
    )
    case_resolve(
        case_id=first.pk,
        actor=adjudicator,
        value="neutral",
        rationale="on reflection",
        guideline_gap=True,
        expected_version=1,
        revise_reason="the passage is about another drug",
    )
    case_resolve(case_id=second.pk, actor=adjudicator, unresolved=True, rationale="ambiguous")
    item = Item.objects.filter(study=study).order_by("pk").first()
    for text, accept in (("Ask about kidney function", True), ("Mention the weather", False)):
        aspect = Aspect.objects.create(
            item=item, text=text, origin=AspectOrigin.PROPOSED, status=AspectStatus.PROPOSED, proposed_by=annotator
        )
        aspect_decide(aspect_id=aspect.pk, actor=adjudicator, accept=accept)
    run = ScoreRun.objects.create(
        study=study,
        metric="icat_coverage",
        metric_version="1.2",
        backend="embedding",
        model_identity="all-MiniLM-L6-v2@gt-0.1.0",
        parameters={"beta": 1},
        status="done",
    )
    for n, one in enumerate(Item.objects.filter(study=study).order_by("pk")[:10]):
        Score.objects.create(run=run, item=one, unit_key="item", value=n / 10, state="ok", details={"claims": [n]})
        aspect = one.aspects.order_by("pk").first()
        Score.objects.create(
            run=run, item=one, unit_key=f"a:{aspect.pk}", value=None, state="undetermined", details={"why": "no claims"}
        )
    return study


def test_the_kqa_demo_survives_an_export_and_import_unchanged(kqa_demo, tmp_path):
    kqa_demo.visible_metadata_fields = ["source"]
    kqa_demo.save(update_fields=["visible_metadata_fields"])
    out = write_export(study=kqa_demo, fmt="jsonl", out=tmp_path / "kqa.jsonl")
    call_command(
        "import_study_export",
        str(out),
        "--study",
        "kqa-roundtrip",
        "--create",
        "--owner",
        "demo-researcher",
        stdout=io.StringIO(),
    )
    copy = Study.objects.get(slug="kqa-roundtrip")
    before, after = study_canonical(kqa_demo), study_canonical(copy)
    assert len(before["labels"]) == Label.objects.filter(assignment__pool__study=kqa_demo).count() >= 399 * 3
    assert len(before["gold"]) > 300 and len(before["scores"]) == 20
    assert {g[2] for g in before["gold"].values()} >= {"unanimous", "adjudicated", "unresolved"}
    for part in ("labels", "assignments", "gold", "cases", "aspects", "scores"):
        assert after[part] == before[part], part
    assert copy.licence == kqa_demo.licence and copy.licence
    # What annotators may see travels with the study: the copy shows exactly the same metadata keys.
    assert copy.visible_metadata_fields == ["source"]
    assert copy.hidden_metadata_fields == kqa_demo.hidden_metadata_fields
    assert Item.objects.filter(study=copy).count() == Item.objects.filter(study=kqa_demo).count()
    # the imported annotators are pseudonymous accounts that cannot log in
    assert not get_user_model().objects.filter(pool_memberships__study=copy, is_active=True).exists()


def test_a_second_export_of_the_imported_study_equals_the_first(kqa_demo, tmp_path):
    first = write_export(study=kqa_demo, fmt="jsonl", out=tmp_path / "a.jsonl")
    owner = get_user_model().objects.get(username="demo-researcher")
    copy = study_import_export(path=first, slug="kqa-copy", owner=owner)
    second = write_export(study=copy, fmt="jsonl", out=tmp_path / "b.jsonl")
    records = lambda path: [json.loads(line) for line in path.read_text().splitlines()[1:]]  # noqa: E731
    a, b = records(first), records(second)
    # Who accepted a proposed aspect is a local account; the copy keeps the decision, not the account.
    for record in a + b:
        for aspect in record["aspects"]:
            aspect.pop("decided_by")
    assert a == b


def test_a_broken_line_imports_nothing(kqa_demo, tmp_path):
    out = write_export(study=kqa_demo, fmt="jsonl", out=tmp_path / "kqa.jsonl")
    lines = out.read_text().splitlines()
    lines[5] = lines[5][:40]
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines) + "\n")
    owner = get_user_model().objects.get(username="demo-researcher")
    gold_before = GoldLabel.objects.count()
    with pytest.raises(ValidationFailed):
        study_import_export(path=broken, slug="kqa-broken", owner=owner)
    assert not Study.objects.filter(slug="kqa-broken").exists()
    assert GoldLabel.objects.count() == gold_before


def test_an_existing_slug_or_a_foreign_file_is_refused(kqa_demo, tmp_path):
    owner = get_user_model().objects.get(username="demo-researcher")
    out = write_export(study=kqa_demo, fmt="jsonl", out=tmp_path / "kqa.jsonl")
    with pytest.raises(Conflict):
        study_import_export(path=out, slug="kqa-demo", owner=owner)
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"id": "1", "question": "q", "answer": "a"}\n')
    with pytest.raises(ValidationFailed, match="header"):
        study_import_export(path=plain, slug="kqa-plain", owner=owner)
    with pytest.raises(CommandError, match="--create"):
        call_command("import_study_export", str(out), "--study", "x")
