"""Blinding, enforced on the server.

The walk at the bottom requests every URL pattern and API route as an annotator of pool A, with
the ids of pool B (same study) and of a study the annotator has nothing to do with, and asserts
that nothing of theirs comes back: neither a 2xx/3xx status nor any of their text in the body.
"""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.test import APIClient

from annotation import quality
from annotation.labels import label_save
from annotation.models import (
    Aspect,
    AspectOrigin,
    AspectStatus,
    Assignment,
    Exposure,
    Item,
    Label,
    Pool,
    PoolMembership,
    Sentence,
    Visibility,
)
from annotation.services import assignment_submit, pool_assign_items
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Factories give every user a password; the production hasher would dominate these tests."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


SECRETS = [
    "LEAKB-ANSWER",
    "LEAKB-QUESTION",
    "LEAKB-LABEL",
    "LEAKB-ASPECT",
    "leakb-pool",
    "leakb-user",
    "LEAKB-PSEUDO",
    "LEAKC-STUDY",
    "LEAKC-ANSWER",
    "LEAKC-LABEL",
    "leakc-user",
    # The annotator's own item is a control item: its known answer and explanation are never shown to them.
    "LEAKCTL-KNOWN",
    "LEAKCTL-EXPLANATION",
]


def _yes_no(study, key, **extra):
    return factories.make_question(study, key, **extra)


@pytest.fixture
def world(study, annotator, no_submit_receivers):
    """Pool A (the annotator's), pool B in the same study, and study C elsewhere, each with work.
    B's and C's rows get ids far from A's, so a B id can never be one of A's ids by coincidence."""
    pf = _yes_no(study, "pf")
    note = factories.make_question(study, "note", kind="text", required=False)
    item_a = factories.make_item(study, "a1", answer="Plain answer for A.")
    pool_a = factories.make_pool(study, "pool-a", questions=[pf, note])
    factories.add_member(pool_a, annotator)
    assignment_a = factories.make_assignment(pool_a, item_a, annotator)
    quality.control_mark(
        study=study, item=item_a, kind="control", answers_raw={"note": "LEAKCTL-KNOWN"},
        explanation="LEAKCTL-EXPLANATION", actor=None,
    )
    Pool.objects.filter(pk=pool_a.pk).update(control_rate=0.5)

    other = factories.make_user("leakb-user")
    item_b = Item.objects.create(
        id=920001, study=study, external_id="b2", question="LEAKB-QUESTION?", answer="LEAKB-ANSWER."
    )
    Sentence.objects.create(id=960001, item=item_b, part="answer", index=0, text="LEAKB-ANSWER.", start=0, end=13)
    pool_b = Pool.objects.create(id=910001, study=study, name="leakb-pool", visibility=Visibility.AFTER_SUBMIT)
    pool_b.questions.set([pf, note])
    factories.grant(study, other, "annotator")
    membership_b = PoolMembership.objects.create(
        id=930001, pool=pool_b, study=study, user=other, independent=True, pseudonym="LEAKB-PSEUDO"
    )
    assignment_b = Assignment.objects.create(id=940001, pool=pool_b, item=item_b, annotator=other)
    label_save(
        assignment=assignment_b, question=note, unit_key="item", value="LEAKB-LABEL", base_version=0, actor=other
    )
    label_b = Label.objects.get(assignment=assignment_b)
    aspect_b = Aspect.objects.create(
        id=950001,
        item=item_b,
        text="LEAKB-ASPECT",
        origin=AspectOrigin.PROPOSED,
        status=AspectStatus.PROPOSED,
        proposed_by=other,
    )

    stranger_c = factories.make_user("leakc-user")
    study_c = factories.make_study(name="LEAKC-STUDY", slug="leakc-study", owner=stranger_c)
    note_c = factories.make_question(study_c, "note", kind="text", required=False)
    item_c = Item.objects.create(id=920002, study=study_c, external_id="c1", question="q", answer="LEAKC-ANSWER.")
    pool_c = Pool.objects.create(id=910002, study=study_c, name="pool-c")
    pool_c.questions.set([note_c])
    factories.grant(study_c, stranger_c, "annotator")
    PoolMembership.objects.create(
        id=930002, pool=pool_c, study=study_c, user=stranger_c, independent=True, pseudonym="C1"
    )
    assignment_c = Assignment.objects.create(id=940002, pool=pool_c, item=item_c, annotator=stranger_c)
    label_save(
        assignment=assignment_c, question=note_c, unit_key="item", value="LEAKC-LABEL", base_version=0, actor=stranger_c
    )
    return {
        "pool_a": pool_a,
        "assignment_a": assignment_a,
        "pool_b": pool_b,
        "assignment_b": assignment_b,
        "label_b": label_b,
        "aspect_b": aspect_b,
        "membership_b": membership_b,
        "item_b": item_b,
        "study_c": study_c,
        "pf": pf,
        "note": note,
        "pool_c": pool_c,
        "assignment_c": assignment_c,
        "other": other,
    }


