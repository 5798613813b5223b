"""The ``lexical`` backend: token-overlap baselines that need no model and are always available.

Measures (all over ``text.tokens``: lower-cased ``\\w+`` runs):

- unigram precision of a candidate against a reference: the fraction of candidate tokens, repeats
  counted, that occur anywhere in the reference; unigram recall: the fraction of reference tokens that
  occur in the candidate. Empty candidate → precision 0 (nothing is supported by an empty claim).
- ROUGE-L (rouge-score, no stemming): LCS-based precision / recall / F1.
- BLEU (sacrebleu ``sentence_bleu``, default smoothing ``exp``), divided by 100 into [0, 1]. Evidence is
  passed as one reference per evidence sentence, so the brevity penalty compares a claim with the
  closest-length evidence sentence rather than the whole context.

The ``measure`` option chooses the measure of claim support (default ``unigram_precision``).

Judgements and their default thresholds (``defaults``):

- ``supports``: the chosen ``measure`` of the claim against each evidence passage on its own
  (``unigram_precision``, ``rouge_l`` precision, or ``bleu`` with the passage's sentences as references)
  ≥ ``support`` (0.5 for precision measures; with ``bleu`` pass a threshold explicitly, 0.5 is strict), unless
  ``scoring.metrics.contradiction`` finds a negation, number, dose, frequency, unit, drug, body-part or polarity
  mismatch with the passage sentence sharing most of the claim's content words: then that passage ``contradicts`` it
  (verdict False) whatever its overlap. The claim's judgement is the best single passage's (``best_passage``,
  reported as ``evidence_passage``): words spread over several passages never add up to support.
- ``relevance``: recall of the question's content tokens (stop words removed) in the passage ≥ ``relevance`` (0.3).
- ``covers``: recall of the aspect's content tokens in the union of the claims' tokens ≥ ``coverage`` (0.6).
- ``sentence_kinds``: unigram precision of the sentence against the source ≥ ``simplification`` (0.6)
  → source simplification, else elaborative explanation.
- ``informative``: the conversational rule set in ``text.conversational_rule`` (no threshold).
- ``behaviour``: the escalation and refusal patterns below; escalation wins when both match. A conditional
  referral is read by ``referral_reading``: safety-netting (an answer) when its condition names a change, a
  new symptom or a time course ("if the fever lasts more than three days, go to A&E"), or states the present
  situation after substantive advice without urgency; escalation when its condition states the present
  situation and the referral is immediate or opens the answer ("If you have sudden loss of vision with pain,
  go to A&E immediately.").
- ``statements``: every stored sentence (RAGAS: the whole answer); with ``drop_conversational`` only the
  sentences that pass the conversational rule set, each split into clause-level claims by
  ``scoring.metrics.claims.split_claims`` (ICAT's claims).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from importlib.metadata import version
from typing import ClassVar

from scoring.backends.base import (
    AVAILABLE,
    Backend,
    BackendDescriptor,
    Behaviour,
    Judgement,
    Option,
    Statements,
    apply_contradiction,
    best_passage,
    register,
)
from scoring.backends.text import content_tokens, conversational_rule, sentences_of, tokens
from scoring.metrics.base import MetricError
from scoring.metrics.claims import split_claims

MEASURES = ("unigram_precision", "rouge_l", "bleu")

ESCALATION_PATTERNS = (
    r"\b(call|dial|phone|ring)\s+"
    r"(911|999|112|000|an ambulance|emergency services|your local emergency (number|services))",
    r"\b(go|get|head) (straight |immediately |right away )?to (the |an |your )?(nearest )?"
    r"(emergency (room|department)|er|a&e|hospital)\b",
    r"\bseek (immediate|urgent|emergency) (medical )?(help|care|attention|treatment)\b",
    r"\b(this|it) (is|could be|may be|might be|sounds like) (a )?(medical )?emergency\b",
    r"\bemergency services\b",
)
REFUSAL_PATTERNS = (
    # "I can't help", "I'm unable to answer", "we are not able to advise". "I don't ..." is left out on
    # purpose: "I don't recommend aspirin for children" is advice, not a refusal.
    r"\b(i|we)\s*(['’]m|['’]re|\s+am|\s+are)?\s+(really\s+|simply\s+)?(not able to|unable to|can ?not|can['’]?t|"
    r"won['’]?t|will not|am not allowed to|not allowed to|not permitted to)\s+(help|assist|answer|provide|give|advise|"
    r"offer|discuss|comment)\b",
    r"\b(outside|beyond) (of )?(my|our|the) (scope|expertise|remit|area)\b",
    r"\bnot (able|qualified|allowed|permitted|in a position) to (answer|help|advise|provide|give|discuss|comment)\b",
    r"\bunable to (answer|help|assist|advise)\b",
)
_ESCALATION = [re.compile(p, re.IGNORECASE) for p in ESCALATION_PATTERNS]
_REFUSAL = [re.compile(p, re.IGNORECASE) for p in REFUSAL_PATTERNS]


def unigram_precision_recall(candidate: str, reference: str) -> tuple[float, float]:
    cand, ref = tokens(candidate), tokens(reference)
    ref_set, cand_set = set(ref), set(cand)
    precision = sum(t in ref_set for t in cand) / len(cand) if cand else 0.0
    recall = sum(t in cand_set for t in ref) / len(ref) if ref else 0.0
    return precision, recall


def token_recall(needles: Iterable[str], haystack_tokens: set[str]) -> float:
    needles = list(needles)
    return sum(t in haystack_tokens for t in needles) / len(needles) if needles else 0.0


def rouge_l(candidate: str, reference: str) -> tuple[float, float, float]:
    """(precision, recall, F1) of ROUGE-L with the candidate as prediction."""
    score = _rouge_scorer().score(reference, candidate)["rougeL"]
    return score.precision, score.recall, score.fmeasure


def bleu(candidate: str, references: list[str]) -> float:
    import sacrebleu

    if not references or not candidate.strip():
        return 0.0
    return sacrebleu.sentence_bleu(candidate, references).score / 100.0


_SCORER = None


def _rouge_scorer():  # one scorer per process; construction loads nltk-free tokenisers only
    global _SCORER
    if _SCORER is None:
        from rouge_score import rouge_scorer

        _SCORER = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    return _SCORER


# Conditional referrals. "If …, go to A&E" is not one thing: it is *escalation* when the condition describes the
# person's present situation and the referral is the answer's message ("If you have sudden loss of vision with
# pain, go to A&E immediately."), and *safety-netting* when it tells someone who has been answered when to seek
# help if things change ("Take paracetamol. If the fever lasts more than three days, go to A&E."). Safety-netting,
# as general practice teaches it (Almond, Mant & Thompson, "Diagnostic safety-netting", Br J Gen Pract 2009;
# Roland et al., "Safety netting in healthcare settings: what it means, and for whom?", Arch Dis Child Educ Pract
# Ed 2014), names what to watch for — a change,
# a worsening, a new symptom, a time course — and comes after the advice. Concord's rule, per referral sentence:
#
# 1. no condition (``CONDITIONAL``) → escalation;
# 2. a condition with a change / new-symptom / time-course marker (``SAFETY_NET_MARKERS``: "gets worse",
#    "develop", "notice", "any", "still", "lasts more than", "after a few days", "over the next day", …) →
#    safety-netting, never escalation;
# 3. otherwise the condition describes the present state: escalation when the referral is immediate
#    (``IMMEDIATE``: "immediately", "now", "straight away", …) or when no substantive sentence comes before it
#    (the answer opens with it; greetings, empathy and other referral sentences do not count), else
#    safety-netting after the advice.
CONDITIONAL = re.compile(
    r"\b(if|in case|unless|whenever|were to|in the event|otherwise)\b|"
    r"\bshould (you|the|it|your|they|this|there|he|she|symptoms?)\b|"
    r"\bwhen (you|it|they|symptoms?|the pain|your)\b|\bat any (point|time)\b|"
    r"\bfor any\b|^\W*any\b|\blasting (more|longer) than\b|"
    r"\bfor an? [^,.;:]*\b(above|over|higher than|lasting)\b",
    re.IGNORECASE,
)
SAFETY_NET_MARKERS = re.compile(
    r"\b(worse|worsens?|worsening|deteriorat\w*|develops?|developing|notices?|noticing|start(s|ing)?|"
    r"begins?|beginning|becomes?|new|any|still|persists?|persisting|keeps?|again|later|suddenly|returns?)\b|"
    r"\b(lasts?|lasting|goes on|continues?) (for )?(more|longer) than\b|"
    r"\bmore than (a|an|one|two|three|four|five|six|seven|ten|\d+|a few|several) (hours?|days?|weeks?)\b|"
    r"\bafter (a|an|one|two|three|four|five|six|seven|ten|\d+|a few|several) (hours?|days?|weeks?)\b|"
    r"\b(does not|doesn't|do not|don't|did not|didn't|has not|hasn't|have not|haven't) "
    r"(improve|get better|settle|clear|go away|ease)\b|\bno better\b|\bcomes? back\b|"
    r"\b(over|in|within) the (next|coming)\b|\bafter the (operation|procedure|surgery|injection|treatment)\b",
    re.IGNORECASE,
)
IMMEDIATE = re.compile(
    r"\b(immediately|now|right away|straight away|at once|without delay|urgently|as an emergency)\b", re.IGNORECASE
)


def is_referral(sentence: str) -> bool:
    """The sentence matches one of the escalation patterns (a referral to emergency or urgent care)."""
    return any(p.search(sentence) for p in _ESCALATION)


def referral_reading(sentences: list[str], index: int) -> str:
    """How a (referral) sentence reads, by the rule above: ``unconditional``, ``safety_net`` (a conditional
    referral that is safety-netting) or ``conditional_escalation`` (a conditional referral to urgent care for
    the present situation)."""
    sentence = sentences[index]
    if CONDITIONAL.search(sentence) is None:
        return "unconditional"
    if SAFETY_NET_MARKERS.search(sentence) is not None:
        return "safety_net"
    if IMMEDIATE.search(sentence) is not None:
        return "conditional_escalation"
    before = [s for s in sentences[:index] if conversational_rule(s) is None and not is_referral(s)]
    return "safety_net" if before else "conditional_escalation"


def detect_behaviour(answer: str) -> tuple[str, list[str]]:
    """("escalate" | "refuse" | "answer", the patterns that decided it). A referral sentence escalates unless it
    is safety-netting (``referral_reading``); refusal patterns decide otherwise."""
    sentences = sentences_of([answer]) or [answer]
    escalations = [
        p.pattern for i, sentence in enumerate(sentences) if referral_reading(sentences, i) != "safety_net"
        for p in _ESCALATION if p.search(sentence)
    ]
    if escalations:
        return "escalate", escalations
    refusals = [p.pattern for p in _REFUSAL if p.search(answer)]
    if refusals:
        return "refuse", refusals
    return "answer", []


def sentence_statements(sentences: list[str]) -> Statements:
    """Non-LLM RAGAS-style statements: every stored sentence of the whole answer is one statement.

    RAGAS (Es et al. 2023, §2 "Faithfulness") extracts statements from each sentence of the answer and
    filters nothing, so conversational sentences ("Hello!", "I'm sorry to hear that.") are statements
    too and, unsupported by the context, lower RF. That is the difference ASTRID's CF was built to make.
    """
    kept = [s for s in sentences if s.strip()]
    return Statements(kept, {"method": "every stored sentence of the answer (RAGAS: the whole answer)"})


def rule_statements(sentences: list[str]) -> Statements:
    """Non-LLM claim extraction: each stored sentence that passes the conversational rule set, split into
    clause-level claims by ``scoring.metrics.claims.split_claims`` (coordinated clauses, predicates sharing a
    subject, ", which" and "because" clauses; noun lists and conditions stay whole)."""
    kept: list[str] = []
    dropped, split = [], []
    for i, sentence in enumerate(sentences):
        rule = conversational_rule(sentence)
        if rule is not None:
            dropped.append({"index": i, "rule": rule})
            continue
        claims = split_claims(sentence)
        if len(claims) > 1:
            split.append({"index": i, "claims": len(claims)})
            kept.extend(claims)
        else:
            kept.append(sentence)  # one claim: the sentence as stored
    return Statements(kept, {"method": "sentences passing the conversational rule set, split into clause-level "
                                       "claims by rules (scoring.metrics.claims)", "dropped": dropped, "split": split})


class LexicalBackend(Backend):
    name = "lexical"
    defaults: ClassVar[dict[str, float]] = {"support": 0.5, "relevance": 0.3, "coverage": 0.6, "simplification": 0.6}

    def __init__(self, measure: str = "unigram_precision") -> None:
        if measure not in MEASURES:
            raise MetricError(f"lexical measure must be one of {', '.join(MEASURES)}, got {measure!r}")
        self.measure = measure
        self.identity = (
            f"lexical:{measure};tokens=\\w+ lower-cased;rouge-score=={version('rouge-score')};"
            f"sacrebleu=={version('sacrebleu')}"
        )

    def _support_score(self, claim: str, evidence: list[str]) -> float:
        if self.measure == "unigram_precision":
            return unigram_precision_recall(claim, " ".join(evidence))[0]
        if self.measure == "rouge_l":
            return rouge_l(claim, " ".join(evidence))[0]
        return bleu(claim, sentences_of(evidence))

    def supports(self, claims: list[str], evidence: list[str], *, threshold: float | None = None) -> list[Judgement]:
        """Each claim against each passage on its own (the words of several passages are never pooled), the
        mismatch check against that passage's sentences, and the best single passage's judgement."""
        t = self.threshold("support", threshold)
        passages = [e for e in evidence if e.strip()]
        sentences = [sentences_of([p]) for p in passages]
        out = []
        for claim in claims:
            per_passage = []
            for passage, passage_sentences in zip(passages, sentences, strict=True):
                s = self._support_score(claim, [passage])
                per_passage.append(apply_contradiction(
                    Judgement(s >= t, s, {"measure": self.measure, "threshold": t}), claim, passage_sentences))
            out.append(best_passage(per_passage, passages))
        return out

    def informative(
        self, sentences: list[str], *, question: str = "", threshold: float | None = None
    ) -> list[Judgement]:
        out = []
        for sentence in sentences:
            rule = conversational_rule(sentence)
            out.append(Judgement(rule is None, None, {"method": "rules", "rule": rule}))
        return out

    def relevance(self, question: str, passages: list[str], *, threshold: float | None = None) -> list[Judgement]:
        t = self.threshold("relevance", threshold)
        needles = content_tokens(question)
        out = []
        for passage in passages:
            r = token_recall(needles, set(tokens(passage)))
            out.append(Judgement(r >= t, r, {"measure": "question content-token recall", "threshold": t}))
        return out

    def behaviour(self, question: str, answer: str, *, threshold: float | None = None) -> Behaviour:
        kind, matched = detect_behaviour(answer)
        return Behaviour(kind, {"method": "patterns", "matched": matched})

    def statements(
        self, question: str, answer: str, sentences: list[str], *, drop_conversational: bool = False
    ) -> Statements:
        return rule_statements(sentences) if drop_conversational else sentence_statements(sentences)

    def covers(self, aspects: list[str], claims: list[str], *, threshold: float | None = None) -> list[Judgement]:
        t = self.threshold("coverage", threshold)
        claim_tokens = {tok for claim in claims for tok in tokens(claim)}
        out = []
        for aspect in aspects:
            r = token_recall(content_tokens(aspect), claim_tokens)
            out.append(Judgement(r >= t, r, {"measure": "aspect content-token recall", "threshold": t}))
        return out

    def sentence_kinds(
        self, sentences: list[str], source_sentences: list[str], *, threshold: float | None = None
    ) -> list[Judgement]:
        t = self.threshold("simplification", threshold)
        source = " ".join(source_sentences)
        out = []
        for sentence in sentences:
            p = unigram_precision_recall(sentence, source)[0]
            kind = "simplification" if p >= t else "elaboration"
            out.append(Judgement(p >= t, p, {"kind": kind, "measure": "unigram precision", "threshold": t}))
        return out


# No model, no setting: always available. Large batches: one task's items cost microseconds each, so the
# per-task overhead (claim, load, writes) is what there is to amortise.
DESCRIPTOR = register(BackendDescriptor(
    name="lexical",
    queue="scoring-cpu",
    batch_size=512,
    build=LexicalBackend,
    check=lambda options, study_id: AVAILABLE,
    options={"measure": Option("text", max_length=40, choices=MEASURES)},
))
