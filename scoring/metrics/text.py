"""Pure text rules shared by metrics and backends: tokenisation and the conversational rule set.

Tokenisation (``tokens``) is lower-cased ``\\w+`` runs. With it, unigram precision of a BEGIN CMU-DoG
response against its knowledge (fraction of response tokens, repeats counted, that occur in the
knowledge) gives ROC AUC 0.96729 for Fully vs Not fully attributable, the figure in that dataset's
MANIFEST (tests/scoring/test_backend_lexical.py checks it).
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\w+")

# A deliberately small English stop list: only words that carry no content on their own. Used for
# "content tokens" (relevance recall, the information-bearing length rule), never for precision.
STOPWORDS = frozenset(
    [
        "a", "an", "the", "and", "or", "but", "if", "then", "so", "of", "to", "in", "on", "at", "by", "for",
        "with", "from", "as", "is", "are", "was", "were", "be", "been", "being", "am", "it", "its", "this",
        "that", "these", "those", "there", "here", "i", "you", "he", "she", "we", "they", "me", "him", "her",
        "us", "them", "my", "your", "his", "our", "their", "do", "does", "did", "done", "have", "has", "had",
        "having", "will", "would", "shall", "should", "can", "could", "may", "might", "must", "not", "no",
        "nor", "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "all", "any", "both",
        "each", "few", "more", "most", "other", "some", "such", "only", "own", "same", "than", "too", "very",
        "just", "also", "about", "into", "over", "under", "again", "further", "once", "up", "down", "out",
        "off", "s", "t", "don", "ll", "ve", "re", "d", "m", "o", "y", "yes", "ok", "okay", "oh",
    ]
)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def content_tokens(text: str) -> list[str]:
    return [t for t in tokens(text) if t not in STOPWORDS]


# --- The conversational rule set (information-bearing classification without a model) ---------------
# A sentence *is* information-bearing, whatever its length, when it carries a clinical act (``clinical_act``):
#   - an imperative of a clinical or everyday-care act, possibly negated or after yes/no/please
#     ("Don't swim.", "No, don't drive.", "Please use the drops.", "Avoid rubbing your eye.");
#   - a yes/no answer or statement that says what the person can, cannot, should or must do
#     ("Yes, you can shower.", "You shouldn't fly.", "It is safe to drive.").
# Otherwise a sentence is *not* information-bearing when
#   - it has fewer than 2 content tokens at all ("haha", "Sure!": rule ``too_short``);
#   - it ends with a question mark (a question to the user carries no claim: ``question_to_user``);
#   - a conversational formula (greeting, thanks, empathy, acknowledgement, follow-up offer) occurs in it
#     and, once the formula is removed, fewer than ``MIN_CONTENT_TOKENS`` content tokens remain, not
#     counting conversational fillers such as "hear" or "feeling" (the rule is named after the formula).
# Otherwise it is information-bearing. Which rule fired is recorded in the details.
MIN_CONTENT_TOKENS = 2

CONVERSATIONAL_PATTERNS: dict[str, str] = {
    "greeting": r"\b(hi|hello|hey|good (morning|afternoon|evening)|greetings|dear)\b",
    "thanks": r"\b(thanks?( you)?( so much| very much)?|you'?re welcome|my pleasure|cheers)\b",
    "empathy": (
        r"\b(i'?m|i am|we'?re|we are) (so |very |really |truly )?(sorry|glad|happy|here)\b|"
        r"\bi (understand|can (imagine|see|understand))\b|\bthat (must|sounds|can be)\b|"
        r"\b(it'?s|that'?s) (understandable|completely normal to feel|hard)\b"
    ),
    "acknowledgement": (
        r"^(sure|okay|ok|of course|certainly|absolutely|great|good|right|i see|got it|indeed|yes|yeah|no|"
        r"haha|lol|wow|cool|nice|awesome|interesting|great question|good question|that'?s a (good|great) question)\b"
    ),
    "follow_up_offer": (
        r"\b(let me know|feel free|hope (this|that) helps|is there anything else|any (other|more|further) "
        r"questions|happy to help|don'?t hesitate|if you (have|need)|reach out|take care|best wishes|"
        r"stay (safe|well)|wish you)\b"
    ),
    "farewell": r"\b(take care|see you|get well|rest assured|keep (well|safe)|all the best|bye|goodbye)\b",
}
# Words that stay behind when a formula is removed ("sorry to *hear* you are *feeling* unwell") and
# carry no information of their own; ignored when counting what remains.
CONVERSATIONAL_FILLERS = frozenset(
    [
        "hear", "heard", "feel", "feeling", "feels", "going", "through", "know", "ask", "asking", "question",
        "questions", "help", "helps", "glad", "sorry", "happy", "hope", "unwell", "today", "time", "day",
        "stay", "well", "soon", "safe", "assured", "really", "difficult", "tough", "worrying", "frustrating",
        "stressful", "upsetting", "anything", "else", "something",
    ]
)
_COMPILED = {kind: re.compile(p, re.IGNORECASE) for kind, p in CONVERSATIONAL_PATTERNS.items()}

# Verbs of acts a patient is told to do or not do (base forms). Farewells built on them ("take care",
# "see you", "keep well", "rest assured", "go ahead") are conversational and excluded below.
CLINICAL_ACTS = frozenset(
    [
        "swim", "shower", "bathe", "bath", "wash", "drive", "fly", "travel", "take", "use", "apply", "put",
        "insert", "instil", "stop", "start", "restart", "continue", "avoid", "eat", "drink", "fast", "rest",
        "sleep", "lie", "sit", "stand", "walk", "run", "jog", "cycle", "exercise", "lift", "bend", "carry",
        "wear", "remove", "rub", "scratch", "touch", "press", "squeeze", "clean", "cover", "dry", "keep",
        "call", "phone", "ring", "contact", "see", "visit", "book", "attend", "return", "come", "go", "wait",
        "smoke", "vape", "inject", "massage", "ice", "elevate", "raise", "bandage", "dress", "change", "sneeze",
        "cough", "blow", "read", "work", "garden", "cook", "shave", "wipe", "apply", "check", "measure",
        "monitor", "record", "test", "tell", "inform", "report", "increase", "reduce", "double", "skip", "miss",
        "stretch", "breastfeed", "feed", "give", "chew", "swallow", "gargle", "rinse", "spit", "hold"
    ]
)
_FAREWELLS = re.compile(
    r"\b(take care|see you|keep (well|safe)|rest assured|go ahead|get well|stay (safe|well)|call me|feel free)\b",
    re.IGNORECASE,
)
_LEAD = r"^(?:(?:yes|no|yeah|nope|ok|okay|please|so|then|also|and|but)\b[\s,!.;:-]*)*"
_NEG = r"(?:(?:do not|don't|dont|never|please don't|please do not)\s+)?"
_MODAL_ANSWER = re.compile(
    r"\b(you|it|that|this)\s*(?:'re|'s| are| is)?\s+(can|can't|cannot|can not|should|shouldn't|should not|must|"
    r"mustn't|must not|may|need to|needn't|don't need to|do not need to|will need to|are able to|are allowed to|"
    r"is (?:safe|fine|ok|okay|not safe) to)\s+(?:not\s+|still\s+|now\s+|also\s+)?(\w+)",
    re.IGNORECASE,
)


def clinical_act(sentence: str) -> bool:
    """True when ``sentence`` tells the person to do or not do something (see the rule set above)."""
    text = sentence.strip().lower().replace("’", "'")
    if _FAREWELLS.search(text):
        return False
    head = re.sub(_LEAD, "", text)
    imperative = re.match(_NEG + r"(\w+)", head)
    if imperative and imperative.group(1) in CLINICAL_ACTS:
        return True
    modal = _MODAL_ANSWER.search(text)
    return bool(modal and modal.group(3) in CLINICAL_ACTS)


def conversational_rule(sentence: str) -> str | None:
    """The rule that makes ``sentence`` non-informative, or None when it is information-bearing."""
    stripped = sentence.strip()
    if not stripped.endswith("?") and clinical_act(stripped):
        return None
    n_content = len(content_tokens(stripped))
    if n_content < 2:
        return "too_short"
    if stripped.endswith("?"):
        return "question_to_user"
    for kind, pattern in _COMPILED.items():
        match = pattern.search(stripped)
        if match is None:
            continue
        remainder = stripped[: match.start()] + " " + stripped[match.end() :]
        remaining = [t for t in content_tokens(remainder) if t not in CONVERSATIONAL_FILLERS]
        if len(remaining) < MIN_CONTENT_TOKENS:
            return kind
    return None


# --- Answer overlap (PlainQAFact's QA pipeline) --------------------------------------------------------
# SQuAD's token F1 (Rajpurkar et al. 2016, the official evaluate-v1.1 script; ``compute_f1`` of
# transformers.data.metrics.squad_metrics, which PlainQAFact's qaeval F1Scorer calls): answers are
# lower-cased, punctuation and the articles a / an / the removed, whitespace collapsed; F1 of the token
# multisets; two empty answers score 1, one empty answer 0.
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def normalize_answer(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def answer_f1(gold: str, prediction: str) -> float:
    gold_tokens, pred_tokens = normalize_answer(gold).split(), normalize_answer(prediction).split()
    if not gold_tokens or not pred_tokens:
        return float(gold_tokens == pred_tokens)
    common = 0
    remaining = list(pred_tokens)
    for token in gold_tokens:
        if token in remaining:
            remaining.remove(token)
            common += 1
    if common == 0:
        return 0.0
    precision, recall = common / len(pred_tokens), common / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)