def assert_no_secret(body: str, where: str) -> None:
    leaked = [s for s in SECRETS if s in body]
    assert not leaked, f"{where} leaked {leaked}"


# --- Specific blinding rules -------------------------------------------------------------------


def test_item_page_hides_the_system_and_every_metadata_key_not_marked_visible(client, study, annotator):
    study.blind_system = True
    study.visible_metadata_fields = ["topic", "temperature"]
    study.hidden_metadata_fields = ["temperature"]  # a hidden key stays hidden even when listed as visible
    study.save()
    item = factories.make_item(
        study,
        system="SecretSystemName",
        metadata={"temperature": "HIDDEN-TEMP", "topic": "visible-topic", "model_version": "gpt-4o-SECRET"},
        scope_class="emergency",
    )
    factories.make_chunk(item, 1, is_labelled_target=True)
    pool = factories.make_pool(study, questions=[_yes_no(study, "pf")])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    client.force_login(annotator)
    body = client.get(reverse("annotation:item", args=[assignment.pk])).content.decode()
    assert "SecretSystemName" not in body and "HIDDEN-TEMP" not in body
    assert "gpt-4o-SECRET" not in body and "model_version" not in body  # not marked visible: not shown
    assert "visible-topic" in body
    assert "emergency" not in body.lower().replace("emergency services", "")  # the scope class is a reference answer
    api = APIClient()
    api.force_login(annotator)
    data = api.get(reverse("api-assignment", args=[assignment.pk])).json()
    assert "is_labelled_target" not in str(data) and "scope_class" not in data and "SecretSystemName" not in str(data)
    assert data["metadata"] == {"topic": "visible-topic"}
    assert {e.showed_system for e in Exposure.objects.all()} == {False}
    # Each Exposure names exactly the metadata keys that were shown.
    assert [e.metadata_keys for e in Exposure.objects.order_by("id")] == [["topic"], ["topic"]]
    listed = api.get(reverse("api-assignments")).content.decode()
    assert item.external_id not in listed  # researchers' ids may name the system


def test_a_study_shows_no_metadata_until_keys_are_marked_visible(client, study, annotator):
    """The default is blind: a new study lists no visible key, so a `model_version` never reaches annotators."""
    assert study.visible_metadata_fields == []
    item = factories.make_item(study, metadata={"model_version": "gpt-4o-2024-08-06", "topic": "TOPIC-X"})
    pool = factories.make_pool(study, questions=[_yes_no(study, "pf")])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    client.force_login(annotator)
    body = client.get(reverse("annotation:item", args=[assignment.pk])).content.decode()
    assert "gpt-4o-2024-08-06" not in body and "TOPIC-X" not in body and 'class="metadata"' not in body
    assert Exposure.objects.get().metadata_keys == []


