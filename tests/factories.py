"""Factories that keep relations consistent (a pool's study is its questions' study, and so on).

Plain functions rather than a factory library: each returns saved rows and takes keyword
arguments for what a test cares about.
"""

from __future__ import annotations

import itertools
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from annotation.models import (
    Assignment,
    Chunk,
    Item,
    Pool,
    PoolMembership,
    Question,
    Role,
    Sentence,
    Study,
    StudyRole,
)

_seq = itertools.count(1)
PASSWORD = "correct-horse-battery-staple"


def make_user(username: str | None = None, **extra: Any) -> AbstractBaseUser:
    username = username or f"user{next(_seq)}"
    return get_user_model().objects.create_user(username=username, password=PASSWORD, **extra)


def make_study(*, owner: AbstractBaseUser | None = None, slug: str | None = None, **extra: Any) -> Study:
    owner = owner or make_user()
    n = next(_seq)
    study = Study.objects.create(name=extra.pop("name", f"Study {n}"), slug=slug or f"study-{n}", owner=owner, **extra)
    StudyRole.objects.create(study=study, user=owner, role=Role.RESEARCHER)
    return study


def grant(study: Study, user: AbstractBaseUser, role: str) -> StudyRole:
    return StudyRole.objects.get_or_create(study=study, user=user, role=role)[0]


def make_question(study: Study, key: str = "pf", **extra: Any) -> Question:
    defaults: dict[str, Any] = {
        "scope": "item",
        "kind": "binary",
        "prompt": key,
        "options": [{"value": "yes", "label": "Yes", "key": "1"}, {"value": "no", "label": "No", "key": "2"}],
    }
    defaults.update(extra)
    return Question.objects.create(study=study, key=key, **defaults)


def make_item(
    study: Study, external_id: str | None = None, *, answer: str = "Take 0.5 mg daily. Hello!", **extra: Any
) -> Item:
    item = Item.objects.create(
        study=study,
        external_id=external_id or f"item-{next(_seq)}",
        question=extra.pop("question", "What dose?"),
        answer=answer,
        **extra,
    )
    from annotation.segmentation import split_sentences

    Sentence.objects.bulk_create(
        Sentence(item=item, part="answer", index=i, text=s.text, start=s.start, end=s.end)
        for i, s in enumerate(split_sentences(answer))
    )
    return item


def make_chunk(item: Item, rank: int = 1, text: str = "The usual dose is 0.5 mg daily.", **extra: Any) -> Chunk:
    return Chunk.objects.create(item=item, rank=rank, text=text, **extra)


def make_pool(study: Study, name: str | None = None, *, questions: list[Question] | None = None, **extra: Any) -> Pool:
    pool = Pool.objects.create(study=study, name=name or f"pool-{next(_seq)}", **extra)
    if questions:
        pool.questions.set(questions)
    return pool


def add_member(pool: Pool, user: AbstractBaseUser, pseudonym: str | None = None) -> PoolMembership:
    grant(pool.study, user, Role.ANNOTATOR)
    return PoolMembership.objects.create(
        pool=pool,
        study=pool.study,
        user=user,
        independent=pool.study.independent_pools,
        pseudonym=pseudonym or f"A{next(_seq)}",
    )


def make_assignment(pool: Pool, item: Item, annotator: AbstractBaseUser, **extra: Any) -> Assignment:
    return Assignment.objects.create(pool=pool, item=item, annotator=annotator, **extra)


def one_nominal_assignment(study, annotator):
    """An assignment of one item in a pool asking one nominal question (eight options), and the question."""
    item = make_item(study)
    pf = make_question(
        study, "pf", kind="nominal", options=[{"value": str(n), "label": str(n), "key": str(n)} for n in range(1, 9)]
    )
    pool = make_pool(study, questions=[pf])
    add_member(pool, annotator)
    return make_assignment(pool, item, annotator), pf
