"""The import format as a researcher meets it: the reference in docs/ and on the upload page, an
example file per preset that imports cleanly, the dry run's preview of the first items as an annotator
will see them, long answers flagged, and a Concord export pointed to the command that imports it."""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from adjudication.exports.writers import write_export
from annotation.console import services as svc
from annotation.imports import FIELDS, items_import
from annotation.imports.reference import EXAMPLES, docs_dir, format_reference
from annotation.imports.schema import EXPORT_HINT
from annotation.imports.validation import long_answer
from annotation.models import ImportJob, Item, Label, Role
from annotation.presets import PRESET_ORDER
from concord.errors import ValidationFailed
from tests import factories
from tests.annotation.console_helpers import eager_celery, fast_password_hashing, jsonl

pytestmark = pytest.mark.django_db
__all__ = ["eager_celery", "fast_password_hashing"]


@pytest.fixture
def rita(client, researcher):
    client.force_login(researcher)
    return client


def _preset_of(example: str) -> str:
    return example.split(".")[0]


def test_the_reference_documents_every_field_every_unit_kind_and_every_preset():
    doc = format_reference()
    for name in FIELDS:
        assert f"`{name}`" in doc or name in ("gold", "scores"), name
    for unit in ("`item`", "`s:<i>`", "`c:<rank>`", "`a:<i>`", "must_have", "nice_to_have", "is_target"):
        assert unit in doc, unit
    for preset in PRESET_ORDER:
        assert f"| `{preset}` |" in doc, preset
    assert {_preset_of(e) for e in EXAMPLES} == set(PRESET_ORDER)
    for name in EXAMPLES:
        assert (docs_dir() / "import-examples" / name).is_file()


@pytest.mark.parametrize("example", EXAMPLES)
def test_each_example_file_imports_into_a_study_of_its_preset(researcher, example):
    study = svc.study_create(owner=researcher, name=f"Example {example}", presets=[_preset_of(example)])
    content = (docs_dir() / "import-examples" / example).read_bytes()
    result = items_import(study=study, file=io.BytesIO(content), filename=example)
    assert result.n_items == 2
    assert Item.objects.filter(study=study).count() == 2
    # Every example shows labels with unit keys, and every one of them lands.
    assert result.n_labels > 0
    assert Label.objects.filter(assignment__item__study=study).count() == result.n_labels


def test_the_upload_page_shows_the_reference_and_offers_the_examples(rita, researcher):
    study = svc.study_create(owner=researcher, name="Uploads", presets=["astrid"])
    page = rita.get(reverse("console:items", args=[study.slug])).content.decode()
    assert "Import format reference" in page
    assert "<h2>Labels and unit keys</h2>" in page or "<h3>Labels and unit keys</h3>" in page
    for name in EXAMPLES:
        assert reverse("console:import_example", args=[study.slug, name]) in page
    download = rita.get(reverse("console:import_example", args=[study.slug, "icat.jsonl"]))
    assert download.status_code == 200
    assert download["Content-Disposition"] == 'attachment; filename="icat.jsonl"'
    assert b'"aspects"' in download.content
    assert rita.get(reverse("console:import_example", args=[study.slug, "..%2Fsettings.py"])).status_code == 404
    assert rita.get(reverse("console:import_format", args=[study.slug])).status_code == 200


def test_the_examples_are_for_researchers_only(client, researcher, annotator, stranger):
    study = svc.study_create(owner=researcher, name="Uploads", presets=["astrid"])
    factories.grant(study, annotator, Role.ANNOTATOR)
    url = reverse("console:import_example", args=[study.slug, "astrid.jsonl"])
    client.force_login(annotator)
    assert client.get(url).status_code == 403
    client.force_login(stranger)
    assert client.get(url).status_code == 404


def _checked_job(rita, study, content: bytes, capture) -> ImportJob:
    with capture(execute=True):
        rita.post(reverse("console:import_upload", args=[study.slug]),
                  {"file": SimpleUploadedFile("items.jsonl", content)}, HTTP_HX_REQUEST="true")
    return ImportJob.objects.get(study=study)


def test_the_dry_run_previews_the_first_items_as_an_annotator_will_see_them(
    rita, researcher, eager_celery, django_capture_on_commit_callbacks
):
    study = svc.study_create(owner=researcher, name="Blind", presets=["astrid"], blind_system=True,
                             hidden_metadata_fields=["model"])
    records = [
        {"id": f"r{n}", "question": f"Question {n}?", "answer": "First <b>sentence</b>. Second one here.",
         "contexts": [{"id": "secret-doc-7", "text": "A passage."}], "system": "gpt-secret",
         "metadata": {"model": "gpt-secret-2025"}, "aspects": [{"text": "Says X", "importance": "nice_to_have"}]}
        for n in range(1, 6)
    ]
    job = _checked_job(rita, study, jsonl(*records), django_capture_on_commit_callbacks)
    assert job.status == "checked"
    assert [p["id"] for p in job.summary["preview"]] == ["r1", "r2", "r3"]
    first = job.summary["preview"][0]
    assert first["sentences"] == ["First <b>sentence</b>.", "Second one here."]
    page = rita.get(reverse("console:import_job", args=[study.slug, job.pk])).content.decode()
    assert "as an annotator will see them" in page
    assert "<li>First &lt;b&gt;sentence&lt;/b&gt;.</li>" in page
    assert "Nice to have" in page
    # Blinding holds in the preview as on the item page: no system, no document id, no hidden metadata.
    assert "System: hidden from annotators" in page
    for secret in ("gpt-secret", "secret-doc-7"):
        assert secret not in page
        assert secret not in json.dumps(job.summary["preview"])  # nor kept in what the job stores
    assert not Item.objects.filter(study=study).exists()