def test_chunk_document_ids_are_hidden_when_the_study_is_blind_to_systems(client, study, annotator):
    """Document ids often name the system's index (``gpt4o-kb/…``): a study blind to systems never shows
    them, neither on the item page nor in the unit a label save redraws, nor in the API."""
    study.blind_system = True
    study.save()
    item = factories.make_item(study, answer="Take it daily.")
    factories.make_chunk(item, 1, "A passage.", document_id="GPT4O-KB/doc-17")
    question = factories.make_question(study, "relevant", scope="chunk")
    pool = factories.make_pool(study, questions=[question])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    client.force_login(annotator)
    page = client.get(reverse("annotation:item", args=[assignment.pk])).content.decode()
    assert "A passage." in page and "GPT4O-KB" not in page
    saved = client.post(
        reverse("annotation:label-save", args=[assignment.pk]),
        {"question": "relevant", "unit_key": "c:1", "value": "yes", "base_version": 0}, HTTP_HX_REQUEST="true",
    ).content.decode()
    assert 'id="unit-c-1"' in saved and "GPT4O-KB" not in saved
    api = APIClient()
    api.force_login(annotator)
    assert "GPT4O-KB" not in api.get(reverse("api-assignment", args=[assignment.pk])).content.decode()

    study.blind_system = False
    study.save()
    assert "GPT4O-KB/doc-17" in client.get(reverse("annotation:item", args=[assignment.pk])).content.decode()


def test_the_researchers_preview_is_the_annotators_page(client, study, annotator):
    """The console's preview renders the very page an annotator gets (same blinding, same markup), minus
    the controls that would save anything."""
    study.blind_system = True
    study.visible_metadata_fields = ["topic"]
    study.save()
    researcher = factories.make_user("rhea-researcher")
    factories.grant(study, researcher, "researcher")
    item = factories.make_item(
        study, "p1", answer="Take it daily. Call us!", system="SecretSystemName",
        metadata={"topic": "TOPIC-SHOWN", "model_version": "MODEL-SECRET"},
    )
    factories.make_chunk(item, 1, "A passage.", document_id="DOC-SECRET")
    pf = _yes_no(study, "pf")
    pool = factories.make_pool(study, questions=[pf])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    client.force_login(annotator)
    annotator_page = client.get(reverse("annotation:item", args=[assignment.pk])).content.decode()
    client.force_login(researcher)
    preview = client.get(reverse("console:preview", args=[study.slug]), {"item": "p1", "pool": pool.pk})
    assert preview.status_code == 200
    preview_page = preview.content.decode()

    def workspace(html: str) -> str:
        body = html[html.index('<section class="card item-question"'):html.index('<div id="keys-overlay"')]
        # Drop what differs by construction: csrf tokens, assignment urls and the read-only state of inputs.
        body = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", body)
        body = re.sub(r"/assignments/\d+/", "/assignments/N/", body)
        body = re.sub(r'<section class="card finish".*', "", body, flags=re.S)
        return " ".join(body.replace("<fieldset disabled>", "<fieldset>").split())

    assert "TOPIC-SHOWN" in preview_page
    for secret in ("SecretSystemName", "MODEL-SECRET", "DOC-SECRET"):
        assert secret not in preview_page and secret not in annotator_page
    shown = workspace(annotator_page)
    # The annotator's page has the proposal form (their item is open); the preview's is read-only.
    shown = re.sub(r'<form method="post" action="/assignments/N/aspects/.*?</form>', "", shown, flags=re.S)
    shown = " ".join(shown.split())
    assert workspace(preview_page) == shown
    assert "Nothing here can be saved" in preview_page
    assert Exposure.objects.filter(user=researcher).count() == 0


def test_item_page_shows_the_system_when_the_study_is_not_blind_and_records_it(client, study, annotator):
    study.blind_system = False
    study.save()
    item = factories.make_item(study, system="OpenSystemName")
    pool = factories.make_pool(study, questions=[_yes_no(study, "pf")])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    client.force_login(annotator)
    assert "OpenSystemName" in client.get(reverse("annotation:item", args=[assignment.pk])).content.decode()
    assert Exposure.objects.get().showed_system


