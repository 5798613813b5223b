"""The conversational rule set (``scoring.metrics.text.conversational_rule``) on labelled sentences.

ASTRID (arXiv 2501.08208, §2.2.1) counts a sentence as information-bearing when it carries information the
context must ground, and as conversational when it is a greeting, an acknowledgement, empathetic padding,
thanks, a question back to the user or an offer of further help. Short clinical instructions and yes/no
answers that say what the patient may or may not do carry exactly the information a clinician checks
("Don't swim.", "Yes, you can shower.", "No, don't drive." are the cases from the review of issue 14), so
they are information-bearing however few words they have. The labels below are ours, following that
definition; sentences in the style of post-cataract-surgery follow-up calls (ASTRID's setting).
"""

from __future__ import annotations

import pytest

from scoring.metrics.text import clinical_act, conversational_rule

INFORMATION_BEARING = [
    "Don't swim.",
    "Yes, you can shower.",
    "No, don't drive.",
    "Do not rub your eye.",
    "Avoid swimming for two weeks.",
    "Use the eye drops four times a day.",
    "Please wear the eye shield at night.",
    "You can shower.",
    "You shouldn't drive yet.",
    "No, you cannot fly this week.",
    "Yes, it is safe to read.",
    "Keep the drops in the fridge.",
    "Call 999 now.",
    "Stop the drops.",
    "Take paracetamol.",
    "Never lift heavy objects.",
    "Rest.",
    "Wash your hands first.",
    "Yes, you may bend down.",
    "No, you must not garden yet.",
    "Paracetamol is fine for pain.",
    "Blurred vision is common for a few days.",
    "Book an appointment with your GP.",
    "Wait five minutes between drops.",
]
CONVERSATIONAL = [
    "Hello!",
    "Hi there.",
    "Good morning.",
    "Thank you for your question.",
    "Thanks so much!",
    "I'm sorry to hear that.",
    "I understand how worrying this must be.",
    "That sounds really difficult.",
    "Sure.",
    "Of course.",
    "Okay.",
    "Great question!",
    "Let me know if you have more questions.",
    "I hope this helps.",
    "Feel free to ask anything else.",
    "Is there anything else I can help with?",
    "Take care.",
    "Take care and stay well.",
    "See you soon.",
    "Rest assured.",
    "Get well soon!",
    "You're welcome.",
    "Can you tell me more?",
    "How are you feeling today?",
]


def test_the_labelled_set_is_large_enough_and_balanced():
    assert len(INFORMATION_BEARING) >= 20 and len(CONVERSATIONAL) >= 20
    assert len(INFORMATION_BEARING) + len(CONVERSATIONAL) >= 40


@pytest.mark.parametrize("sentence", INFORMATION_BEARING)
def test_information_bearing_sentences(sentence):
    assert conversational_rule(sentence) is None


@pytest.mark.parametrize("sentence", CONVERSATIONAL)
def test_conversational_sentences(sentence):
    assert conversational_rule(sentence) is not None


def test_the_three_short_instructions_of_the_review_are_clinical_acts():
    assert all(clinical_act(s) for s in ("Don't swim.", "Yes, you can shower.", "No, don't drive."))
    assert not clinical_act("Take care.")


# SQuAD token F1 (Rajpurkar et al. 2016, evaluate-v1.1): PlainQAFact's answer overlap without BERTScore.
@pytest.mark.parametrize(("gold", "prediction", "f1"), [
    ("500 mg", "500 mg", 1.0),
    ("the left eye", "left eye", 1.0),              # articles and case are normalised away
    ("four times a day", "twice a day", 0.4),       # "a" removed; common {day}: P = 1/2, R = 1/3 → F1 = 0.4
    ("", "", 1.0),
    ("paracetamol", "", 0.0),
])
def test_answer_f1_follows_squad(gold, prediction, f1):
    # Values worked by hand with the rules of SQuAD's evaluate-v1.1 script (normalise, token multiset F1;
    # the installed transformers no longer ships squad_metrics to compare with).
    from scoring.metrics.text import answer_f1

    assert answer_f1(gold, prediction) == pytest.approx(f1)
