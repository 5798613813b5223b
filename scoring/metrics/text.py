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
# A sentence is *not* information-bearing when
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
}
# Words that stay behind when a formula is removed ("sorry to *hear* you are *feeling* unwell") and
# carry no information of their own; ignored when counting what remains.
CONVERSATIONAL_FILLERS = frozenset(
    [
        "hear", "heard", "feel", "feeling", "feels", "going", "through", "know", "ask", "asking", "question",
        "questions", "help", "helps", "glad", "sorry", "happy", "hope", "unwell", "today", "time", "day",
    ]
)
_COMPILED = {kind: re.compile(p, re.IGNORECASE) for kind, p in CONVERSATIONAL_PATTERNS.items()}


def conversational_rule(sentence: str) -> str | None:
    """The rule that makes ``sentence`` non-informative, or None when it is information-bearing."""
    stripped = sentence.strip()
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
