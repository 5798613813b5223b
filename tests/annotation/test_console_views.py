"""The researcher console's pages: who may see them, and each action end to end through the service."""

from __future__ import annotations

import html
import re

import pytest
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import URLPattern, get_resolver, reverse
from django.utils import timezone

from annotation.console import services as svc
from annotation.models import (
    Assignment,
    AssignmentStatus,
    ImportJob,
    Item,
    PasswordChangeRequired,
    Pool,
    PoolMembership,
    Role,
    StudyInvitation,
    StudyRole,
)
from tests import factories
from tests.annotation.console_helpers import ITEMS, allow_study_creation, eager_celery, fast_password_hashing, jsonl

pytestmark = pytest.mark.django_db
__all__ = ["eager_celery", "fast_password_hashing"]


@pytest.fixture
def astrid(researcher):
    return svc.study_create(owner=researcher, name="ASTRID pilot", presets=["astrid"], hidden_metadata_fields=["model"])


@pytest.fixture
def rita(client, researcher):
    client.force_login(researcher)
    return client


def _console_routes():
    resolver = get_resolver()
    console = resolver.url_patterns
    for p in console:
        if getattr(p, "namespace", None) == "console":
            for sub in p.url_patterns:
                assert isinstance(sub, URLPattern)
                yield sub.name, sub.pattern.converters.keys()


def _url(name, keys, study, pool, membership, job, invitation):
    values = {
        "slug": study.slug,
        "key": "helpful",
        "pool_id": pool.pk,
        "membership_id": membership.pk,
        "job_id": job.pk,
        "name": "astrid.jsonl",
        "invitation_id": invitation.pk,
        "external_id": "x1",
    }
    return reverse(f"console:{name}", kwargs={k: values[k] for k in keys})


# --- access -----------------------------------------------------------------------------------


def test_every_study_page_answers_strangers_404_and_annotators_403(client, astrid, annotator, stranger):
    pool = factories.make_pool(astrid, questions=list(astrid.questions.all()))
    membership = factories.add_member(pool, annotator)
    job = ImportJob.objects.create(study=astrid, filename="x.jsonl", stored_name="x", requested_by=None)
    invitation = svc.pool_member_add_or_invite(pool=pool, username="someone", actor=astrid.owner)
    checked = 0
    for name, keys in _console_routes():
        if "slug" not in keys:
            continue
        url = _url(name, keys, astrid, pool, membership, job, invitation)
        for user, expected in ((stranger, 404), (annotator, 403)):
            client.force_login(user)
            for method in (client.get, client.post):
                response = method(url)
                assert response.status_code in (expected, 405), (name, user.username, response.status_code)
                if response.status_code != 405:
                    checked += 1
    assert checked >= 40


def test_console_pages_need_a_login(client, astrid):
    response = client.get(reverse("console:protocol", args=[astrid.slug]))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_creating_a_study_needs_the_permission(rita):
    assert rita.get(reverse("console:study_create")).status_code == 403


# --- study ------------------------------------------------------------------------------------


def test_a_researcher_creates_a_study_from_presets(rita, researcher):
    allow_study_creation(researcher)
    response = rita.post(reverse("console:study_create"), {
        "name": "Pilot", "presets": ["astrid", "icat"], "guidelines": "# Rules", "blind_system": "on",
        "independent_pools": "on", "hidden_metadata_fields": "model, temperature",
    })
    assert response.status_code == 302
    study = researcher.owned_studies.get()
    assert response["Location"] == reverse("console:protocol", args=[study.slug])
    assert study.questions.filter(key="aspect_covered").exists()
    assert study.hidden_metadata_fields == ["model", "temperature"]


def test_the_guidelines_preview_renders_markdown_and_strips_script(rita, astrid):
    response = rita.post(reverse("console:guidelines_preview"), {"guidelines": "**bold** <script>alert(1)</script>"})
    assert b"<strong>bold</strong>" in response.content
    assert b"<script>" not in response.content


def test_blinding_settings_are_explicit_on_the_study_page(rita, astrid):
    page = rita.get(reverse("console:study", args=[astrid.slug])).content.decode()
    assert "do not see</strong> which system produced each answer" in page
    assert "<code>model</code>" in page
    response = rita.post(
        reverse("console:study", args=[astrid.slug]),
        {"name": astrid.name, "guidelines": "", "hidden_metadata_fields": ""},
    )
    assert response.status_code == 302
    astrid.refresh_from_db()
    assert astrid.blind_system is False and astrid.independent_pools is False


