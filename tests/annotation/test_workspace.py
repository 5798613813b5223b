"""The annotator's pages: queue, item page, autosave fragments, submit, skip, proposals."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation import services
from annotation.models import Aspect, AssignmentStatus, Exposure, Label
from annotation.protocols import study_protocol_apply
from annotation.services import pool_assign_items
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Factories give every user a password; the production hasher would dominate these tests."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def astrid(study, annotator, no_submit_receivers):
    study.guidelines = "# Read me\n\nMark **every** sentence. <script>alert(1)</script>"
    study.save()
    questions = study_protocol_apply(study=study, presets="astrid")
    item = factories.make_item(study, "i1", answer="Take 0.5 mg daily. I hope this helps!", question="What dose of X?")
    factories.make_chunk(item, 1, "X is dosed at 0.5 mg once daily.")
    factories.make_chunk(item, 2, "Unrelated passage.")
    pool = factories.make_pool(study, "clinicians", questions=questions)
    factories.add_member(pool, annotator)
    pool_assign_items(pool=pool)
    return {
        "pool": pool,
        "item": item,
        "questions": {q.key: q for q in questions},
        "assignment": pool.assignments.get(),
    }


def post_label(client, assignment, question, unit, value, base=0, **extra):
    data = {"question": question, "unit_key": unit, "base_version": base}
    if value is not None:
        data["value"] = value
    data.update(extra)
    return client.post(reverse("annotation:label-save", args=[assignment.pk]), data, **HX)


def test_queue_shows_my_studies_pools_and_progress(client, annotator, astrid):
    client.force_login(annotator)
    body = client.get(reverse("annotation:home")).content.decode()
    assert astrid["pool"].study.name in body and "clinicians" in body
    assert "0 / 1" in body
    assert reverse("annotation:pool-continue", args=[astrid["pool"].pk]) in body


def test_continue_opens_the_next_item(client, annotator, astrid):
    client.force_login(annotator)
    response = client.get(reverse("annotation:pool-continue", args=[astrid["pool"].pk]))
    assert response.status_code == 302
    assert response.url == reverse("annotation:item", args=[astrid["assignment"].pk])


def test_item_page_shows_sentences_chunks_questions_and_guidelines_safely(client, annotator, astrid):
    client.force_login(annotator)
    response = client.get(reverse("annotation:item", args=[astrid["assignment"].pk]))
    body = response.content.decode()
    assert response.status_code == 200
    assert "Take 0.5 mg daily." in body and "I hope this helps!" in body
    assert "X is dosed at 0.5 mg once daily." in body
    assert "<strong>every</strong>" in body  # Markdown rendered
    assert "<script>alert(1)</script>" not in body  # but never raw HTML
    # grounded is conditional on information_bearing = yes: not shown yet
    assert 'data-question="information_bearing"' in body
    assert 'data-question="grounded"' not in body
    assert "Vary" in response.headers and "HX-Request" in response.headers["Vary"]


def test_opening_an_item_records_what_was_shown(client, annotator, astrid):
    client.force_login(annotator)
    client.get(reverse("annotation:item", args=[astrid["assignment"].pk]))
    exposure = Exposure.objects.get()
    assert (exposure.user, exposure.pool, exposure.item) == (annotator, astrid["pool"], astrid["item"])
    assert not exposure.showed_scores and not exposure.showed_other_labels and not exposure.showed_system


def test_an_item_page_reserves_the_item_and_records_what_it_showed_in_one_transaction(
    client, annotator, astrid, monkeypatch
):
    # One commit for both writes of a page view; and a reservation is never left without its exposure record.
    def fail(**kwargs):
        raise RuntimeError("the exposure could not be written")

    monkeypatch.setattr(services, "exposure_record", fail)
    client.force_login(annotator)
    with pytest.raises(RuntimeError):
        client.get(reverse("annotation:item", args=[astrid["assignment"].pk]))
    astrid["assignment"].refresh_from_db()
    assert astrid["assignment"].status == AssignmentStatus.ASSIGNED
    assert astrid["assignment"].reserved_until is None and astrid["assignment"].started_at is None


def test_saving_returns_the_unit_fragment_with_the_conditional_question_and_an_acknowledgement(
    client, annotator, astrid
):
    client.force_login(annotator)
    response = post_label(client, astrid["assignment"], "information_bearing", "s:0", "yes")
    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<section class="unit')
    assert 'data-question="grounded"' in body
    assert "Saved on the server" in body
    assert Label.objects.get().value == "yes"


def test_a_stale_save_answers_409_with_the_newer_value_who_and_when(client, annotator, astrid):
    client.force_login(annotator)
    post_label(client, astrid["assignment"], "perceived_faithfulness", "item", "4")
    response = post_label(client, astrid["assignment"], "perceived_faithfulness", "item", "2", base=0)
    body = response.content.decode()
    assert response.status_code == 409
    assert 'class="conflict"' in body
    assert "set by you" in body and annotator.get_username() not in body
    assert "Save my answer (2) over it" in body  # the unsaved answer is offered again
    assert Label.objects.get().value == "4"


def test_an_invalid_answer_answers_400_and_stores_nothing(client, annotator, astrid):
    client.force_login(annotator)
    response = post_label(client, astrid["assignment"], "perceived_faithfulness", "item", "99")
    assert response.status_code == 400
    assert "Not saved" in response.content.decode()
    assert not Label.objects.exists()


def test_clearing_an_answer_keeps_its_history(client, annotator, astrid):
    client.force_login(annotator)
    post_label(client, astrid["assignment"], "perceived_faithfulness", "item", "4")
    response = post_label(client, astrid["assignment"], "perceived_faithfulness", "item", None, base=1, clear="1")
    assert response.status_code == 200
    label = Label.objects.get()
    assert label.value is None and label.history.count() == 2


def test_submit_lists_what_is_missing(client, annotator, astrid):
    client.force_login(annotator)
    response = client.post(reverse("annotation:submit", args=[astrid["assignment"].pk]), **HX)
    body = response.content.decode()
    assert response.status_code == 400
    assert "Not submitted" in body and "Sentence 1" in body and "#unit-s-0" in body


def _answer_everything(client, assignment):
    for unit in ("s:0", "s:1"):
        post_label(client, assignment, "information_bearing", unit, "no")
    for unit in ("c:1", "c:2"):
        post_label(client, assignment, "context_relevant", unit, "yes")
    for key, value in [
        ("perceived_faithfulness", "5"),
        ("scope_class", "in_scope"),
        ("refused", "no"),
        ("refusal_appropriate", "yes"),
        ("harmful", "none"),
        ("helpful", "somewhat_helpful"),
        ("inappropriate", "none"),
    ]:
        assert post_label(client, assignment, key, "item", value).status_code == 200


def test_submit_when_complete_redirects_to_the_next_item_and_is_idempotent(client, annotator, astrid):
    client.force_login(annotator)
    _answer_everything(client, astrid["assignment"])
    url = reverse("annotation:submit", args=[astrid["assignment"].pk])
    first = client.post(url, **HX)
    second = client.post(url, **HX)
    assert first.status_code == second.status_code == 200
    assert first.headers["HX-Redirect"] == reverse("annotation:pool-continue", args=[astrid["pool"].pk])
    astrid["assignment"].refresh_from_db()
    assert astrid["assignment"].status == AssignmentStatus.SUBMITTED
    body = client.get(reverse("annotation:item", args=[astrid["assignment"].pk])).content.decode()
    assert "read-only" in body and "<fieldset disabled>" in body


def test_skip_needs_a_reason(client, annotator, astrid):
    client.force_login(annotator)
    url = reverse("annotation:skip", args=[astrid["assignment"].pk])
    client.post(url, {"reason": ""})
    astrid["assignment"].refresh_from_db()
    assert astrid["assignment"].status != AssignmentStatus.SKIPPED
    response = client.post(url, {"reason": "Not my specialty"})
    assert response.status_code == 302
    astrid["assignment"].refresh_from_db()
    assert astrid["assignment"].status == AssignmentStatus.SKIPPED


def test_proposing_an_aspect_shows_it_as_mine_and_pending(client, annotator, astrid):
    client.force_login(annotator)
    response = client.post(
        reverse("annotation:aspect-propose", args=[astrid["assignment"].pk]),
        {"text": "Renal <b>dosing</b>", "importance": "nice_to_have"},
        **HX,
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert "Renal &lt;b&gt;dosing&lt;/b&gt;" in body and "waiting for review" in body
    assert Aspect.objects.get().status == "proposed"


def test_active_time_is_recorded(client, annotator, astrid):
    client.force_login(annotator)
    response = client.post(reverse("annotation:active-time", args=[astrid["assignment"].pk]), {"seconds": "31.5"})
    assert response.json() == {"added": 31.5}
    astrid["assignment"].refresh_from_db()
    assert astrid["assignment"].active_seconds == 31.5


def test_the_item_page_uses_a_fixed_number_of_queries(client, annotator, astrid, django_assert_max_num_queries):
    client.force_login(annotator)
    for n in range(3, 15):
        factories.make_chunk(astrid["item"], n, f"passage {n}")
    # 17 today, whatever the number of chunks and sentences; a loop over units would blow this.
    with django_assert_max_num_queries(20):
        assert client.get(reverse("annotation:item", args=[astrid["assignment"].pk])).status_code == 200
    with django_assert_max_num_queries(28):
        assert post_label(client, astrid["assignment"], "context_relevant", "c:9", "yes").status_code == 200


@pytest.fixture
def plainfact_icat(study, annotator, no_submit_receivers):
    questions = study_protocol_apply(study=study, presets="plainfact,icat")
    item = factories.make_item(
        study,
        "pf1",
        answer="Aspirin thins blood. It is a common drug.",
        source="Aspirin inhibits platelets. It is widely used. Doses vary.",
    )
    from annotation.models import Sentence
    from annotation.segmentation import split_sentences

    Sentence.objects.bulk_create(
        Sentence(item=item, part="source", index=i, text=s.text, start=s.start, end=s.end)
        for i, s in enumerate(split_sentences(item.source))
    )
    accepted = Aspect.objects.create(item=item, text="Mentions bleeding risk")
    Aspect.objects.create(
        item=item,
        text="Someone else's proposal",
        origin="proposed",
        status="proposed",
        proposed_by=factories.make_user(),
    )
    pool = factories.make_pool(study, questions=questions)
    factories.add_member(pool, annotator)
    pool_assign_items(pool=pool)
    return {"assignment": pool.assignments.get(), "aspect": accepted, "item": item}


def test_functional_roles_take_several_values_and_unticking_all_saves_an_empty_list(client, annotator, plainfact_icat):
    client.force_login(annotator)
    a = plainfact_icat["assignment"]
    url = reverse("annotation:label-save", args=[a.pk])
    response = client.post(
        url,
        {
            "question": "functional_role",
            "unit_key": "s:0",
            "base_version": 0,
            "list": "1",
            "value": ["example", "background"],
        },
        **HX,
    )
    assert response.status_code == 200
    assert Label.objects.get(question__key="functional_role").value == ["background", "example"]
    client.post(url, {"question": "functional_role", "unit_key": "s:0", "base_version": 1, "list": "1"}, **HX)
    assert Label.objects.get(question__key="functional_role").value == []


def test_answer_sentences_align_to_source_sentences_shown_on_the_page(client, annotator, plainfact_icat):
    client.force_login(annotator)
    a = plainfact_icat["assignment"]
    body = client.get(reverse("annotation:item", args=[a.pk])).content.decode()
    assert 'data-src-index="2"' in body and "Doses vary." in body
    response = client.post(
        reverse("annotation:label-save", args=[a.pk]),
        {"question": "source_alignment", "unit_key": "s:1", "base_version": 0, "list": "1", "value": ["1", "0"]},
        **HX,
    )
    assert response.status_code == 200
    assert Label.objects.get(question__key="source_alignment").value == [0, 1]
    bad = client.post(
        reverse("annotation:label-save", args=[a.pk]),
        {"question": "source_alignment", "unit_key": "s:0", "base_version": 0, "list": "1", "value": ["7"]},
        **HX,
    )
    assert bad.status_code == 400


def test_only_accepted_aspects_are_labelled_and_others_proposals_stay_hidden(client, annotator, plainfact_icat):
    client.force_login(annotator)
    a = plainfact_icat["assignment"]
    body = client.get(reverse("annotation:item", args=[a.pk])).content.decode()
    assert "Mentions bleeding risk" in body
    assert "Someone else&#x27;s proposal" not in body and "Someone else's proposal" not in body
    aspect_key = f"a:{plainfact_icat['aspect'].pk}"
    ok = client.post(
        reverse("annotation:label-save", args=[a.pk]),
        {"question": "aspect_covered", "unit_key": aspect_key, "base_version": 0, "value": "yes"},
        **HX,
    )
    assert ok.status_code == 200 and 'data-question="aspect_evidence"' in ok.content.decode()
    proposed = Aspect.objects.get(status="proposed")
    refused = client.post(
        reverse("annotation:label-save", args=[a.pk]),
        {"question": "aspect_covered", "unit_key": f"a:{proposed.pk}", "base_version": 0, "value": "yes"},
        **HX,
    )
    assert refused.status_code == 400
    assert not Label.objects.filter(unit_key=f"a:{proposed.pk}").exists()


@pytest.fixture
def calibration(study, annotator, no_submit_receivers):
    """A calibration pool (others' labels shown after submitting) where a colleague answered the one item."""
    from annotation.labels import label_save
    from annotation.models import Visibility

    study.blind_system = False  # the system is shown, and the exposure says so
    study.save()
    pf = factories.make_question(study, "pf", kind="text")
    item = factories.make_item(study, system="system-a")
    pool = factories.make_pool(study, "calibration", questions=[pf], visibility=Visibility.AFTER_SUBMIT)
    colleague = factories.make_user("colleague")
    factories.add_member(pool, annotator, "P-ME")
    factories.add_member(pool, colleague, "P-COLLEAGUE")
    mine = factories.make_assignment(pool, item, annotator)
    theirs = factories.make_assignment(pool, item, colleague)
    label_save(assignment=theirs, question=pf, unit_key="item", value="THEIRS", base_version=0, actor=colleague)
    label_save(assignment=mine, question=pf, unit_key="item", value="MINE", base_version=0, actor=annotator)
    return {"pool": pool, "mine": mine, "pf": pf}


def test_the_shown_workspace_reads_the_items_state_afresh_only_once_others_labels_may_show(calibration, annotator):
    from annotation.models import Assignment, ExposureKind
    from annotation.services import assignment_reopen, assignment_submit, assignment_workspace_shown

    mine = calibration["mine"]
    # Read as open, submitted meanwhile: drawn as it was read, without the colleague's labels.
    stale_open = Assignment.objects.select_related("pool").get(pk=mine.pk)
    assignment_submit(assignment=mine, actor=annotator)
    shown = assignment_workspace_shown(assignment=stale_open, user=annotator)
    assert not shown.showed_other_labels and stale_open.status == AssignmentStatus.ASSIGNED
    # Read as submitted: the colleague's labels show, the API's view recorded as the API's.
    submitted = Assignment.objects.select_related("pool").get(pk=mine.pk)
    shown = assignment_workspace_shown(assignment=submitted, user=annotator, kind=ExposureKind.API)
    assert [(o.pseudonym, o.value) for o in shown.others] == [("P-COLLEAGUE", "THEIRS")]
    assert shown.progress.assigned == 1 and shown.progress.submitted == 1, "not my progress"
    exposure = Exposure.objects.latest("id")
    assert (exposure.kind, exposure.showed_other_labels, exposure.showed_system) == (ExposureKind.API, True, True)
    assignment_workspace_shown(assignment=submitted, user=annotator)  # the item page: a calibration exposure
    assert Exposure.objects.latest("id").kind == ExposureKind.CALIBRATION
    # Read as submitted, reopened meanwhile: the lock reads it afresh, open again, and nothing of others shows.
    Exposure.objects.all().delete()
    calibration["pool"].reopen_allowed = True
    calibration["pool"].save()
    stale_submitted = Assignment.objects.select_related("pool").get(pk=mine.pk)
    assignment_reopen(assignment=mine, actor=annotator)
    shown = assignment_workspace_shown(assignment=stale_submitted, user=annotator)
    assert not shown.showed_other_labels and stale_submitted.status == AssignmentStatus.STARTED
    assert Exposure.objects.get().kind == ExposureKind.ITEM_PAGE


def test_a_unit_redrawn_alone_shows_this_items_own_text(study, annotator):
    from annotation.models import AspectStatus
    from annotation.selectors import get_assignment_and_unit

    other = factories.make_item(study, "other", answer="OTHER first. OTHER second.")
    factories.make_chunk(other, 1, "OTHER passage", document_id="doc-other")
    for n in range(2):
        Aspect.objects.create(item=other, text=f"OTHER aspect {n}", status=AspectStatus.ACCEPTED)
    mine = factories.make_item(study, "mine", answer="Mine first. Mine second.", source="Source sentence here.")
    from annotation.models import Sentence

    Sentence.objects.create(item=mine, part="source", index=1, text="SOURCE text", start=0, end=5)
    factories.make_chunk(mine, 2, "My passage", document_id="doc-mine")
    proposed = Aspect.objects.create(item=mine, text="Proposed", status=AspectStatus.PROPOSED)
    accepted = Aspect.objects.create(item=mine, text="My aspect", status=AspectStatus.ACCEPTED)
    pool = factories.make_pool(study)
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, mine, annotator)
    study.blind_system = False
    study.save()
    rows = {key: get_assignment_and_unit(annotator, assignment.pk, key)[1] for key in ("s:1", "c:2", "c:1")}
    assert (rows["s:1"].text, rows["s:1"].number) == ("Mine second.", 2)
    assert (rows["c:2"].text, rows["c:2"].extra) == ("My passage", {"document_id": "doc-mine"})
    assert rows["c:1"] is None, "another item's passage"
    aspect = get_assignment_and_unit(annotator, assignment.pk, f"a:{accepted.pk}")[1]
    assert (aspect.text, aspect.number) == ("My aspect", 1), "numbered among this item's accepted aspects"
    assert get_assignment_and_unit(annotator, assignment.pk, f"a:{proposed.pk}")[1] is None