def test_long_answers_are_flagged_in_the_dry_run_and_the_limits_are_settings(
    rita, researcher, eager_celery, django_capture_on_commit_callbacks, settings
):
    study = svc.study_create(owner=researcher, name="Long", presets=["astrid"])
    many = " ".join(f"Sentence number {i} is here." for i in range(61))
    records = [
        {"id": "short", "question": "Q?", "answer": "Short answer."},
        {"id": "wordy", "question": "Q?", "answer": "word " * 1100},
        {"id": "many", "question": "Q?", "answer": many},
    ]
    job = _checked_job(rita, study, jsonl(*records), django_capture_on_commit_callbacks)
    assert job.summary["n_long_answers"] == 2
    flagged = {a["id"]: a for a in job.summary["long_answers"]}
    assert set(flagged) == {"wordy", "many"}
    assert "5,500 characters (over 5,000)" in flagged["wordy"]["reason"]
    assert flagged["many"]["sentences"] == 61 and "61 sentences (over 60)" in flagged["many"]["reason"]
    assert flagged["many"]["location"] == "line 3"
    page = rita.get(reverse("console:import_job", args=[study.slug, job.pk])).content.decode()
    assert "2 long answers" in page
    # Flagged, not refused: the import goes ahead on confirmation.
    assert job.status == "checked"
    settings.IMPORT_LONG_ANSWER_SENTENCES = 2
    settings.IMPORT_LONG_ANSWER_CHARS = 100_000
    result = items_import(study=study, file=io.BytesIO(jsonl(*records)), filename="x.jsonl", dry_run=True)
    assert result.n_long_answers == 1 and result.long_answers[0]["id"] == "many"


def test_an_answer_at_the_limits_is_not_flagged():
    assert long_answer("x" * 5000, max_chars=5000, max_sentences=60) is None
    assert long_answer("A b. " * 60, max_chars=5000, max_sentences=60) is None
    assert long_answer("x" * 5001, max_chars=5000, max_sentences=60)["chars"] == 5001


def test_import_items_given_a_concord_export_names_import_study_export(researcher, tmp_path, capsys):
    source = svc.study_create(owner=researcher, name="Exported", presets=["astrid"])
    items_import(study=source, file=io.BytesIO((docs_dir() / "import-examples" / "astrid.jsonl").read_bytes()),
                 filename="astrid.jsonl")
    export = write_export(study=source, fmt="jsonl", out=tmp_path / "export.jsonl")
    target = svc.study_create(owner=researcher, name="Target", presets=["astrid"])
    with pytest.raises(CommandError, match="import_study_export"):
        call_command("import_items", str(export), "--study", target.slug)
    err = capsys.readouterr().err
    assert "line 1" in err and err.count("\n") <= 3
    # The service (page and API) names the line and the export's field, with the same hint.
    with pytest.raises(ValidationFailed) as refused:
        items_import(study=target, file=io.BytesIO(export.read_bytes()), filename="export.jsonl")
    assert refused.value.details == [{"location": "line 1", "field": "concord_export", "reason": EXPORT_HINT}]
    assert not Item.objects.filter(study=target).exists()


def test_import_items_given_the_long_csv_export_says_it_is_not_an_item_file(researcher, tmp_path, capsys):
    source = svc.study_create(owner=researcher, name="Exported", presets=["astrid"])
    items_import(study=source, file=io.BytesIO((docs_dir() / "import-examples" / "astrid.jsonl").read_bytes()),
                 filename="astrid.jsonl")
    export = write_export(study=source, fmt="csv", out=tmp_path / "export.csv")
    target = svc.study_create(owner=researcher, name="Target", presets=["astrid"])
    with pytest.raises(CommandError) as info:
        call_command("import_items", str(export), "--study", target.slug)
    assert "1 error" in str(info.value)
    assert "long CSV export" in capsys.readouterr().err


def test_the_example_csv_and_jsonl_import_the_same_items(researcher):
    a = svc.study_create(owner=researcher, name="A", presets=["astrid"])
    b = svc.study_create(owner=researcher, name="B", presets=["astrid"])
    for study, name in ((a, "astrid.jsonl"), (b, "astrid.csv")):
        items_import(study=study, file=io.BytesIO((docs_dir() / "import-examples" / name).read_bytes()), filename=name)

    def shape(study):
        return [(i.external_id, i.question, i.answer, i.system, json.dumps(i.metadata, sort_keys=True))
                for i in Item.objects.filter(study=study).order_by("external_id")]

    assert shape(a) == shape(b)


def test_a_real_import_flags_the_same_long_answers_as_its_dry_run(researcher, settings):
    # The dry run flags them in its check; a real import in its write pass, which splits every answer.
    study = svc.study_create(owner=researcher, name="Long real", presets=["astrid"])
    settings.IMPORT_LONG_ANSWER_SENTENCES = 2
    records = [
        {"id": "one", "question": "Q?", "answer": "Short answer."},
        {"id": "three", "question": "Q?", "answer": "One here. Two here. Three here."},
        {"id": "long", "question": "Q?", "answer": "word " * 1100},
    ]
    dry = items_import(study=study, file=io.BytesIO(jsonl(*records)), filename="x.jsonl", dry_run=True)
    real = items_import(study=study, file=io.BytesIO(jsonl(*records)), filename="x.jsonl")
    assert real.n_long_answers == dry.n_long_answers == 2
    assert real.long_answers == dry.long_answers
    assert [a["location"] for a in real.long_answers] == ["line 2", "line 3"]