# --- protocol ---------------------------------------------------------------------------------


def test_adding_a_question_through_the_page(rita, astrid):
    response = rita.post(reverse("console:question_add", args=[astrid.slug]), {
        "key": "hedged", "prompt": "Is it hedged?", "scope": "sentence", "kind": "binary",
        "options": "yes | Yes\nno | No", "required": "on",
    })
    assert response.status_code == 302
    q = astrid.questions.get(key="hedged")
    assert [o["label"] for o in q.options] == ["Yes", "No"] and all(o["key"] for o in q.options)


def test_a_refused_question_shows_the_reason(rita, astrid):
    response = rita.post(reverse("console:question_add", args=[astrid.slug]), {
        "key": "why", "prompt": "Why?", "scope": "sentence", "kind": "text",
        "condition_question": "information_bearing", "condition_values": "maybe",
    })
    assert response.status_code == 400
    assert "not options of &#x27;information_bearing&#x27;" in response.content.decode()
    assert not astrid.questions.filter(key="why").exists()


def test_editing_a_labelled_question_refuses_a_kind_change_with_the_reason(rita, astrid):
    q = astrid.questions.get(key="harmful")
    pool = factories.make_pool(astrid, questions=[q])
    person = factories.make_user()
    factories.add_member(pool, person)
    a = factories.make_assignment(pool, factories.make_item(astrid), person)
    from annotation.models import Label

    Label.objects.create(
        assignment=a, question=q, unit_key="item", value="none", updated_by=person, updated_at=timezone.now()
    )
    page = rita.get(reverse("console:question_edit", args=[astrid.slug, "harmful"])).content.decode()
    assert "1 label already answer" in page
    assert ">1 label</small>" in rita.get(reverse("console:protocol", args=[astrid.slug])).content.decode()
    form = {
        "key": "harmful", "prompt": q.prompt, "scope": "item", "kind": "nominal",
        "options": "\n".join(f"{o['value']} | {o['label']} | {o['key']}" for o in q.options), "required": "on",
    }
    response = rita.post(reverse("console:question_edit", args=[astrid.slug, "harmful"]), form)
    assert response.status_code == 409
    assert "its kind cannot change" in response.content.decode()
    form.update(kind="ordinal", options=form["options"].replace("| Slight |", "| A little |"))
    assert rita.post(reverse("console:question_edit", args=[astrid.slug, "harmful"]), form).status_code == 302
    q.refresh_from_db()
    assert q.options[1] == {**q.options[1], "value": "slight", "label": "A little"}