def test_calibration_pool_shows_others_labels_only_after_submitting_and_records_it(
    client, study, annotator, no_submit_receivers
):
    pf = factories.make_question(study, "pf", kind="text")
    factories.make_item(study)
    pool = factories.make_pool(study, "calibration", questions=[pf], visibility=Visibility.AFTER_SUBMIT, overlap=2)
    colleague = factories.make_user("colleague")
    factories.add_member(pool, annotator)
    factories.add_member(pool, colleague, pseudonym="P-COLLEAGUE")
    pool_assign_items(pool=pool)
    theirs = Assignment.objects.get(annotator=colleague)
    mine = Assignment.objects.get(annotator=annotator)
    label_save(
        assignment=theirs, question=pf, unit_key="item", value="COLLEAGUE-ANSWER", base_version=0, actor=colleague
    )
    client.force_login(annotator)
    url = reverse("annotation:item", args=[mine.pk])
    assert "COLLEAGUE-ANSWER" not in client.get(url).content.decode()
    label_save(assignment=mine, question=pf, unit_key="item", value="MY-ANSWER", base_version=0, actor=annotator)
    assignment_submit(assignment=mine, actor=annotator)
    body = client.get(url).content.decode()
    assert "COLLEAGUE-ANSWER" in body and "P-COLLEAGUE" in body and "colleague" not in body.replace("COLLEAGUE", "")
    shown = list(Exposure.objects.order_by("at", "id").values_list("showed_other_labels", "kind"))
    assert shown == [(False, "item_page"), (True, "calibration")]


def test_a_pool_without_calibration_never_shows_others_labels(client, study, annotator, no_submit_receivers):
    pf = factories.make_question(study, "pf", kind="text")
    factories.make_item(study)
    pool = factories.make_pool(study, questions=[pf], overlap=2)
    colleague = factories.make_user()
    factories.add_member(pool, annotator)
    factories.add_member(pool, colleague)
    pool_assign_items(pool=pool)
    label_save(
        assignment=Assignment.objects.get(annotator=colleague),
        question=pf,
        unit_key="item",
        value="COLLEAGUE-ANSWER",
        base_version=0,
        actor=colleague,
    )
    mine = Assignment.objects.get(annotator=annotator)
    label_save(assignment=mine, question=pf, unit_key="item", value="mine", base_version=0, actor=annotator)
    assignment_submit(assignment=mine, actor=annotator)
    client.force_login(annotator)
    assert "COLLEAGUE-ANSWER" not in client.get(reverse("annotation:item", args=[mine.pk])).content.decode()
    api = APIClient()
    api.force_authenticate(annotator)
    assert "COLLEAGUE-ANSWER" not in api.get(reverse("api-assignment", args=[mine.pk])).content.decode()


def test_an_annotator_who_left_the_pool_no_longer_sees_its_items(client, study, annotator):
    pool = factories.make_pool(study, questions=[_yes_no(study, "pf")])
    membership = factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, factories.make_item(study), annotator)
    membership.active = False
    membership.save()
    client.force_login(annotator)
    assert client.get(reverse("annotation:item", args=[assignment.pk])).status_code == 404


# --- The walk ----------------------------------------------------------------------------------

SKIP_PREFIXES = ("admin/", "accounts/")
PARAM = re.compile(r"<(?:(?P<conv>\w+):)?(?P<name>\w+)>")


