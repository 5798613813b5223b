"""Knowledge bases: uploads chunked into passages all or nothing, through the service and the API."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from concord.errors import Conflict, PayloadTooLarge, ValidationFailed
from scoring import services
from scoring.models import KnowledgeBase, Passage

pytestmark = pytest.mark.django_db

JSONL = b'{"id": "d1", "text": "a b c d e f g"}\n{"id": "d2", "text": "h i j"}\n'


@pytest.fixture
def kb(study, researcher) -> KnowledgeBase:
    return services.knowledge_base_create(study=study, name="Leaflets", chunk_size=4, chunk_overlap=1, actor=researcher)


def test_a_jsonl_upload_becomes_overlapping_passages_and_bumps_the_version(
    kb, researcher, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        added = services.knowledge_base_add_documents(
            knowledge_base=kb, filename="kb.jsonl", content=JSONL, actor=researcher
        )
    assert added == 3
    assert list(kb.passages.order_by("document_id", "index").values_list("document_id", "index", "text")) == [
        ("d1", 0, "a b c d"),
        ("d1", 1, "d e f g"),
        ("d2", 0, "h i j"),
    ]
    assert kb.version == 1
    assert len(callbacks) == 1  # the embedding task, after commit


def test_a_plain_text_upload_is_one_document_named_after_the_file(kb, researcher):
    services.knowledge_base_add_documents(
        knowledge_base=kb, filename="leaflet.txt", content=b"one two three", actor=researcher
    )
    assert list(kb.passages.values_list("document_id", "text")) == [("leaflet.txt", "one two three")]


@pytest.mark.parametrize(
    ("filename", "content", "error", "message"),
    [
        ("kb.jsonl", b'{"id": "d1", "text": "ok"}\n{broken\n', ValidationFailed, "line 2: malformed JSON"),
        ("kb.jsonl", b'{"id": "d1"}\n', ValidationFailed, "line 1: field 'text'"),
        ("kb.txt", b"\xff\xfe\x00bad", ValidationFailed, "not UTF-8"),
        ("kb.txt", b"   ", ValidationFailed, "empty"),
    ],
)
def test_a_bad_upload_is_refused_and_writes_nothing(kb, researcher, filename, content, error, message):
    with pytest.raises(error, match=message):
        services.knowledge_base_add_documents(knowledge_base=kb, filename=filename, content=content, actor=researcher)
    assert not Passage.objects.exists()
    kb.refresh_from_db()
    assert kb.version == 0


def test_reuploading_a_document_id_is_refused_not_duplicated(kb, researcher):
    services.knowledge_base_add_documents(knowledge_base=kb, filename="kb.jsonl", content=JSONL, actor=researcher)
    with pytest.raises(Conflict, match="d1"):
        services.knowledge_base_add_documents(
            knowledge_base=kb,
            filename="kb.jsonl",
            content=b'{"id": "d1", "text": "x"}\n{"id": "d3", "text": "y"}',
            actor=researcher,
        )
    assert kb.passages.count() == 3 and not kb.passages.filter(document_id="d3").exists()


def test_an_upload_over_the_limit_is_refused(kb, researcher, monkeypatch):
    monkeypatch.setattr(services, "KB_MAX_BYTES", 10)
    with pytest.raises(PayloadTooLarge):
        services.knowledge_base_add_documents(knowledge_base=kb, filename="kb.txt", content=b"x" * 11, actor=researcher)


def test_the_api_creates_a_knowledge_base_and_takes_a_file_or_json(study, researcher):
    api = APIClient()
    api.force_authenticate(researcher)
    created = api.post(
        f"/api/scoring/studies/{study.slug}/knowledge-bases/",
        {"name": "KB", "chunk_size": 3, "chunk_overlap": 0},
        format="json",
    )
    assert created.status_code == 201, created.data
    kb_id = created.data["id"]
    upload = api.post(
        f"/api/scoring/knowledge-bases/{kb_id}/documents/",
        {"file": SimpleUploadedFile("kb.jsonl", JSONL)},
        format="multipart",
    )
    assert upload.status_code == 201 and upload.data["passages_added"] == 4
    as_json = api.post(
        f"/api/scoring/knowledge-bases/{kb_id}/documents/", {"filename": "note.txt", "content": "x y"}, format="json"
    )
    assert as_json.status_code == 201 and as_json.data["knowledge_base"]["n_passages"] == 5
    bad = api.post(
        f"/api/scoring/knowledge-bases/{kb_id}/documents/", {"filename": "k.jsonl", "content": "{"}, format="json"
    )
    assert bad.status_code == 400 and "line 1" in bad.data["detail"]


def test_a_run_with_a_knowledge_base_grounds_claims_in_retrieved_passages(
    study, researcher, django_capture_on_commit_callbacks
):
    from scoring.models import Score, ScoreRun
    from tests import factories
    from tests.scoring.runs_support import eager_celery

    kb = services.knowledge_base_create(study=study, name="Leaflets", chunk_size=30, chunk_overlap=5, actor=researcher)
    services.knowledge_base_add_documents(
        knowledge_base=kb,
        filename="leaflets.jsonl",
        actor=researcher,
        content=b'{"id": "metformin", "text": "Metformin is the usual first-line drug for type 2 diabetes."}\n'
        b'{"id": "asthma", "text": "An inhaler opens the airways quickly during an asthma attack."}\n',
    )
    item = factories.make_item(study, "i1", answer="Metformin is the usual first-line drug for type 2 diabetes.")
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        run = services.score_run_start(
            study=study,
            metric="icat",
            backend="lexical",
            parameters={"source": "kb", "k": 1},
            actor=researcher,
            knowledge_base=kb,
            retrieval_alpha=0.5,
        )
    run = ScoreRun.objects.get(pk=run.pk)
    assert run.status == "done", run.error
    scores = {s.unit_key: s for s in Score.objects.filter(run=run, item=item)}
    assert "metformin" in str(scores["item"].details)  # the retrieved passage is the evidence
    kb.refresh_from_db()
    assert kb.embedding_model.startswith("embedding:") and not kb.passages.filter(embedding__isnull=True).exists()


def test_a_knowledge_base_or_run_with_a_size_beyond_any_database_integer_is_refused_not_a_500(study, researcher):
    with pytest.raises(ValidationFailed):
        services.knowledge_base_create(study=study, name="kb", chunk_size=2**70, chunk_overlap=0, actor=researcher)
    with pytest.raises(ValidationFailed):
        services.score_run_start(
            study=study, metric="cf", backend="lexical", parameters={}, actor=researcher, batch_size=2**70
        )


def test_a_studys_knowledge_bases_are_listed_by_name(study):
    """The list counts passages (GROUP BY), which drops the model's ordering unless it is asked again."""
    from scoring.models import KnowledgeBase
    from scoring.selectors import knowledge_bases_for_study

    for name in ("zeta", "alpha", "mu"):
        KnowledgeBase.objects.create(study=study, name=name)
    assert [kb.name for kb in knowledge_bases_for_study(study)] == ["alpha", "mu", "zeta"]