def test_removing_a_question_over_htmx_returns_the_list_and_refreshes_the_preview(rita, astrid):
    response = rita.post(reverse("console:question_remove", args=[astrid.slug, "helpful"]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert response["HX-Trigger"] == "protocol-changed"
    assert "<html" not in response.content.decode()
    assert not astrid.questions.filter(key="helpful").exists()


def test_a_question_others_depend_on_is_not_removed_and_the_list_says_why(rita, astrid):
    response = rita.post(
        reverse("console:question_remove", args=[astrid.slug, "information_bearing"]), HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 409
    assert "refers to it" in response.content.decode()


def test_moving_a_question_down(rita, astrid):
    first, second = list(astrid.questions.values_list("key", flat=True))[:2]
    rita.post(reverse("console:question_move", args=[astrid.slug, first]), {"direction": "down"})
    assert list(astrid.questions.values_list("key", flat=True))[:2] == [second, first]


def test_the_htmx_answer_to_a_move_is_the_table_in_its_new_order_with_a_notice(rita, astrid):
    """The table's query counts labels per question (GROUP BY), which drops the model's ordering: the
    fragment once came back in the old order."""
    keys = list(astrid.questions.values_list("key", flat=True))
    response = rita.post(
        reverse("console:question_move", args=[astrid.slug, keys[1]]), {"direction": "up"}, HTTP_HX_REQUEST="true"
    )
    body = response.content.decode()
    assert re.findall(r'<tr id="q-([^"]+)"', body) == [keys[1], keys[0], *keys[2:]]
    assert f"Question {keys[1]!r} moved up to place 1." in html.unescape(body)
    # The moved row is at the top: its up button is disabled, so the keyboard goes to its down button.
    assert f'aria-label="Move {keys[1]} down" autofocus' in body and body.count("autofocus") == 1


def test_the_preview_shows_the_item_as_an_annotator_would_without_system_or_hidden_metadata(rita, astrid):
    factories.make_item(
        astrid,
        "x1",
        answer="Take it daily. Call us!",
        system="secret-rag",
        metadata={"model": "gpt-x", "topic": "dosing"},
    )
    astrid.visible_metadata_fields = ["topic"]
    astrid.save()
    page = rita.get(reverse("console:preview", args=[astrid.slug]), {"item": "x1"}).content.decode()
    assert "Take it daily." in page and "Call us!" in page
    assert "Does this sentence carry clinical information?" in page
    assert "secret-rag" not in page and "gpt-x" not in page
    assert "dosing" in page
    assert "Nothing here can be saved" in page


def test_the_preview_escapes_item_text(rita, astrid):
    factories.make_item(astrid, "x2", answer="<script>alert(1)</script> Fine.")
    page = rita.get(reverse("console:preview", args=[astrid.slug]), {"item": "x2"}).content.decode()
    assert "<script>alert(1)" not in page and "&lt;script&gt;" in page


# --- items ------------------------------------------------------------------------------------


def _upload(client, study, content: bytes, name="items.jsonl", **extra):
    return client.post(
        reverse("console:import_upload", args=[study.slug]), {"file": SimpleUploadedFile(name, content)}, **extra
    )


def test_an_upload_is_dry_run_first_then_imported_on_confirmation(
    rita, astrid, eager_celery, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = _upload(rita, astrid, jsonl(*ITEMS), HTTP_HX_REQUEST="true")
    assert response.status_code == 201
    job = ImportJob.objects.get(study=astrid)
    assert job.status == "checked"
    assert (job.summary["items"], job.summary["chunks"], job.summary["aspects"]) == (2, 2, 1)
    assert not Item.objects.filter(study=astrid).exists()
    page = rita.get(reverse("console:import_job", args=[astrid.slug, job.pk])).content.decode()
    assert "Dry run: nothing has been written yet" in page
    with django_capture_on_commit_callbacks(execute=True):
        response = rita.post(reverse("console:import_confirm", args=[astrid.slug, job.pk]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    job.refresh_from_db()
    assert job.status == "done"
    assert job.summary["sentences"] == 4
    assert Item.objects.filter(study=astrid).count() == 2
    again = rita.post(reverse("console:import_confirm", args=[astrid.slug, job.pk]), HTTP_HX_REQUEST="true")
    assert again.status_code == 409
    assert Item.objects.filter(study=astrid).count() == 2


def test_a_new_upload_supersedes_an_older_dry_run_which_can_no_longer_be_imported(
    rita, astrid, eager_celery, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        _upload(rita, astrid, jsonl(*ITEMS), name="first.jsonl")
        _upload(rita, astrid, jsonl(ITEMS[0]), name="second.jsonl")
    old, new = ImportJob.objects.filter(study=astrid).order_by("pk")
    assert (old.status, new.status) == ("checked", "checked")
    page = rita.get(reverse("console:items", args=[astrid.slug])).content.decode()
    new_card, old_card = page.split(f'id="import-job-{new.pk}"')[1].split(f'id="import-job-{old.pk}"')  # newest first
    assert "Superseded by a newer upload" in old_card and "Superseded" not in new_card
    assert reverse("console:import_confirm", args=[astrid.slug, old.pk]) not in page
    assert reverse("console:import_confirm", args=[astrid.slug, new.pk]) in new_card
    job_page = rita.get(reverse("console:import_job", args=[astrid.slug, old.pk])).content.decode()
    assert "Superseded by a newer upload" in job_page
    # The old preview's button, still on a page opened before the second upload, is refused and says why.
    refused = rita.post(reverse("console:import_confirm", args=[astrid.slug, old.pk]), HTTP_HX_REQUEST="true")
    assert refused.status_code == 409
    assert "first.jsonl was superseded by a newer upload (second.jsonl)" in refused.content.decode()
    assert not Item.objects.filter(study=astrid).exists()
    old.refresh_from_db()
    assert old.status == "checked"
    with django_capture_on_commit_callbacks(execute=True):
        assert rita.post(reverse("console:import_confirm", args=[astrid.slug, new.pk])).status_code == 302
    assert list(Item.objects.filter(study=astrid).values_list("external_id", flat=True)) == [ITEMS[0]["id"]]


def test_a_bad_file_shows_its_errors_and_writes_nothing(rita, astrid, eager_celery, django_capture_on_commit_callbacks):
    bad = jsonl(ITEMS[0], {"id": "q9", "answer": "no question"}) + b"{not json\n"
    with django_capture_on_commit_callbacks(execute=True):
        _upload(rita, astrid, bad)
    job = ImportJob.objects.get(study=astrid)
    assert job.status == "invalid"
    page = rita.get(reverse("console:items", args=[astrid.slug])).content.decode()
    assert "line 2" in page and "question" in page and "line 3" in page and "malformed JSON" in page
    assert not Item.objects.filter(study=astrid).exists()
    assert rita.post(reverse("console:import_confirm", args=[astrid.slug, job.pk])).status_code == 409


def test_an_upload_over_the_limit_is_refused_at_once(rita, astrid, settings):
    settings.IMPORT_MAX_BYTES = 10
    response = _upload(rita, astrid, jsonl(*ITEMS), HTTP_HX_REQUEST="true")
    assert response.status_code == 413
    assert "import limit" in response.content.decode()
    assert not ImportJob.objects.exists()


def test_the_item_list_is_searchable_and_shows_each_pools_status(rita, astrid):
    q = astrid.questions.get(key="helpful")
    pool = factories.make_pool(astrid, "PF", questions=[q], overlap=2)
    a, b = factories.make_user(), factories.make_user()
    factories.add_member(pool, a)
    factories.add_member(pool, b)
    dose = factories.make_item(astrid, "dose-1", question="What dose of metformin?")
    factories.make_item(astrid, "other-2", question="Is it contagious?")
    factories.make_assignment(pool, dose, a, status=AssignmentStatus.SUBMITTED)
    factories.make_assignment(pool, dose, b, status=AssignmentStatus.STARTED)
    page = rita.get(
        reverse("console:items", args=[astrid.slug]), {"q": "metformin"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "dose-1" in page and "other-2" not in page
    assert "1/2 done, 1 in progress" in page
    full = rita.get(reverse("console:items", args=[astrid.slug])).content.decode()
    assert "not assigned" in full


# --- pools ------------------------------------------------------------------------------------


def test_creating_a_pool_and_adding_members_assigns_items(rita, astrid):
    factories.make_item(astrid)
    qs = astrid.questions.filter(key__in=["perceived_faithfulness", "helpful"])
    response = rita.post(reverse("console:pools", args=[astrid.slug]), {
        "name": "PF", "questions": [q.pk for q in qs], "overlap": 1, "visibility": "nothing",
    })
    pool = Pool.objects.get(study=astrid, name="PF")
    assert response["Location"] == reverse("console:pool", args=[astrid.slug, pool.pk])
    nora = factories.make_user("nora")
    response = rita.post(reverse("console:member_add", args=[astrid.slug, pool.pk]), {"username": "nora"})
    assert response.status_code == 302
    # nora is not in the study yet: she is invited, and gets items once she accepts.
    assert not Assignment.objects.filter(pool=pool).exists()
    svc.invitation_accept(invitation=StudyInvitation.objects.get(user=nora), user=nora)
    assert Assignment.objects.filter(pool=pool, annotator__username="nora").count() == 1
    # Someone already in the study is added at once.
    olga = factories.make_user("olga")
    factories.grant(astrid, olga, Role.ADJUDICATOR)
    response = rita.post(reverse("console:member_add", args=[astrid.slug, pool.pk]), {"username": "OLGA"})
    assert response.status_code == 302
    assert PoolMembership.objects.filter(pool=pool, user=olga, active=True).exists()


def test_a_refused_move_shows_the_reason(rita, astrid):
    qs = list(astrid.questions.filter(key="helpful"))
    cf, pf = factories.make_pool(astrid, "CF", questions=qs), factories.make_pool(astrid, "PF", questions=qs)
    person = factories.make_user("olga")
    m = factories.add_member(cf, person)
    factories.make_assignment(cf, factories.make_item(astrid), person, status=AssignmentStatus.SUBMITTED)
    response = rita.post(reverse("console:member_move", args=[astrid.slug, m.pk]), {"to_pool": pf.pk})
    assert response.status_code == 409
    assert "keeps its pools independent" in response.content.decode()
    assert PoolMembership.objects.get(user=person).pool == cf


def test_a_pool_from_another_study_cannot_be_a_move_target(rita, astrid, researcher):
    other = svc.study_create(owner=researcher, name="Other", presets=["astrid"])
    foreign = factories.make_pool(other, questions=list(other.questions.filter(key="helpful")))
    pool = factories.make_pool(astrid, questions=list(astrid.questions.filter(key="helpful")))
    m = factories.add_member(pool, factories.make_user())
    assert (
        rita.post(reverse("console:member_move", args=[astrid.slug, m.pk]), {"to_pool": foreign.pk}).status_code == 400
    )
    assert PoolMembership.objects.get(pk=m.pk).pool == pool


# --- people -----------------------------------------------------------------------------------


def test_an_account_is_created_with_a_one_time_password_shown_once(rita, astrid):
    response = rita.post(
        reverse("console:account_create", args=[astrid.slug]), {"username": "dr.kim", "email": "", "role": "annotator"}
    )
    assert response.status_code == 201
    assert response["Cache-Control"] == "no-store"
    password = re.search(r'id="new-password">([^<]+)<', response.content.decode()).group(1)
    user = StudyRole.objects.get(study=astrid, user__username="dr.kim").user
    assert user.check_password(password)
    assert password not in rita.get(reverse("console:people", args=[astrid.slug])).content.decode()


def test_an_invitation_is_mailed(rita, astrid, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = rita.post(
            reverse("console:invite", args=[astrid.slug]), {"email": "lee@example.org", "role": "annotator"}
        )
    assert response.status_code == 302
    assert mail.outbox[0].to == ["lee@example.org"]
    assert "http://testserver/accounts/invitation/" in mail.outbox[0].body


def test_a_researcher_cannot_revoke_their_own_role(rita, astrid, researcher):
    response = rita.post(
        reverse("console:role_revoke", args=[astrid.slug]), {"username": researcher.username, "role": "researcher"}
    )
    assert response.status_code == 403
    assert StudyRole.objects.filter(study=astrid, user=researcher, role=Role.RESEARCHER).exists()


def test_granting_and_revoking_roles(rita, astrid):
    adam = factories.make_user("adam")
    assert (
        rita.post(
            reverse("console:role_grant", args=[astrid.slug]), {"username": "adam", "role": "adjudicator"}
        ).status_code
        == 302
    )
    # adam was in no role of the study: he is invited, and has the role once he accepts.
    assert not StudyRole.objects.filter(study=astrid, user=adam).exists()
    svc.invitation_accept(invitation=StudyInvitation.objects.get(user=adam), user=adam)
    assert StudyRole.objects.filter(study=astrid, user__username="adam", role="adjudicator").exists()
    assert (
        rita.post(
            reverse("console:role_revoke", args=[astrid.slug]), {"username": "adam", "role": "adjudicator"}
        ).status_code
        == 302
    )
    assert not StudyRole.objects.filter(study=astrid, user__username="adam").exists()


# --- progress ---------------------------------------------------------------------------------


def test_progress_shows_counts_medians_chart_and_flags_the_far_faster_annotator(rita, astrid):
    q = astrid.questions.get(key="helpful")
    pool = factories.make_pool(astrid, "PF", questions=[q], overlap=3)
    people = [factories.make_user(n) for n in ("slow1", "slow2", "speedy")]
    for p in people:
        factories.add_member(pool, p)
    now = timezone.now()
    for _ in range(6):
        item = factories.make_item(astrid)
        for p, secs in zip(people, (90, 120, 10), strict=True):
            factories.make_assignment(
                pool, item, p, status=AssignmentStatus.SUBMITTED, active_seconds=secs, submitted_at=now
            )
    page = rita.get(reverse("console:progress", args=[astrid.slug])).content.decode()
    assert "18 of 18 assignments submitted (100%)" in page
    assert "<polyline" in page
    flagged = re.findall(r'<tr class="flagged">\s*<td>(\w+)', page)
    assert flagged == ["speedy"]
    # Agreement is adjudication's to compute (annotation never imports it): the page links its reports.
    assert f"/adjudication/studies/{astrid.slug}/reports/agreement/{pool.pk}/helpful/" in page


# --- account ----------------------------------------------------------------------------------


def test_a_one_time_password_user_is_sent_to_change_it_first(client, astrid, researcher):
    account = svc.account_create(study=astrid, actor=researcher, username="dr.kim")
    assert client.login(username="dr.kim", password=account.one_time_password)
    response = client.get("/")
    assert response.status_code == 302 and response["Location"].startswith(reverse("account:password_change"))
    assert client.get("/api/console/studies/").status_code == 403
    response = client.post(
        reverse("account:password_change"),
        {
            "old_password": account.one_time_password,
            "new_password1": "a-much-better-secret-42",
            "new_password2": "a-much-better-secret-42",
        },
    )
    assert response.status_code == 302
    assert not PasswordChangeRequired.objects.filter(user=account.user).exists()
    assert client.get("/").status_code == 200


def test_anyone_logged_in_may_change_their_password(client, annotator):
    client.force_login(annotator)
    page = client.get(reverse("account:password_change"))
    assert page.status_code == 200 and b"Change password" in page.content


def test_an_invitation_link_sets_the_first_password_once(
    client, astrid, researcher, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        svc.annotator_invite(study=astrid, actor=researcher, email="lee@example.org", site_url="http://testserver/")
    link = re.search(r"http://testserver(/accounts/invitation/\S+)", mail.outbox[0].body).group(1)
    form = client.get(link, follow=True)
    assert b"Choose a password for" in form.content
    done = client.post(
        form.redirect_chain[-1][0],
        {"new_password1": "a-much-better-secret-42", "new_password2": "a-much-better-secret-42"},
    )
    assert done.status_code == 302
    assert client.login(username="lee", password="a-much-better-secret-42")
    client.logout()
    assert b"invalid or was already used" in client.get(link, follow=True).content


def test_the_items_page_links_the_plain_upload_page(rita, astrid):
    page = rita.get(reverse("console:items", args=[astrid.slug])).content.decode()
    assert f'href="/studies/{astrid.slug}/import/"' in page


def test_two_editors_of_one_question_the_second_is_told_instead_of_overwriting(rita, astrid):
    url = reverse("console:question_edit", args=[astrid.slug, "helpful"])
    form = rita.get(url).context["form"]
    data = {k: v for k, v in form.initial.items() if v is not None}
    data["required"] = "on"
    assert rita.post(url, {**data, "help_text": "first"}).status_code == 302
    response = rita.post(url, {**data, "help_text": "second"})
    assert response.status_code == 409
    assert "changed by someone else" in response.content.decode()
    assert astrid.questions.get(key="helpful").help_text == "first"


def _populate(study, n_items: int, n_people: int):
    q = study.questions.get(key="helpful")
    pools = [factories.make_pool(study, questions=[q]) for _ in range(2)]
    people = [factories.make_user() for _ in range(n_people)]
    for i, person in enumerate(people):
        factories.add_member(pools[i % 2], person)
    for _ in range(n_items):
        item = factories.make_item(study)
        for i, person in enumerate(people):
            factories.make_assignment(pools[i % 2], item, person, status=AssignmentStatus.SUBMITTED,
                                      active_seconds=30, submitted_at=timezone.now())


def test_the_item_and_progress_pages_take_the_same_queries_however_large_the_study(rita, astrid):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def count(url):
        with CaptureQueriesContext(connection) as ctx:
            assert rita.get(url).status_code == 200
        return len(ctx.captured_queries)

    rita.get(reverse("console:index"))  # the first request of a session also checks the one-time-password flag
    _populate(astrid, 2, 2)
    small = (
        count(reverse("console:items", args=[astrid.slug])),
        count(reverse("console:progress", args=[astrid.slug])),
    )
    _populate(astrid, 8, 6)
    large = (
        count(reverse("console:items", args=[astrid.slug])),
        count(reverse("console:progress", args=[astrid.slug])),
    )
    assert large == small


def test_the_preview_shows_the_source_document_and_passages_even_without_chunk_questions(rita, researcher):
    study = svc.study_create(owner=researcher, name="Plain", presets=["plainfact"])
    item = factories.make_item(
        study, "p1", answer="Simple words. More words.", source="The abstract says X. It also says Y."
    )
    from annotation.models import Sentence
    from annotation.segmentation import split_sentences

    Sentence.objects.bulk_create(
        Sentence(item=item, part="source", index=i, text=s.text, start=s.start, end=s.end)
        for i, s in enumerate(split_sentences(item.source))
    )
    factories.make_chunk(item, 1, "A retrieved passage.")
    page = rita.get(reverse("console:preview", args=[study.slug])).content.decode()
    assert "Source document" in page and "It also says Y." in page
    assert "Retrieved passages" in page and "A retrieved passage." in page


def test_adding_a_preset_later_keeps_the_edited_questions(rita, astrid, researcher):
    svc.question_update(question=astrid.questions.get(key="helpful"), actor=researcher, spec={"help_text": "edited"})
    response = rita.post(reverse("console:presets_apply", args=[astrid.slug]), {"presets": ["icat", "astrid"]})
    assert response.status_code == 302
    assert astrid.questions.filter(key="aspect_covered").exists()
    assert astrid.questions.get(key="helpful").help_text == "edited"
    assert rita.post(reverse("console:presets_apply", args=[astrid.slug]), {"presets": ["nope"]}).status_code == 400
