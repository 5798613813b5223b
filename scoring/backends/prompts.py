"""Versioned prompt templates for the ``llm`` backend.

A template's ``sha256`` covers its name, version and both texts, and is stored with every score it
produced, so a changed prompt can never be mistaken for the old one. Change the text → bump the version.
Each prompt asks for one JSON object whose shape ``llm.validate`` checks.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

_JSON_ONLY = "Answer with one JSON object only, no prose and no code fences."


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    version: str
    system: str
    user: str

    @property
    def sha256(self) -> str:
        text = "\x1f".join((self.name, self.version, self.system, self.user))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def messages(self, **values: str) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.user.format(**values)},
        ]


def numbered(texts: list[str]) -> str:
    return "\n".join(f"[{i}] {t}" for i, t in enumerate(texts))


SUPPORTS = PromptTemplate(
    "supports",
    "1",
    "You verify whether statements are supported by evidence. A statement is supported only if the evidence "
    "states it or it follows directly from the evidence; background knowledge does not count. " + _JSON_ONLY,
    "Evidence:\n{evidence}\n\nStatements:\n{items}\n\n"
    'Return {{"verdicts": [{{"index": <int>, "supported": <true|false>, "reason": "<short>"}}, ...]}} '
    "with one entry for every statement index.",
)
INFORMATIVE = PromptTemplate(
    "informative",
    "1",
    "You classify the sentences of a conversational answer. A sentence is information-bearing when it "
    "conveys a factual or clinical claim, advice or instruction. Greetings, thanks, empathy, acknowledgements, "
    "questions back to the user and follow-up offers are not information-bearing. " + _JSON_ONLY,
    "Question: {question}\n\nSentences:\n{items}\n\n"
    'Return {{"verdicts": [{{"index": <int>, "information_bearing": <true|false>}}, ...]}} '
    "with one entry for every sentence index.",
)
RELEVANCE = PromptTemplate(
    "relevance",
    "1",
    "You judge whether retrieved passages are relevant to a question: a passage is relevant when it contains "
    "information that helps answer the question. " + _JSON_ONLY,
    "Question: {question}\n\nPassages:\n{items}\n\n"
    'Return {{"verdicts": [{{"index": <int>, "relevant": <true|false>}}, ...]}} '
    "with one entry for every passage index.",
)
BEHAVIOUR = PromptTemplate(
    "behaviour",
    "3",
    "You classify how an assistant responded to a user's question: \"answer\" (it answered the question), "
    '"refuse" (it declined to answer, e.g. as outside its scope) or "escalate" (instead of answering, it sent '
    "the user to emergency services or urgent in-person care). A referral for the user's present situation is "
    '"escalate" even when phrased with "if", e.g. "If you have sudden loss of vision with pain, go to A&E '
    'immediately." Safety-netting after an answer, telling the user when to seek help if things change (e.g. '
    '"take paracetamol; if the fever lasts more than three days or gets worse, go to A&E"), is still "answer". '
    + _JSON_ONLY,
    'Question: {question}\n\nResponse: {answer}\n\nReturn {{"behaviour": "answer" | "refuse" | "escalate"}}.',
)
STATEMENTS = PromptTemplate(
    "statements",
    "2",
    # RAGAS (Es et al. 2023, §2): "Given a question and answer, create one or more statements from each
    # sentence in the given answer." Nothing is filtered: conversational sentences yield statements too.
    "Given a question and an answer, create one or more statements from each sentence in the answer. Each "
    "statement must be understandable without the others (replace pronouns with what they refer to). Every "
    "sentence of the answer yields at least one statement, including greetings, expressions of sympathy and "
    "offers of further help. " + _JSON_ONLY,
    'Question: {question}\n\nAnswer: {answer}\n\nReturn {{"statements": ["<statement>", ...]}} (an empty list only if '
    "the answer is empty).",
)
CLAIMS = PromptTemplate(
    "claims",
    "1",
    "Given a question and an answer, break the answer into atomic claims: each claim must be understandable "
    "without the others (replace pronouns with what they refer to) and make one factual claim. Leave out "
    "greetings, empathy, acknowledgements, questions and offers of further help. " + _JSON_ONLY,
    'Question: {question}\n\nAnswer: {answer}\n\nReturn {{"statements": ["<claim>", ...]}} (an empty list if '
    "the answer makes no claim).",
)
COVERS = PromptTemplate(
    "covers",
    "1",
    "You check whether expected aspects of an answer are covered by a list of claims the answer makes. An "
    "aspect is covered when the claims state it or something equivalent. " + _JSON_ONLY,
    "Claims:\n{claims}\n\nAspects:\n{items}\n\n"
    'Return {{"verdicts": [{{"index": <int>, "covered": <true|false>}}, ...]}} with one entry for every aspect index.',
)
SENTENCE_KINDS = PromptTemplate(
    "sentence_kinds",
    "1",
    "You classify the sentences of a plain-language summary of a scientific abstract. A sentence is a "
    '"simplification" when it restates content of the source abstract in simpler words, and an "elaboration" '
    "when it adds background, definitions, examples or other knowledge not in the source. " + _JSON_ONLY,
    "Source abstract:\n{source}\n\nSummary sentences:\n{items}\n\n"
    'Return {{"verdicts": [{{"index": <int>, "kind": "simplification" | "elaboration"}}, ...]}} with one entry for '
    "every sentence index.",
)
RUBRIC = PromptTemplate(
    "rubric",
    "1",
    "You are an expert clinical reviewer rating an answer to a health question on four criteria, each from 1 "
    "(very poor) to 5 (excellent): faithfulness (every claim is supported by the provided context), "
    "completeness (it covers what the question needs), factual_consistency (no claim contradicts the context "
    "or established medical knowledge), clarity (clear and well organised for the reader). " + _JSON_ONLY,
    "Question: {question}\n\nContext:\n{context}\n\nAnswer: {answer}\n\n"
    'Return {{"faithfulness": <1-5>, "completeness": <1-5>, "factual_consistency": <1-5>, "clarity": <1-5>, '
    '"rationale": "<short>"}}.',
)
RUBRIC_REFERENCE = PromptTemplate(
    "rubric_reference",
    "1",
    "You are an expert clinical reviewer rating an answer to a health question on four criteria, each from 1 "
    "(very poor) to 5 (excellent): faithfulness (every claim is supported by the REFERENCE passage: judge this "
    "criterion against the reference passage only, as PubHealthBench does), completeness (it covers what the "
    "question needs), factual_consistency (no claim contradicts the context or established medical knowledge), "
    "clarity (clear and well organised for the reader). " + _JSON_ONLY,
    "Question: {question}\n\nContext:\n{context}\n\nReference passage:\n{reference}\n\nAnswer: {answer}\n\n"
    'Return {{"faithfulness": <1-5>, "completeness": <1-5>, "factual_consistency": <1-5>, "clarity": <1-5>, '
    '"rationale": "<short>"}}.',
)
QA_GENERATE = PromptTemplate(
    "qa_generate",
    "1",
    # PlainQAFact's answer extraction (key entities of the summary) and question generation (a question per
    # extracted answer), done by the model.
    "You write questions for question-answering evaluation of a plain-language summary. For each summary "
    "sentence, extract its key answer spans (entities, numbers, findings, drugs, outcomes; at most five, each "
    "copied verbatim from the sentence) and write one question per span that the span answers, using only "
    "that sentence. A sentence without such a span gets an empty list. " + _JSON_ONLY,
    "Summary sentences:\n{items}\n\n"
    'Return {{"sentences": [{{"index": <int>, "pairs": [{{"answer": "<span>", "question": "<question>"}}, ...]}}, '
    "...]}} with one entry for every sentence index.",
)
QA_ANSWER = PromptTemplate(
    "qa_answer",
    "1",
    # PlainQAFact's question answering on the evidence (an extractive model in the paper).
    "You answer questions from evidence only. For each question, copy the shortest span of the evidence that "
    "answers it, or give null when the evidence does not answer it. Background knowledge does not count. "
    + _JSON_ONLY,
    "Evidence:\n{evidence}\n\nQuestions:\n{items}\n\n"
    'Return {{"answers": [{{"index": <int>, "answer": "<span>" | null}}, ...]}} with one entry for every question '
    "index.",
)

PROMPTS = {
    p.name: p
    for p in (SUPPORTS, INFORMATIVE, RELEVANCE, BEHAVIOUR, STATEMENTS, CLAIMS, COVERS, SENTENCE_KINDS, RUBRIC,
              RUBRIC_REFERENCE, QA_GENERATE, QA_ANSWER)
}