def _routes(patterns, prefix=""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _routes(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern)


def _candidates(world, study, conv: str, name: str) -> list[str]:
    ints = {
        "pool": [world["pool_b"].pk, world["pool_c"].pk],
        "assignment": [world["assignment_b"].pk, world["assignment_c"].pk],
        "membership": [world["membership_b"].pk],
        "item": [world["item_b"].pk],
    }
    if conv == "int":
        for key, values in ints.items():
            if key in name:
                return [str(v) for v in values]
        # Any other id: one of each kind of B's rows (ids of other apps' rows do not exist and must 404).
        everything = [world[k].pk for k in ("assignment_b", "pool_b", "aspect_b", "membership_b", "item_b")]
        return [str(v) for v in everything]
    if conv == "slug" and name == "slug":
        return [study.slug, world["study_c"].slug]
    if name == "external_id":
        return [world["item_b"].external_id, "c1"]
    if name == "fmt":
        return ["csv"]
    return ["pf", "note"]


def _expand(route: str, world, study) -> list[str]:
    paths = [route]
    for match in PARAM.finditer(route):
        options = _candidates(world, study, match.group("conv") or "str", match.group("name"))
        paths = [p.replace(match.group(0), option, 1) for p in paths for option in options]
    return ["/" + p for p in paths]


POST_DATA = {
    "question": "note",
    "unit_key": "item",
    "value": "overwritten",
    "base_version": 1,
    "reason": "r",
    "text": "t",
    "importance": "must_have",
    "seconds": 5,
    "decision": "x",
    "rationale": "x",
    "role": "annotator",
    "username": "x",
}


def test_walking_every_route_with_another_pools_ids_leaks_nothing(annotator, study, world):
    client = APIClient()
    client.force_login(annotator)
    # The control: the same client reaches the annotator's own item, so the 404s below are not a login problem.
    own = client.get(reverse("annotation:item", args=[world["assignment_a"].pk]))
    assert own.status_code == 200 and "Plain answer for A." in own.content.decode()
    assert_no_secret(own.content.decode(), "the annotator's own (control) item")
    before = sorted(Label.objects.exclude(assignment__annotator=annotator).values_list("id", "value", "version"))
    statuses_before = sorted(Assignment.objects.exclude(annotator=annotator).values_list("id", "status"))
    problems: list[str] = []
    routes = [r for r in _routes(get_resolver().url_patterns) if not r.startswith(SKIP_PREFIXES)]
    assert any(r.startswith("api/assignments/") for r in routes)
    for route in routes:
        has_params = bool(PARAM.search(route))
        for path in _expand(route, world, study):
            requests = [("GET", client.get(path))]
            if has_params:
                requests.append(("POST", client.post(path, POST_DATA)))
                requests.append(("PUT", client.put(path, POST_DATA, format="json")))
            for method, response in requests:
                body = response.content.decode(errors="replace")
                leaked = [s for s in SECRETS if s in body]
                if leaked:
                    problems.append(f"{method} {path} → {response.status_code} leaked {leaked}")
                if has_params and response.status_code not in (403, 404, 405):
                    problems.append(f"{method} {path} → {response.status_code} (expected 403/404/405)")
    assert not problems, "\n".join(problems)
    assert (
        sorted(Label.objects.exclude(assignment__annotator=annotator).values_list("id", "value", "version")) == before
    )
    assert sorted(Assignment.objects.exclude(annotator=annotator).values_list("id", "status")) == statuses_before


def test_the_researcher_marks_metadata_keys_visible_in_the_settings_and_the_api(client, study, annotator, researcher):
    item = factories.make_item(study, metadata={"topic": "TOPIC-X", "model_version": "MODEL-SECRET"})
    pool = factories.make_pool(study, questions=[_yes_no(study, "pf")])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    api = APIClient()
    api.force_login(researcher)
    response = api.patch(
        reverse("console-api-study", args=[study.slug]), {"visible_metadata_fields": ["topic"]}, format="json"
    )
    assert response.status_code == 200 and response.json()["visible_metadata_fields"] == ["topic"]
    client.force_login(researcher)
    settings_page = client.get(reverse("console:study", args=[study.slug])).content.decode()
    assert "Annotators see only these metadata fields" in settings_page and 'value="topic"' in settings_page
    client.force_login(annotator)
    page = client.get(reverse("annotation:item", args=[assignment.pk])).content.decode()
    assert "TOPIC-X" in page and "MODEL-SECRET" not in page
    assert api.patch(
        reverse("console-api-study", args=[study.slug]), {"visible_metadata_fields": ["bad key!"]}, format="json"
    ).status_code == 400
