"""The researcher console's services: protocol editing, pools, people, accounts."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.utils import timezone

from annotation.console import services as svc
from annotation.imports import jobs
from annotation.models import (
    Assignment,
    AssignmentStatus,
    InvitationState,
    Label,
    PasswordChangeRequired,
    PoolMembership,
    Role,
    Study,
    StudyInvitation,
    StudyRole,
)
from concord.errors import Conflict, Forbidden, ValidationFailed
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # Accounts are created in most tests; the production hasher would dominate their run time.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _label(assignment, question, value, unit_key="item"):
    return Label.objects.create(
        assignment=assignment, question=question, unit_key=unit_key, value=value,
        updated_by=assignment.annotator, updated_at=timezone.now(),
    )


@pytest.fixture
def astrid(researcher):
    return svc.study_create(owner=researcher, name="ASTRID pilot", presets=["astrid"])


def _labelled(study, key: str, value):
    """A label on question ``key`` of ``study`` given by a fresh annotator."""
    question = study.questions.get(key=key)
    pool = factories.make_pool(study, questions=list(study.questions.all()))
    person = factories.make_user()
    factories.add_member(pool, person)
    item = factories.make_item(study)
    assignment = factories.make_assignment(pool, item, person, status=AssignmentStatus.SUBMITTED)
    unit = "item" if question.scope == "item" else "s:0"
    return _label(assignment, question, value, unit)


# --- studies ----------------------------------------------------------------------------------


def test_study_create_makes_the_owner_researcher_and_applies_the_presets(researcher):
    study = svc.study_create(
        owner=researcher, name="Both", presets=["icat", "astrid"], hidden_metadata_fields=["model", ""]
    )
    assert StudyRole.objects.filter(study=study, user=researcher, role=Role.RESEARCHER).exists()
    keys = list(study.questions.values_list("key", flat=True))
    assert "information_bearing" in keys and "aspect_covered" in keys
    assert study.slug == "both"
    assert study.hidden_metadata_fields == ["model"]
    assert sorted(study.protocol_presets) == ["astrid", "icat"]


def test_study_create_refuses_an_unknown_preset_and_writes_nothing(researcher):
    with pytest.raises(ValidationFailed, match="unknown protocol preset"):
        svc.study_create(owner=researcher, name="X", presets=["astrid", "nonsense"])
    assert not researcher.owned_studies.exists()


def test_two_owners_studies_with_one_name_get_distinct_slugs(researcher):
    a = svc.study_create(owner=researcher, name="Pilot", presets=["astrid"])
    b = svc.study_create(owner=factories.make_user("other-researcher"), name="Pilot", presets=["astrid"])
    assert (a.slug, b.slug) == ("pilot", "pilot-2")


def test_one_owner_cannot_create_a_second_study_of_the_same_name(researcher):
    svc.study_create(owner=researcher, name="Pilot", presets=["astrid"])
    message = r"you already have a study named 'pilot' \(at pilot\): give this one another name"
    with pytest.raises(Conflict, match=message):
        svc.study_create(owner=researcher, name=" pilot ", presets=["astrid"])
    assert Study.objects.filter(owner=researcher).count() == 1


def test_independent_pools_cannot_be_switched_on_while_someone_is_in_two_pools(study, researcher):
    svc.study_update(study=study, actor=researcher, independent_pools=False)
    q = factories.make_question(study)
    p1, p2 = factories.make_pool(study, questions=[q]), factories.make_pool(study, questions=[q])
    person = factories.make_user("double")
    svc.pool_membership_add(pool=p1, user=person, actor=researcher)
    svc.pool_membership_add(pool=p2, user=person, actor=researcher)
    with pytest.raises(Conflict, match="double"):
        svc.study_update(study=study, actor=researcher, independent_pools=True)
    study.refresh_from_db()
    assert study.independent_pools is False


def test_blinding_settings_are_saved_and_hidden_fields_checked(study, researcher):
    svc.study_update(study=study, actor=researcher, blind_system=False, hidden_metadata_fields=["model", "temperature"])
    study.refresh_from_db()
    assert (study.blind_system, study.hidden_metadata_fields) == (False, ["model", "temperature"])
    with pytest.raises(ValidationFailed, match="metadata key"):
        svc.study_update(study=study, actor=researcher, hidden_metadata_fields=["bad key!"])


# --- protocol ---------------------------------------------------------------------------------


def test_a_new_question_gets_free_keyboard_keys_of_its_scope(astrid, researcher):
    q = svc.question_add(study=astrid, actor=researcher, spec={
        "key": "hedged", "scope": "sentence", "kind": "binary", "prompt": "Hedged?",
        "options": [{"value": "yes"}, {"value": "no"}],
    })
    sentence_keys = [o["key"] for x in astrid.questions.filter(scope="sentence").exclude(pk=q.pk) for o in x.options]
    assert all(o["key"] and o["key"] not in sentence_keys for o in q.options)
    assert q.order == astrid.questions.count() - 1


def test_a_duplicate_question_key_is_refused(astrid, researcher):
    with pytest.raises(Conflict, match="already exists"):
        svc.question_add(
            study=astrid, actor=researcher, spec={"key": "grounded", "scope": "item", "kind": "text", "prompt": "x"}
        )


def test_a_keyboard_key_clash_within_a_scope_is_refused(astrid, researcher):
    taken = astrid.questions.get(key="information_bearing").options[0]["key"]
    with pytest.raises(ValidationFailed, match="already used in scope sentence"):
        svc.question_add(study=astrid, actor=researcher, spec={
            "key": "hedged", "scope": "sentence", "kind": "binary", "prompt": "Hedged?",
            "options": [{"value": "yes", "key": taken}, {"value": "no"}],
        })


def test_the_same_keyboard_key_in_another_scope_is_fine(astrid, researcher):
    taken = astrid.questions.get(key="information_bearing").options[0]["key"]
    q = svc.question_add(study=astrid, actor=researcher, spec={
        "key": "tone", "scope": "aspect", "kind": "binary", "prompt": "Tone ok?",
        "options": [{"value": "yes", "key": taken}, {"value": "no", "key": "z"}],
    })
    assert q.options[0]["key"] == taken


def test_a_condition_on_an_unknown_question_is_refused(astrid, researcher):
    with pytest.raises(ValidationFailed, match="unknown question"):
        svc.question_add(study=astrid, actor=researcher, spec={
            "key": "why", "scope": "sentence", "kind": "text", "prompt": "Why?",
            "condition": {"question": "nope", "in": ["yes"]},
        })


def test_a_condition_on_a_value_the_question_does_not_have_is_refused(astrid, researcher):
    with pytest.raises(ValidationFailed, match="not options of 'information_bearing'"):
        svc.question_add(study=astrid, actor=researcher, spec={
            "key": "why", "scope": "sentence", "kind": "text", "prompt": "Why?",
            "condition": {"question": "information_bearing", "in": ["maybe"]},
        })


def test_conditions_may_not_form_a_cycle(astrid, researcher):
    ib = astrid.questions.get(key="information_bearing")
    with pytest.raises(ValidationFailed, match="cycle"):
        svc.question_update(
            question=ib, actor=researcher, spec={"condition": {"question": "grounded", "in": ["supported"]}}
        )


def test_removing_a_question_others_depend_on_is_refused_with_their_names(astrid, researcher):
    with pytest.raises(Conflict, match="'grounded' refers to it"):
        svc.question_remove(question=astrid.questions.get(key="information_bearing"), actor=researcher)
    assert astrid.questions.filter(key="information_bearing").exists()


def test_removing_an_unlabelled_question_works(astrid, researcher):
    svc.question_remove(question=astrid.questions.get(key="helpful"), actor=researcher)
    assert not astrid.questions.filter(key="helpful").exists()


def test_removing_a_question_with_labels_is_refused_with_the_count(astrid, researcher):
    _labelled(astrid, "harmful", "none")
    with pytest.raises(Conflict, match="has 1 label and cannot be removed"):
        svc.question_remove(question=astrid.questions.get(key="harmful"), actor=researcher)


def test_renaming_an_option_label_keeps_the_stored_value(astrid, researcher):
    label = _labelled(astrid, "harmful", "slight")
    q = astrid.questions.get(key="harmful")
    options = [{**o, "label": "A little" if o["value"] == "slight" else o["label"]} for o in q.options]
    svc.question_update(question=q, actor=researcher, spec={"options": options, "help_text": "New help"})
    q.refresh_from_db()
    assert [o["label"] for o in q.options] == ["None", "A little", "Severe"]
    label.refresh_from_db()
    assert label.value == "slight"


def test_removing_an_option_that_labels_use_is_refused(astrid, researcher):
    _labelled(astrid, "scope_class", "emergency")
    q = astrid.questions.get(key="scope_class")
    with pytest.raises(Conflict, match="options still in use cannot be removed: 'emergency' \\(1 label\\)"):
        svc.question_update(question=q, actor=researcher, spec={"options": q.options[1:]})


def test_an_unused_option_of_a_nominal_question_may_be_removed_after_labelling(astrid, researcher):
    _labelled(astrid, "scope_class", "emergency")
    q = astrid.questions.get(key="scope_class")
    svc.question_update(question=q, actor=researcher, spec={"options": q.options[:-1]})
    q.refresh_from_db()
    assert "non_clinical" not in q.option_values


def test_an_ordinal_scale_cannot_be_reordered_once_labelled(astrid, researcher):
    _labelled(astrid, "harmful", "none")
    q = astrid.questions.get(key="harmful")
    with pytest.raises(Conflict, match="fixed once labelled"):
        svc.question_update(question=q, actor=researcher, spec={"options": list(reversed(q.options))})


def test_the_kind_of_a_labelled_question_cannot_change(astrid, researcher):
    _labelled(astrid, "harmful", "none")
    with pytest.raises(Conflict, match="its kind cannot change"):
        svc.question_update(question=astrid.questions.get(key="harmful"), actor=researcher, spec={"kind": "nominal"})


def test_renaming_a_question_key_follows_the_conditions_that_name_it(astrid, researcher):
    svc.question_update(
        question=astrid.questions.get(key="information_bearing"), actor=researcher, spec={"key": "informative"}
    )
    assert astrid.questions.get(key="grounded").condition == {"question": "informative", "in": ["yes"]}


def test_reorder_must_name_every_question_once(astrid, researcher):
    keys = list(astrid.questions.values_list("key", flat=True))
    svc.question_reorder(study=astrid, actor=researcher, keys=list(reversed(keys)))
    assert list(astrid.questions.values_list("key", flat=True)) == list(reversed(keys))
    with pytest.raises(ValidationFailed, match="missing"):
        svc.question_reorder(study=astrid, actor=researcher, keys=keys[1:])


def test_moving_a_question_up_swaps_it_with_the_previous_one(astrid, researcher):
    keys = list(astrid.questions.values_list("key", flat=True))
    svc.question_move(question=astrid.questions.get(key=keys[2]), actor=researcher, offset=-1)
    assert list(astrid.questions.values_list("key", flat=True))[1:3] == [keys[2], keys[1]]


# --- pools ------------------------------------------------------------------------------------


def test_a_pool_must_include_the_questions_its_conditions_depend_on(astrid, researcher):
    with pytest.raises(ValidationFailed, match="add 'information_bearing' to the pool"):
        svc.pool_create(study=astrid, actor=researcher, name="CF", questions=[astrid.questions.get(key="grounded")])


def test_pool_names_are_unique_per_study(astrid, researcher):
    qs = list(astrid.questions.filter(key="helpful"))
    svc.pool_create(study=astrid, actor=researcher, name="PF", questions=qs)
    with pytest.raises(Conflict, match="already exists"):
        svc.pool_create(study=astrid, actor=researcher, name="PF", questions=qs)


def test_members_are_assigned_items_once_the_pool_has_k_of_them(astrid, researcher):
    items = [factories.make_item(astrid) for _ in range(3)]
    pool = svc.pool_create(
        study=astrid, actor=researcher, name="PF", questions=list(astrid.questions.filter(key="helpful")), overlap=2
    )
    a, b = factories.make_user(), factories.make_user()
    svc.pool_membership_add(pool=pool, user=a, actor=researcher)
    assert not Assignment.objects.filter(pool=pool).exists()
    svc.pool_membership_add(pool=pool, user=b, actor=researcher)
    assert Assignment.objects.filter(pool=pool).count() == 2 * len(items)
    assert StudyRole.objects.filter(study=astrid, user=a, role=Role.ANNOTATOR).exists()
    assert set(PoolMembership.objects.filter(pool=pool).values_list("pseudonym", flat=True)) == {"A1", "A2"}


def test_independent_pools_refuse_a_second_pool_with_a_clear_reason(astrid, researcher):
    qs = list(astrid.questions.filter(key="helpful"))
    p1 = svc.pool_create(study=astrid, actor=researcher, name="CF", questions=qs)
    p2 = svc.pool_create(study=astrid, actor=researcher, name="PF", questions=qs)
    person = factories.make_user("nora")
    svc.pool_membership_add(pool=p1, user=person, actor=researcher)
    with pytest.raises(Conflict, match="already belongs to pool 'CF'"):
        svc.pool_membership_add(pool=p2, user=person, actor=researcher)


def test_nobody_adds_themselves_to_a_pool(astrid, researcher):
    pool = svc.pool_create(
        study=astrid, actor=researcher, name="PF", questions=list(astrid.questions.filter(key="helpful"))
    )
    with pytest.raises(Forbidden):
        svc.pool_membership_add(pool=pool, user=researcher, actor=researcher)


def test_a_person_who_has_not_started_moves_with_their_items(astrid, researcher):
    factories.make_item(astrid)
    qs = list(astrid.questions.filter(key="helpful"))
    p1 = svc.pool_create(study=astrid, actor=researcher, name="CF", questions=qs)
    p2 = svc.pool_create(study=astrid, actor=researcher, name="PF", questions=qs)
    person = factories.make_user()
    m = svc.pool_membership_add(pool=p1, user=person, actor=researcher)
    moved = svc.pool_membership_move(membership=m, to_pool=p2, actor=researcher)
    assert moved.pool == p2 and moved.pseudonym == m.pseudonym
    assert not PoolMembership.objects.filter(pool=p1, user=person).exists()
    assert list(Assignment.objects.filter(annotator=person).values_list("pool_id", flat=True)) == [p2.pk]


def test_with_independent_pools_a_person_who_has_worked_cannot_move(astrid, researcher):
    factories.make_item(astrid)
    qs = list(astrid.questions.filter(key="helpful"))
    p1 = svc.pool_create(study=astrid, actor=researcher, name="CF", questions=qs)
    p2 = svc.pool_create(study=astrid, actor=researcher, name="PF", questions=qs)
    person = factories.make_user("olga")
    m = svc.pool_membership_add(pool=p1, user=person, actor=researcher)
    Assignment.objects.filter(annotator=person).update(status=AssignmentStatus.SUBMITTED)
    with pytest.raises(Conflict, match="olga has already worked on 1 item of CF"):
        svc.pool_membership_move(membership=m, to_pool=p2, actor=researcher)
    assert PoolMembership.objects.get(user=person).pool == p1


def test_moving_back_to_a_pool_they_left_keeps_the_pseudonym_their_work_there_is_credited_to(astrid, researcher):
    # The move used to rewrite the kept membership's pseudonym with the one they carried, crediting their
    # earlier work in that pool to another name (audit_verify reports such an UPDATE as moved credit).
    svc.study_update(study=astrid, actor=researcher, independent_pools=False)
    factories.make_item(astrid)
    qs = list(astrid.questions.filter(key="helpful"))
    p1 = svc.pool_create(study=astrid, actor=researcher, name="CF", questions=qs)
    p2 = svc.pool_create(study=astrid, actor=researcher, name="PF", questions=qs)
    person = factories.make_user()
    in_p2 = svc.pool_membership_add(pool=p2, user=person, actor=researcher, pseudonym="Reviewer Two")
    Assignment.objects.filter(annotator=person, pool=p2).update(status=AssignmentStatus.SUBMITTED)
    svc.pool_membership_remove(membership=in_p2, actor=researcher)
    in_p1 = svc.pool_membership_add(pool=p1, user=person, actor=researcher, pseudonym="Dr X")
    moved = svc.pool_membership_move(membership=in_p1, to_pool=p2, actor=researcher)
    assert (moved.pk, moved.pseudonym, moved.active) == (in_p2.pk, "Reviewer Two", True)
    assert PoolMembership.objects.get(pk=in_p2.pk).pseudonym == "Reviewer Two"


def test_an_item_in_progress_blocks_a_move_even_without_independence(astrid, researcher):
    svc.study_update(study=astrid, actor=researcher, independent_pools=False)
    factories.make_item(astrid)
    qs = list(astrid.questions.filter(key="helpful"))
    p1 = svc.pool_create(study=astrid, actor=researcher, name="CF", questions=qs)
    p2 = svc.pool_create(study=astrid, actor=researcher, name="PF", questions=qs)
    person = factories.make_user()
    m = svc.pool_membership_add(pool=p1, user=person, actor=researcher)
    Assignment.objects.filter(annotator=person).update(status=AssignmentStatus.STARTED)
    with pytest.raises(Conflict, match="in progress"):
        svc.pool_membership_move(membership=m, to_pool=p2, actor=researcher)


def test_removing_a_member_keeps_their_labels_and_pseudonym(astrid, researcher):
    item = factories.make_item(astrid)
    q = astrid.questions.get(key="helpful")
    pool = svc.pool_create(study=astrid, actor=researcher, name="PF", questions=[q])
    person = factories.make_user()
    m = svc.pool_membership_add(pool=pool, user=person, actor=researcher)
    assignment = Assignment.objects.get(pool=pool, item=item, annotator=person)
    assignment.status = AssignmentStatus.SUBMITTED
    assignment.save()
    _label(assignment, q, "not_helpful")
    svc.pool_membership_remove(membership=m, actor=researcher)
    m.refresh_from_db()
    assert m.active is False
    assert Label.objects.filter(assignment__annotator=person).count() == 1


def test_removing_a_member_who_never_started_deletes_their_open_assignments(astrid, researcher):
    factories.make_item(astrid)
    pool = svc.pool_create(
        study=astrid, actor=researcher, name="PF", questions=list(astrid.questions.filter(key="helpful"))
    )
    person = factories.make_user()
    m = svc.pool_membership_add(pool=pool, user=person, actor=researcher)
    svc.pool_membership_remove(membership=m, actor=researcher)
    assert not PoolMembership.objects.filter(pk=m.pk).exists()
    assert not Assignment.objects.filter(annotator=person).exists()


def test_k_cannot_shrink_once_items_are_assigned(astrid, researcher):
    factories.make_item(astrid)
    pool = svc.pool_create(
        study=astrid, actor=researcher, name="PF", questions=list(astrid.questions.filter(key="helpful")), overlap=1
    )
    svc.pool_membership_add(pool=pool, user=factories.make_user(), actor=researcher)
    svc.pool_membership_add(pool=pool, user=factories.make_user(), actor=researcher)
    svc.pool_update(pool=pool, actor=researcher, overlap=2)
    assert Assignment.objects.filter(pool=pool).count() == 2
    with pytest.raises(Conflict, match="cannot shrink"):
        svc.pool_update(pool=pool, actor=researcher, overlap=1)


def test_a_question_with_labels_in_the_pool_stays_in_it(astrid, researcher):
    label = _labelled(astrid, "helpful", "not_helpful")
    pool = label.assignment.pool
    with pytest.raises(Conflict, match="'helpful' already has labels in this pool"):
        svc.pool_update(pool=pool, actor=researcher, questions=list(astrid.questions.filter(key="harmful")))


# --- people -----------------------------------------------------------------------------------


def test_nobody_changes_their_own_role(study, researcher):
    with pytest.raises(Forbidden):
        svc.study_role_grant(study=study, user=researcher, role=Role.ANNOTATOR, actor=researcher)
    with pytest.raises(Forbidden):
        svc.study_role_revoke(study=study, user=researcher, role=Role.RESEARCHER, actor=researcher)


def test_the_last_researcher_cannot_be_removed(study, researcher):
    other = factories.make_user()
    svc.study_role_grant(study=study, user=other, role=Role.RESEARCHER, actor=researcher)
    svc.study_role_revoke(study=study, user=researcher, role=Role.RESEARCHER, actor=other)
    admin = factories.make_user(is_staff=True)
    with pytest.raises(Conflict, match="at least one researcher"):
        svc.study_role_revoke(study=study, user=other, role=Role.RESEARCHER, actor=admin)


def test_revoking_the_annotator_role_takes_them_out_of_pools_but_keeps_labels(astrid, researcher):
    label = _labelled(astrid, "helpful", "not_helpful")
    person = label.assignment.annotator
    svc.study_role_revoke(study=astrid, user=person, role=Role.ANNOTATOR, actor=researcher)
    assert not StudyRole.objects.filter(study=astrid, user=person, role=Role.ANNOTATOR).exists()
    assert PoolMembership.objects.get(user=person).active is False
    assert Label.objects.filter(pk=label.pk).exists()


def test_an_account_with_a_one_time_password_must_change_it(study, researcher):
    pool = factories.make_pool(study, questions=[factories.make_question(study)])
    account = svc.account_create(
        study=study, actor=researcher, username="nurse.kim", email="kim@example.org", pool=pool
    )
    assert account.user.check_password(account.one_time_password)
    assert PasswordChangeRequired.objects.filter(user=account.user).exists()
    assert PoolMembership.objects.filter(pool=pool, user=account.user).exists()
    with pytest.raises(Conflict, match="taken"):
        svc.account_create(study=study, actor=researcher, username="NURSE.KIM")


def test_an_invitation_creates_an_account_and_mails_a_set_password_link(
    study, researcher, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        invitation = svc.annotator_invite(
            study=study, actor=researcher, email="dr.lee@example.org", site_url="http://concord.test/"
        )
    user = invitation.user
    assert not user.has_usable_password()
    assert user.username == "dr.lee"
    # The new account is invited like any other outsider: no role until they accept.
    assert invitation.state == InvitationState.PENDING and invitation.invited == "dr.lee@example.org"
    assert not StudyRole.objects.filter(study=study, user=user).exists()
    assert len(mail.outbox) == 1
    assert "http://concord.test/accounts/invitation/" in mail.outbox[0].body
    assert "accept it to join the study" in mail.outbox[0].body
    assert mail.outbox[0].to == ["dr.lee@example.org"]
    svc.invitation_accept(invitation=invitation, user=user)
    assert StudyRole.objects.filter(study=study, user=user, role=Role.ANNOTATOR).exists()


def test_inviting_an_existing_account_by_e_mail_invites_it_without_a_new_user(
    study, researcher, django_capture_on_commit_callbacks
):
    existing = factories.make_user("lee", email="lee@example.org")
    with django_capture_on_commit_callbacks(execute=True):
        invitation = svc.annotator_invite(
            study=study, actor=researcher, email="LEE@example.org", site_url="http://concord.test"
        )
    assert invitation.user == existing
    assert not StudyRole.objects.filter(study=study, user=existing).exists()
    assert get_user_model().objects.filter(email__iexact="lee@example.org").count() == 1
    assert "existing account" in mail.outbox[0].body


def test_inviting_a_person_of_the_study_by_e_mail_gives_the_role_at_once(
    study, researcher, django_capture_on_commit_callbacks
):
    adjudicator = factories.make_user("lee", email="lee@example.org")
    factories.grant(study, adjudicator, Role.ADJUDICATOR)
    with django_capture_on_commit_callbacks(execute=True):
        person = svc.annotator_invite(study=study, actor=researcher, email="lee@example.org", site_url="http://x")
    assert person == adjudicator
    assert StudyRole.objects.filter(study=study, user=adjudicator, role=Role.ANNOTATOR).exists()
    assert not StudyInvitation.objects.exists()


def test_a_refused_invitation_sends_nothing(study, researcher, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(ValidationFailed):
        svc.annotator_invite(study=study, actor=researcher, email="not-an-address", site_url="http://x")
    assert mail.outbox == []


# --- uploads ----------------------------------------------------------------------------------


def _job(study, researcher, content: bytes, name="items.jsonl"):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return jobs.import_job_create(study=study, actor=researcher, upload=SimpleUploadedFile(name, content))


def test_the_check_reports_progress_and_a_summary_without_writing(astrid, researcher, settings):
    from tests.annotation.console_helpers import ITEMS, jsonl

    settings.MEDIA_ROOT = str(settings.VAR_DIR / "media-test")
    job = _job(astrid, researcher, jsonl(*ITEMS))
    job = jobs.import_job_check(job_id=job.pk)
    assert job.status == "checked"
    assert job.n_done == 2 and job.n_total == 2
    assert job.summary["items"] == 2
    assert not astrid.items.exists()


def test_a_redelivered_import_task_imports_once(astrid, researcher, settings):
    from tests.annotation.console_helpers import ITEMS, jsonl

    settings.MEDIA_ROOT = str(settings.VAR_DIR / "media-test")
    pool = svc.pool_create(
        study=astrid, actor=researcher, name="PF", questions=list(astrid.questions.filter(key="helpful"))
    )
    svc.pool_membership_add(pool=pool, user=factories.make_user(), actor=researcher)
    job = jobs.import_job_check(job_id=_job(astrid, researcher, jsonl(*ITEMS)).pk)
    jobs.import_job_confirm(job=job, actor=researcher)
    assert jobs.import_job_run(job_id=job.pk).status == "done"
    assert jobs.import_job_run(job_id=job.pk).status == "done"
    assert astrid.items.count() == 2
    assert Assignment.objects.filter(pool=pool).count() == 2
    with pytest.raises(Conflict, match="only a checked file"):
        jobs.import_job_confirm(job=job, actor=researcher)


def test_ids_imported_since_the_check_make_the_import_refuse_and_write_nothing(astrid, researcher, settings):
    from tests.annotation.console_helpers import ITEMS, jsonl

    settings.MEDIA_ROOT = str(settings.VAR_DIR / "media-test")
    job = jobs.import_job_check(job_id=_job(astrid, researcher, jsonl(*ITEMS)).pk)
    factories.make_item(astrid, "q2")
    jobs.import_job_confirm(job=job, actor=researcher)
    job = jobs.import_job_run(job_id=job.pk)
    assert job.status == "invalid"
    assert any(e.get("field") == "id" for e in job.errors)
    assert list(astrid.items.values_list("external_id", flat=True)) == ["q2"]


# --- concurrent edits -------------------------------------------------------------------------


def test_a_question_edit_based_on_a_stale_version_is_refused(astrid, researcher):
    q = astrid.questions.get(key="helpful")
    seen = svc.question_fingerprint(q)
    svc.question_update(question=q, actor=researcher, spec={"help_text": "first editor"}, base=seen)
    with pytest.raises(Conflict, match="changed by someone else"):
        svc.question_update(question=q, actor=researcher, spec={"help_text": "second editor"}, base=seen)
    q.refresh_from_db()
    assert q.help_text == "first editor"


def test_stale_study_and_pool_edits_are_refused(astrid, researcher):
    seen = svc.study_fingerprint(astrid)
    svc.study_update(study=astrid, actor=researcher, name="Renamed", base=seen)
    with pytest.raises(Conflict):
        svc.study_update(study=astrid, actor=researcher, blind_system=False, base=seen)
    pool = svc.pool_create(
        study=astrid, actor=researcher, name="PF", questions=list(astrid.questions.filter(key="helpful"))
    )
    seen = svc.pool_fingerprint(pool)
    svc.pool_update(pool=pool, actor=researcher, name="PF-1", base=seen)
    with pytest.raises(Conflict):
        svc.pool_update(pool=pool, actor=researcher, visibility="after_submit", base=seen)
    pool.refresh_from_db()
    assert (pool.name, pool.visibility) == ("PF-1", "nothing")
