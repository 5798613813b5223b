"""Polarity and negation of a sentence, for the contradiction check (``scoring.metrics.contradiction``).

Two things a similarity backend cannot see, read here without a model:

1. **Opposite terms** (``GROUPS``): "take it *before* meals" against "take it *after* meals", "*raises* blood
   pressure" against "*lowers* blood pressure", "a *common* side effect" against "a *rare* side effect". Each
   group has two poles, each pole a list of words and phrases (synonyms: raise ≈ increase ≈ boost ≈ elevate).
   :func:`read` finds the terms a sentence holds, each with its *context* (the content words within
   ``ANCHOR_WINDOW`` tokens, inside its clause). :func:`oppositions` calls two sentences contradictory on a group
   when one holds only one pole and the other only the opposite one, or when the group's terms, paired one to
   one by shared context (most shared words first; on a tie, same pole first), pair two opposite poles: so
   "high in the blood and low in urine" against "low in the blood and high in urine" is caught, while a
   paraphrase keeping both antonyms in place is not. A disjunction naming both poles ("with or without food")
   holds both, so it is compatible with either ("with food"; "on an empty stomach"). ``MERGE`` compares rank
   (first-line / last resort) and efficacy (effective / ineffective) as part of ``action`` (recommended /
   avoid); :func:`match` is the gate below ``MIN_MATCH`` (content F1 with the polarity terms left out).

2. **Negation and hypothetical scope**, read by ConText (Harkema, Dowling, Thornblade, Chapman: "ConText: An
   algorithm for determining negation, experiencer, and temporal status from clinical reports", J Biomed
   Inform 42(5):839–851, 2009; built on NegEx, Chapman et al., J Biomed Inform 34(5):301–310, 2001) as
   medspaCy implements it (Eyre, Chapman, Peterson, Shi, Alba, Jones, Box, DuVall, Patterson: "Launching into
   clinical space with medspaCy: a new clinical text processing toolkit in Python", AMIA Annu Symp Proc
   2021:438–447). :func:`pipeline` is one blank spaCy English pipeline (no model, nothing downloaded) holding
   medspaCy's ``medspacy_context`` component, built on first use and shared (1 to 9 s on a 2-core machine, most
   of it importing spaCy and, through thinc, torch; then under a millisecond a sentence, the modifiers cached
   per sentence by :func:`modifiers`). Its rules are medspaCy's default ConText rules (negated existence,
   possible existence, hypothetical, historical, family) plus Concord's own (:func:`concord_rules`), which win
   where both name the same phrase:

   - *trigger terms*, each a ``FORWARD`` rule with a scope of ``MAX_SCOPE`` tokens (NegEx's window):
     ``NEGATION_TRIGGERS`` ("not", "no", "never", "n't", "cannot", …: ``NEGATED_EXISTENCE``),
     ``WEAK_NEGATION_TRIGGERS`` ("instead of", "rather than", "without": ``WEAK_NEGATION``, which reverse a
     term in their scope but never negate the sentence), ``HYPOTHETICAL_TRIGGERS`` ("if", "in case",
     "unless", "should you", …: ``HYPOTHETICAL``); a negation's scope also ends at a hypothetical trigger
     (``terminated_by``);
   - *pseudo-triggers* (``PSEUDO_TRIGGERS``: "not only", "no doubt", "with or without", "whether or not",
     "if not", "no matter", …), ``PSEUDO`` rules: they contain a trigger word but trigger nothing;
   - *termination terms* (``TERMINATORS``: "but", "however", "although", "except", "whereas", "which",
     "because", …; ``PUNCTUATION_TERMINATORS``: , ; : ( ) and the end of the sentence; "or" / "and" where a new
     clause follows, ``CLAUSE_JOINTS``), ``TERMINATE`` rules that end every scope they fall in.

   ConText's *targets* are the polarity terms found in (1), given to it as the span group ``SPAN_GROUP``; a
   trigger that is part of a term ("no symptoms": asymptomatic; "no more than": at most; "not allowed")
   is that term and no modifier (``prune_on_target_overlap``). What ConText does with a scope — mark the
   targets in it as negated or hypothetical — is applied to the polarity terms: every term a negation
   modifies takes the opposite pole ("*not* commonly associated" holds *rare*; "do *not* take it" holds
   *avoid*), and that negation has then been accounted for, unless the other sentence has no term of that
   group to compare with (:func:`negated_against`). Groups whose opposite a negation does not express
   (``NOT_NEGATED``: "not in the morning" is not "in the evening") are left as they are. A negation that
   modifies no (reversible) term is the sentence's negation (``Reading.negated``), kept separately for the
   assertion and for hypothetical scopes ("if it does *not* improve"), which are compared only when both
   sentences have one (:func:`negation_differs`).

   ConText's other attributes are read and recorded, not compared: ``Reading.historical`` / ``Term.historical``
   (a ``HISTORICAL`` modifier: "history of"), ``Reading.family`` / ``Term.family`` (the experiencer is not the
   patient: a ``FAMILY`` modifier), ``Reading.uncertain`` (``POSSIBLE_EXISTENCE``: "possible", "may be"), and
   every modifier in ``Reading.modifiers``. On the natural set's dev split no sentence holds a historical
   modifier, and every experiencer modifier is "child" / "children" (a population in consumer health text,
   not a relative of the patient), on both sides of the pair but one: comparing them could only fit that
   noise, so a claim is not called contradicted for its experiencer or time differing from its evidence.

Implicit negatives that are paraphrases, not contradictions, are poles rather than negations: "seldom" is
*rare* ("not commonly" read through its scope is *rare* too), "skip", "stay off", "stop", "avoid" are
*avoid* (and absorb the verb they govern: "stop taking" is *avoid*, not *avoid* and *take*; "avoid dry air"
reverses *dry*); against a sentence with no action term, an avoid-word is its negation ("avoid alcohol" / "do
not drink alcohol"). An action word after "while", "when", "after", … ("while using colchicine") is a
circumstance, not an instruction, and is left out.

Sources of the groups (assembled for Concord, checked by hand; no list was copied from the natural
contradiction set, which is used only to measure, tuned on its ``dev`` split):

- ``direction``, ``amount``, ``course``, ``speed``, ``position``, ``location``: lexical antonymy as WordNet
  records it (Miller, "WordNet: a lexical database for English", CACM 38(11), 1995; Fellbaum ed. 1998):
  increase/decrease, raise/lower, more/less, high/low, improve/worsen, fast/slow, upper/lower, above/below,
  sit/stand vs lie; synonyms are WordNet-style near-synonyms chosen by hand.
- ``food``, ``timing``, ``time_of_day``, ``together``: the British National Formulary's cautionary and
  advisory labels for dispensed medicines (BNF Appendix 3, e.g. label 21 "Take with or just after food, or a
  meal", label 22 "Take 30 to 60 minutes before food", label 23 "Take this medicine when your stomach is
  empty") and the administration wording of patient information leaflets (morning / at bedtime, take the
  two medicines apart / at the same time).
- ``frequency``: the frequency convention of EU summaries of product characteristics and leaflets (very
  common, common, uncommon, rare, very rare: European Commission, "A guideline on summary of product
  characteristics", rev. 2, 2009, section 4.8).
- ``severity``: the grading of adverse events (mild, moderate, severe, life-threatening: NCI Common
  Terminology Criteria for Adverse Events v5.0, 2017) and SNOMED CT's severity qualifier values.
- ``chronicity``, ``nature``: SNOMED CT qualifier values (acute / chronic; benign / malignant neoplasm).
- ``action`` (take, continue, recommended vs avoid, stop, contraindicated), ``rank`` (first-line vs last
  resort): the SmPC's sections 4.2 "Posology" and 4.3 "Contraindications" and the first-line / second-line /
  reserve vocabulary of treatment guidelines (e.g. NICE guidance).
- ``safety`` (safe vs dangerous), ``efficacy`` (effective vs ineffective), ``access`` (prescription-only
  vs over the counter), ``tolerability``, ``necessity``, ``setting`` (cared for at home vs admitted to hospital):
  leaflet wording ("Driving and using machines"; "prescription-only medicine"; "when to go to hospital").
- ``causation`` (cause vs prevent), ``contagion``, ``symptoms`` (symptomatic vs asymptomatic), ``presence``
  (present/positive vs absent/negative), ``susceptibility``, ``quality``, ``firmness``, ``moisture``,
  ``temperature``, ``sameness``, ``bound`` (at least vs at most), ``route`` (oral vs topical), ``laterality``
  (one side vs both sides): WordNet antonymy as above, and SNOMED CT's laterality (unilateral / bilateral) and
  route-of-administration qualifiers.
- Left / right stays where it was, in the body-part slot of ``contradiction``.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

MAX_SCOPE = 8  # tokens a negation or hypothetical scope runs at most
ANCHOR_WINDOW = 4  # tokens each side of a term that make its context
# Settings chosen on the natural set's dev split (each True was better there than False):
FLIP_ALL = True  # a negation reverses every term in its scope (ConText), not only the first
SIMPLE = True  # one pole on each side is an opposition without shared context
ANCHOR = True  # terms paired by shared context
CLAUSE_CONTEXT = True  # a term's context stops at its clause
# Groups whose terms a negation does not turn into the opposite pole ("not in the morning" is not "in the
# evening"): the negation then stays a negation of the sentence.
NOT_NEGATED = frozenset(
    [
        "location",
        "timing",
        "time_of_day",
        "together",
        "position",
        "setting",
        "temperature",
        "route",
        "sameness",
        "speed",
        "access",
    ]
)
MERGE: dict[str, str] = {"rank": "action", "efficacy": "action"}
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "so",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "i",
        "you",
        "he",
        "she",
        "we",
        "they",
        "me",
        "him",
        "her",
        "us",
        "them",
        "my",
        "your",
        "his",
        "our",
        "their",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "will",
        "would",
        "shall",
        "should",
        "can",
        "could",
        "may",
        "might",
        "must",
        "what",
        "which",
        "who",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "some",
        "such",
        "only",
        "also",
        "about",
        "into",
        "over",
        "under",
        "up",
        "out",
        "per",
        "every",
        "than",
        "very",
        "most",
        "even",
        "just",
    ]
)

# group -> (pole A, pole B); each pole: regular expressions (lower-case text, matched on word boundaries).
# Order matters only where two groups could match the same words: earlier groups claim their span first.
GROUPS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "location": (
        (r"upper", r"above", r"top", r"(?:facing )?upwards?", r"facing up"),
        (
            r"lower(?= (?:left|right|back|abdomen|belly|legs?|limbs?|part|half|body|side|arm|jaw|teeth|eyelid))",
            r"below",
            r"bottom",
            r"beneath",
            r"(?:facing )?downwards?",
            r"facing down",
        ),
    ),
    "food": (
        (
            r"with (?:your |a |some )?(?:food|meals?|snacks?|milk|breakfast|lunch|dinner|supper)",
            r"(?:alongside|together with) (?:your |a )?(?:food|meals?|breakfast|lunch|dinner)",
            r"after eating",
            r"with a (?:large |big |light )?meal",
            r"(?:a |your )?full stomach",
        ),
        (r"(?:on |with )?an empty stomach", r"without (?:any )?(?:food|meals?|eating)", r"fasting", r"before eating"),
    ),
    "timing": (
        (
            r"before(?= (?:\w+ ){0,3}?(?:meals?|food|breakfast|lunch|dinner|supper|eating|bed|bedtime|sleep|"
            r"surgery|operations?|procedures?|exercise|treatment|bowel|sex|intercourse|travel|quit|flights?|"
            r"vaccination|injections?|tests?|delivery|birth|pregnancy|conception))",
            r"ahead of",
            r"prior to",
            r"in advance",
        ),
        (
            r"after(?= (?:\w+ ){0,3}?(?:meals?|food|breakfast|lunch|dinner|supper|eating|bed|bedtime|sleep|"
            r"surgery|operations?|procedures?|exercise|treatment|bowel|sex|intercourse|travel|quit|flights?|"
            r"vaccination|injections?|tests?|delivery|birth|pregnancy|conception))",
            r"following",
            r"afterwards",
        ),
    ),
    "time_of_day": (
        (r"(?:in the )?mornings?", r"first thing", r"(?:early )?in the day", r"during the day", r"daytime"),
        (r"(?:in the )?evenings?", r"(?:at )?night(?:[- ]?time)?", r"bedtime", r"at bed", r"overnight"),
    ),
    "together": (
        (r"together", r"at the same time", r"simultaneously"),
        (r"apart", r"separately", r"spaced"),
    ),
    "frequency": (
        (
            r"(?:very |most )?common(?:ly)?",
            r"often",
            r"frequent(?:ly)?",
            r"typical(?:ly)?",
            r"most frequent",
            r"usual(?= (?:cause|culprit|side|symptom))",
            r"many people",
            r"widespread",
            r"regularly",
            r"usually",
            r"mostly",
            r"routinely",
            r"most people",
            r"in most cases",
            r"the majority",
        ),
        (
            r"rare(?:ly)?",
            r"seldom",
            r"uncommon(?:ly)?",
            r"unusual(?:ly)?",
            r"infrequent(?:ly)?",
            r"occasional(?:ly)?",
            r"hardly ever",
            r"very few",
            r"a minority",
            r"in (?:a )?few cases",
        ),
    ),
    "severity": (
        (
            r"mild(?:ly)?",
            r"minor",
            r"slight(?:ly)?",
            r"harmless",
            r"trivial",
            r"nothing to worry about",
            r"insignificant",
            r"benign course",
        ),
        (
            r"severe(?:ly)?",
            r"serious(?:ly)?",
            r"major",
            r"life[- ]threatening",
            r"grave",
            r"fatal",
            r"deadly",
            r"critical",
        ),
    ),
    "nature": (
        (r"benign", r"non[- ]?cancerous", r"non[- ]?malignant"),
        (r"malignant", r"cancerous", r"cancers?"),
    ),
    "quality": (
        (r"good", r"excellent", r"healthy", r"healthier", r"better fitness"),
        (r"poor(?:ly)?", r"bad", r"unhealthy", r"worse fitness"),
    ),
    "susceptibility": (
        (r"resilien(?:t|ce)", r"resistan(?:t|ce) to", r"immune to", r"protected"),
        (r"vulnerab(?:le|ility)", r"susceptib(?:le|ility)", r"prone to", r"at risk"),
    ),
    "firmness": (
        (r"hard", r"firm", r"stiff", r"rigid", r"tense"),
        (r"soft", r"flexible", r"loose", r"relaxed"),
    ),
    "moisture": (
        (r"moist", r"humid", r"damp", r"wet", r"hydrated"),
        (r"dry", r"dried", r"dehydrated"),
    ),
    "presence": (
        (r"present", r"presence of", r"detected", r"positive"),
        (r"absent", r"absence of", r"undetectable", r"negative"),
    ),
    "bound": (
        (r"at least", r"a minimum of", r"no less than", r"or (?:more|longer)"),
        (
            r"at most",
            r"no more than",
            r"not more than",
            r"a maximum of",
            r"up to",
            r"or (?:less|fewer)",
            r"no longer than",
            r"not longer than",
        ),
    ),
    "laterality": (
        (
            r"one side",
            r"one (?:eye|ear|leg|arm|hand|foot|kidney|lung)",
            r"unilateral(?:ly)?",
            r"affected (?:eye|ear|side)",
        ),
        (r"both (?:sides|eyes|ears|legs|arms|hands|feet|kidneys|lungs)", r"bilateral(?:ly)?"),
    ),
    "chronicity": (
        (
            r"short[- ]term",
            r"temporary",
            r"temporarily",
            r"brief(?:ly)?",
            r"fleeting",
            r"transient",
            r"short[- ]lived",
            r"self[- ]limit(?:ed|ing)",
            r"for a while",
            r"resolves?",
            r"resolved",
            r"goes away",
            r"go away",
            r"disappears?",
            r"clears? up",
            r"settles?",
        ),
        (
            r"long[- ]term",
            r"permanent(?:ly)?",
            r"long stretches",
            r"lasting",
            r"long[- ]lasting",
            r"persistent",
            r"persists?",
            r"prolonged",
            r"chronic",
            r"lifelong",
            r"(?:for )?months on end",
            r"for (?:many )?(?:months|years)",
        ),
    ),
    "course": (
        (r"better", r"improves?", r"improved", r"improving", r"eases?", r"relie(?:ve|ves|ved|f)", r"heal(?:s|ed)?"),
        (
            r"worse",
            r"worsens?",
            r"worsening",
            r"worsened",
            r"deteriorates?",
            r"deteriorating",
            r"aggravates?",
            r"aggravated",
            r"exacerbates?",
        ),
    ),
    "causation": (
        (
            r"caus(?:e|es|ed|ing)",
            r"trigger(?:s|ed|ing)?",
            r"lead(?:s|ing)? to",
            r"led to",
            r"result(?:s|ed)? in",
            r"induc(?:e|es|ed|ing)",
            r"provok(?:e|es|ed|ing)",
            r"bring(?:s)? on",
            r"brought on",
        ),
        (r"prevent(?:s|ed|ing)?", r"protect(?:s|ed|ing)? against", r"ward(?:s)? off", r"guard(?:s)? against"),
    ),
    "contagion": (
        (
            r"contagious",
            r"infectious",
            r"transmissible",
            r"catching",
            r"spread(?:s|ing)? (?:\w+ ){0,2}?(?:between|"
            r"from person|to others|to other people)",
            r"pass(?:es|ed)? (?:\w+ ){0,2}?between",
        ),
        (r"non[- ]?contagious", r"non[- ]?infectious"),
    ),
    "symptoms": (
        (r"symptomatic", r"marked symptoms"),
        (r"asymptomatic", r"symptom[- ]free", r"without symptoms", r"no symptoms"),
    ),
    "necessity": (
        (r"necessary", r"needed", r"required", r"essential", r"must"),
        (r"unnecessary", r"optional", r"not (?:needed|necessary|required)", r"no need"),
    ),
    "tolerability": (
        (r"well[- ]tolerated", r"tolerable", r"easy to tolerate", r"easier to tolerate", r"tolerate(?:d)? well"),
        (r"poorly tolerated", r"intolerable", r"hard(?:er)?[- ]to[- ]tolerate", r"tolerate(?:d)? poorly"),
    ),
    "temperature": (
        (r"warm(?:th)?", r"hot", r"heat(?:ed)?"),
        (r"(?<!a )(?<!the )(?<!common )cold(?! sores?)(?!s)", r"cool(?:ed)?", r"ice", r"iced", r"chilled"),
    ),
    "route": (
        (r"oral(?:ly)?", r"by mouth"),
        (r"topical(?:ly)?", r"creams?", r"ointments?"),
    ),
    "sameness": (
        (r"same", r"identical"),
        (r"different(?:ly)?", r"differ(?:s)?", r"distinct"),
    ),
    "speed": (
        (
            r"fast(?:er)?",
            r"quick(?:ly|er)?",
            r"rapid(?:ly)?",
            r"sudden(?:ly)?",
            r"abrupt(?:ly)?",
            r"within (?:a few |the first )?(?:minutes|hours|days?)",
            r"straight away",
            r"immediately",
            r"right away",
            r"promptly",
            r"at once",
            r"soon",
            r"early",
            r"earlier",
        ),
        (
            r"slow(?:ly|er)?",
            r"gradual(?:ly)?",
            r"step by step",
            r"taper(?:ing|ed)?",
            r"over (?:many )?years",
            r"over (?:several )?(?:weeks|months)",
            r"later",
            r"tak(?:e|es|ing) (?:\w+ ){0,3}?(?:weeks|months|years)",
            r"late",
            r"delay(?:s|ed)?",
            r"eventually",
        ),
    ),
    "direction": (
        (
            r"increas(?:e|es|ed|ing)",
            r"rais(?:e|es|ed|ing)",
            r"boost(?:s|ed|ing)?",
            r"elevat(?:e|es|ed|ing)",
            r"enhanc(?:e|es|ed|ing)",
            r"push(?:es|ed|ing)? (?:\w+ ){0,3}?up",
            r"higher",
            r"greater",
            r"stronger",
            r"more",
            r"rises?",
            r"rising",
            r"rose",
            r"amplif(?:y|ies|ied)",
            r"intensif(?:y|ies|ied)",
            r"promot(?:e|es|ed|ing)",
            r"stimulat(?:e|es|ed|ing)",
            r"doubl(?:e|es|ed|ing)",
            r"gain(?:s|ed)?",
            r"growth",
            r"speed(?:s|ed)? up",
            r"accelerat(?:e|es|ed|ing)",
            r"heighten(?:s|ed|ing)?",
            r"potentiat(?:e|es|ed|ing)",
            r"go(?:es)? up",
            r"went up",
            r"climb(?:s|ed|ing)?",
            r"broad(?:er|en|ens|ened)",
            r"wid(?:er|en|ens|ened)",
            r"expand(?:s|ed|ing)?",
            r"more likely",
            r"grow(?:s|n)?",
        ),
        (
            r"decreas(?:e|es|ed|ing)",
            r"lower(?:s|ed|ing)?",
            r"reduc(?:e|es|ed|ing)",
            r"bring(?:s|ing)? (?:\w+ ){0,3}?down",
            r"brought (?:\w+ ){0,3}?down",
            r"cut(?:s|ting)? (?:by|back)",
            r"cut(?:s|ting)? (?:\w+ ){0,2}?down",
            r"dampen(?:s|ed|ing)?",
            r"impair(?:s|ed|ing)?",
            r"diminish(?:es|ed|ing)?",
            r"less",
            r"fewer",
            r"weaker",
            r"weaken(?:s|ed|ing)?",
            r"suppress(?:es|ed|ing)?",
            r"inhibit(?:s|ed|ing)?",
            r"drops?",
            r"dropped",
            r"falls?",
            r"fell",
            r"declines?",
            r"minimi[sz]e[sd]?",
            r"hinders?",
            r"hindered",
            r"interfer(?:e|es|ed|ing)",
            r"counteracts?",
            r"limits?",
            r"limited",
            r"limiting",
            r"loss",
            r"los(?:e|es|ing)",
            r"halv(?:e|es|ed|ing)",
            r"slow(?:s|ed|ing)? down",
            r"narrow(?:s|ed|ing|er)?",
            r"shrink(?:s|ing)?",
            r"shrank",
            r"go(?:es)? down",
            r"went down",
            r"less likely",
            r"alleviat(?:e|es|ed|ing)",
            r"lessen(?:s|ed|ing)?",
        ),
    ),
    "amount": (
        (
            r"high(?:est)?",
            r"plenty",
            r"lots",
            r"large",
            r"excess(?:ive)?",
            r"maximum",
            r"heavy",
            r"too (?:much|many)",
            r"thick",
            r"generous",
        ),
        (
            r"low(?:est)?",
            r"trace",
            r"small",
            r"minimal",
            r"minimum",
            r"little",
            r"light",
            r"too (?:little|few)",
            r"thin",
        ),
    ),
    "position": (
        (r"upright", r"sitting(?: up)?", r"standing", r"sit (?:down|up)", r"stand up", r"seated"),
        (r"lie (?:down|flat)", r"lying(?: down| flat)?", r"recline", r"supine", r"lie"),
    ),
    "safety": (
        (r"safe(?:ly)?", r"no risk", r"fine to", r"risk[- ]free"),
        (r"dangerous", r"unsafe", r"harmful", r"hazardous", r"risky", r"toxic", r"unsafe"),
    ),
    "efficacy": (
        (
            r"effective",
            r"works?",
            r"helpful",
            r"useful",
            r"beneficial",
            r"of benefit",
            r"cur(?:e|es|ed)",
            r"efficacious",
        ),
        (
            r"ineffective",
            r"fail(?:s|ed)?",
            r"useless",
            r"no benefit",
            r"no effect",
            r"does little",
            r"do little",
            r"inconclusive",
        ),
    ),
    "rank": (
        (
            r"first[- ]line",
            r"first choice",
            r"treatment of choice",
            r"preferred",
            r"standard treatment",
            r"first step",
            r"initial treatment",
            r"mainstay",
        ),
        (
            r"last resort",
            r"last[- ]line",
            r"second[- ]line",
            r"third[- ]line",
            r"reserved",
            r"only be considered",
            r"kept for",
            r"held in reserve",
        ),
    ),
    "setting": (
        (r"(?:at|from) home", r"self[- ]care"),
        (r"(?:in |to |into )?(?:a |the )?hospital", r"admitted", r"admission", r"a&e", r"emergency department"),
    ),
    "access": (
        (r"(?:only )?(?:with|on) (?:a )?prescription", r"prescription[- ]only", r"needs? a prescription"),
        (r"over[- ]the[- ]counter", r"otc", r"without (?:a )?prescription"),
    ),
    "action": (
        (
            r"tak(?:e|es|en|ing)",
            r"took",
            r"use",
            r"uses",
            r"using",
            r"continu(?:e|es|ed|ing)",
            r"keep(?:s|ing)? (?:on )?(?:taking|using)",
            r"carr(?:y|ies|ying) on",
            r"(?:get|be|been|are|is) vaccinated",
            r"receiv(?:e|es|ed|ing)",
            r"give",
            r"gives",
            r"giving",
            r"given",
            r"recommend(?:s|ed)?",
            r"advis(?:e|es|ed)",
            r"approved",
            r"encouraged",
            r"suggested",
            r"indicated",
            r"allowed",
            r"report(?:s|ed)?",
            r"(?:be )?evaluated",
            r"(?:be )?checked",
        ),
        (
            r"avoid(?:s|ed|ing)?",
            r"stop(?:s|ped|ping)?",
            r"(?:advis|recommend|warn)(?:s|es|ed|ing)? against",
            r"skip(?:s|ped|ping)?",
            r"quit(?:s|ting)?",
            r"discontinu(?:e|es|ed|ing)",
            r"refrain(?:s|ed|ing)?(?: from)?",
            r"contraindicated",
            r"discouraged",
            r"withh(?:old|olds|eld|olding)",
            r"stay(?:ing)? (?:off|away from)",
            r"steer clear of",
            r"paus(?:e|es|ed|ing)",
            r"hold(?:ing)?(?= (?:it|them|\w+ for))",
            r"ignor(?:e|es|ed|ing)",
            r"cease",
            r"halt",
            r"prohibited",
            r"forbidden",
            r"banned",
            r"not allowed",
        ),
    ),
}

# ConText rules (Harkema et al. 2009; medspaCy's ConTextRule): Concord's own, added to medspaCy's default rules.
# Each literal is matched token by token (the sentence's own tokens, ``_TOKEN``); "n't" matches any token ending in it.
NEGATION_TRIGGERS = (
    "not",
    "no",
    "never",
    "cannot",
    "n't",
    "nor",
    "neither",
    "none",
    "nothing",
    "no longer",
    "lack",
    "lacks",
    "lacking",
    "lack of",
    "lacks of",
    "lacking of",
    "absence of",
    "free of",
    "missing",
    "unable to",
    "fail to",
    "fails to",
)
# Triggers that negate what they scope over but, scoping over no polarity term, do not make the sentence negated:
# "better for a cold rather than allergies", "instead of driving yourself", "without a clear order".
WEAK_NEGATION_TRIGGERS = ("instead of", "rather than", "without")
HYPOTHETICAL_TRIGGERS = ("if", "in case", "unless", "should you", "whether", "in the event")
PSEUDO_TRIGGERS = (
    "not only",
    "not just",
    "no doubt",
    "with or without",
    "whether or not",
    "if not",
    "no matter",
    "not certain whether",
)
TERMINATORS = (
    "but",
    "however",
    "although",
    "though",
    "yet",
    "except",
    "whereas",
    "while",
    "which",
    "who",
    "because",
    "since",
    "so",
    "as",
    "then",
    "until",
    "otherwise",
    "instead",
    "when",
    "whilst",
    "once",
    "after",
    "before",
    "during",
)
# "or" and "and" end a scope only where a new clause follows ("or if …", "and you should …"): a token attribute
# (``concord_joint``) set before ConText runs, matched by one TERMINATE rule.
CLAUSE_JOINTS = {
    "or": frozenset(["the", "if", "when", "it", "you", "they", "a", "an", "in"]),
    "and": frozenset(["the", "it", "you", "they", "your", "should", "must", "is", "are", "can"]),
}
# Clause punctuation and the end of a sentence end a scope too (NegEx's and ConText's terminations).
PUNCTUATION_TERMINATORS = (",", ";", ":", "(", ")", "–", "—", ".", "!", "?")
# "if" and "unless" open a hypothetical scope and end a negation's (``terminated_by``).
NEGATED, WEAK, HYPOTHETICAL, HISTORICAL, FAMILY = (
    "NEGATED_EXISTENCE",
    "WEAK_NEGATION",
    "HYPOTHETICAL",
    "HISTORICAL",
    "FAMILY",
)
SPAN_GROUP = "concord_polarity"
_GOVERNING = re.compile(r"avoid|stop|skip|quit|discontinu|refrain|steer|stay")
_SUBJECTS = frozenset(["you", "they", "we", "i", "he", "she", "it", "are", "is", "be", "being", "still", "also"])
_CIRCUMSTANCE = frozenset(["while", "whilst", "when", "after", "before", "during", "since", "of", "if"])
_CLAUSE_PUNCT = re.compile(r"[,;:–—]")


def _alternation(patterns: tuple[str, ...]) -> re.Pattern[str]:
    ordered = sorted(patterns, key=len, reverse=True)
    return re.compile(r"(?<![\w-])(?:" + "|".join(ordered) + r")(?![\w-])")


_POLES = [(group, pole, _alternation(terms)) for group, poles in GROUPS.items() for pole, terms in enumerate(poles)]
_NEGATION_WORDS = frozenset(t for t in NEGATION_TRIGGERS if " " not in t and t != "n't")
# Where a term's context stops (``CLAUSE_CONTEXT``): the terminators, "if", "unless" and the clause joints.
_TERMINATOR = _alternation(
    tuple(re.escape(t) for t in (*TERMINATORS, "if", "unless"))
    + tuple(rf"{word}(?= (?:{'|'.join(sorted(after))})\b)" for word, after in CLAUSE_JOINTS.items())
)
_TOKEN = re.compile(r"[\w'’-]+|[^\w\s]")
# A disjunction of the two poles of a group ("with or without food") holds both.
_DISJUNCTION = re.compile(
    r"(?<![\w-])with or (?:just |shortly )?(?:without|after)(?: (?:a |any )?(?:food|meals?))?"
    r"(?![\w-])"
)


def _is_negation_word(word: str) -> bool:
    return word in _NEGATION_WORDS or word.endswith("n't")


def _pattern(literal: str, nlp: Language | None) -> list[dict[str, Any]] | None:
    """A token pattern for ``literal``, or None where spaCy's tokenizer splits it as ``_TOKEN`` does (then
    medspaCy's phrase matcher, the faster one, matches it on the lower-case text)."""
    if literal == "n't":
        return [{"LOWER": {"REGEX": r"n't$"}}]
    if nlp is not None and [t.text for t in nlp.make_doc(literal)] == literal.split():
        return None
    return [{"LOWER": word} for word in literal.split()]


def concord_rules(nlp: Language | None = None) -> list[Any]:
    """Concord's ConText rules (medspaCy ``ConTextRule``), each with its category, direction and ``MAX_SCOPE``.

    A termination rule's own scope is one token each side: medspaCy (1.0.1 to 1.3.1) limits a scope by a
    terminator only when ``tuple_overlaps(scope, terminator's scope)``, which misses a terminator whose scope
    contains the whole scope it should end (the default, the sentence or ``MAX_SCOPE`` tokens, always does)."""
    from medspacy.context import ConTextRule

    rules = []
    for literals, category, direction in (
        (NEGATION_TRIGGERS, NEGATED, "FORWARD"),
        (WEAK_NEGATION_TRIGGERS, WEAK, "FORWARD"),
        (HYPOTHETICAL_TRIGGERS, HYPOTHETICAL, "FORWARD"),
        (PSEUDO_TRIGGERS, "PSEUDO", "PSEUDO"),
        (TERMINATORS + PUNCTUATION_TERMINATORS, "TERMINATE", "TERMINATE"),
    ):
        for literal in literals:
            rules.append(
                ConTextRule(
                    literal,
                    category,
                    pattern=_pattern(literal, nlp),
                    direction=direction,
                    max_scope=1 if direction == "TERMINATE" else MAX_SCOPE,
                    terminated_by={HYPOTHETICAL} if category in (NEGATED, WEAK) else None,
                )
            )
    rules.append(
        ConTextRule(
            "<or / and + clause>",
            "TERMINATE",
            pattern=[{"_": {"concord_joint": True}}],
            direction="TERMINATE",
            max_scope=1,
        )
    )
    return rules


def default_rules() -> list[Any]:
    """medspaCy's default ConText rules (``resources/context_rules.json``), less those whose literal is one of
    Concord's own (Concord's rule, with its category, direction and scope, is the one kept: medspaCy reads
    "without" and "rather than" as negated existence, Concord as a weak negation, "if" has ``MAX_SCOPE`` here)."""
    from medspacy.context import ConTextRule
    from medspacy.context.context import DEFAULT_RULES_FILEPATH

    own = set(
        NEGATION_TRIGGERS
        + WEAK_NEGATION_TRIGGERS
        + HYPOTHETICAL_TRIGGERS
        + PSEUDO_TRIGGERS
        + TERMINATORS
        + PUNCTUATION_TERMINATORS
    )
    return [r for r in ConTextRule.from_json(DEFAULT_RULES_FILEPATH) if r.literal.lower() not in own]


_PIPELINE: Language | None = None
_PIPELINE_LOCK = threading.Lock()


def pipeline() -> Language:
    """The one spaCy pipeline (blank English, no model: nothing is downloaded) holding medspaCy's ConText, built on
    first use and shared. ConText reads its targets from the span group ``SPAN_GROUP``; each modifier's scope runs
    at most ``MAX_SCOPE`` tokens."""
    global _PIPELINE
    if _PIPELINE is None:
        with _PIPELINE_LOCK:
            if _PIPELINE is None:
                import medspacy  # noqa: F401  (registers the medspacy_context factory and the Span extensions)
                import spacy
                from spacy.tokens import Token

                if not Token.has_extension("concord_joint"):
                    Token.set_extension("concord_joint", default=False)
                nlp = spacy.blank("en")
                context: Any = nlp.add_pipe(
                    "medspacy_context",
                    config={
                        "rules": None,
                        "max_scope": MAX_SCOPE,
                        "input_span_type": "group",
                        "span_group_name": SPAN_GROUP,
                        "prune_on_target_overlap": True,
                    },
                )
                context.add(default_rules() + concord_rules(nlp))
                _PIPELINE = nlp
    return _PIPELINE


@dataclass
class Term:
    group: str
    pole: int  # 0 or 1, after negation scope
    text: str
    start: int  # token index
    flipped: bool = False
    hypothetical: bool = False
    context: frozenset[str] = frozenset()
    historical: bool = False  # in the scope of a ConText historical modifier ("history of")
    family: bool = False  # in the scope of a ConText experiencer modifier ("family")


@dataclass
class Reading:
    """What :func:`read` finds in one sentence."""

    terms: list[Term] = field(default_factory=list)
    negated: bool = False  # a negation outside hypothetical scope whose scope holds no polarity term
    negated_hypothetical: bool = False  # the same inside a hypothetical scope
    hypothetical: bool = False  # the sentence has a hypothetical (conditional) scope
    # Negations read into polarity terms: (inside hypothetical scope, the groups of the terms they flipped).
    absorbed: list[tuple[bool, frozenset[str]]] = field(default_factory=list)
    # Stems of the words outside polarity terms (stop words left out), and "<group>" for each group it names.
    content: frozenset[str] = frozenset()
    triggers: list[str] = field(default_factory=list)
    # ConText's other attributes, recorded (not compared, see the module doc): a historical modifier ("history of"),
    # an experiencer other than the patient ("family"), an uncertainty modifier ("possible", "suspicious for").
    historical: bool = False
    family: bool = False
    uncertain: bool = False
    modifiers: list[tuple[str, str]] = field(default_factory=list)  # (category, text) of every ConText modifier

    def poles(self, *, raw: bool = False) -> dict[str, set[int]]:
        out: dict[str, set[int]] = {}
        for t in self.terms:
            out.setdefault(t.group, set()).add(t.pole ^ t.flipped if raw else t.pole)
        return out


def _spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _TOKEN.finditer(text)]


def _token_at(spans: list[tuple[int, int]], char: int) -> int:
    for i, (_, end) in enumerate(spans):
        if end > char:
            return i
    return len(spans)


def _length(term: Term) -> int:
    return max(1, len(_TOKEN.findall(term.text)))


def _context(text: str, extents: tuple[tuple[int, int, str], ...]) -> Doc:
    """Run ConText on the sentence's tokens (``_TOKEN``) with the polarity terms (token extents and groups) as its
    targets; the processed spaCy Doc."""
    from spacy.tokens import Doc, Span

    nlp = pipeline()
    spans = _spans(text)
    tokens = [text[a:b] for a, b in spans] or [""]
    spaces = [spans[i + 1][0] > spans[i][1] for i in range(len(spans) - 1)] + [False]
    doc = Doc(nlp.vocab, words=tokens, spaces=spaces)
    for i, word in enumerate(tokens[:-1]):
        if word in CLAUSE_JOINTS and tokens[i + 1] in CLAUSE_JOINTS[word]:
            doc[i]._.concord_joint = True
    doc.spans[SPAN_GROUP] = [Span(doc, a, b, label=group) for a, b, group in extents]
    context: Any = nlp.get_pipe("medspacy_context")
    processed: Doc = context(doc)
    return processed


# (category, trigger text, its scope (first token, end), the extents of the targets it modifies)
Modifier = tuple[str, str, tuple[int, int], tuple[tuple[int, int], ...]]


@lru_cache(maxsize=8192)
def modifiers(text: str, extents: tuple[tuple[int, int, str], ...]) -> tuple[Modifier, ...]:
    """ConText's modifiers of a (lower-case) sentence with these targets, in sentence order, less the termination
    and pseudo ones; cached, as the same evidence sentence is read against many claims."""
    doc = _context(text, extents)
    graph = doc._.context_graph
    targets: dict[int, list[tuple[int, int]]] = {}
    for span, modifier in graph.edges:
        targets.setdefault(id(modifier), []).append((span.start, span.end))
    found = sorted(
        (m for m in graph.modifiers if m.direction not in ("TERMINATE", "PSEUDO")), key=lambda m: m.modifier_span
    )
    return tuple(
        (
            m.category,
            doc[m.modifier_span[0] : m.modifier_span[1]].text,
            tuple(m.scope_span),
            tuple(targets.get(id(m), ())),
        )
        for m in found
    )


def read(sentence: str) -> Reading:
    """Polarity terms, and their negation, hypothetical, historical and experiencer status as medspaCy's ConText
    reads them (see the module doc)."""
    text = sentence.lower().replace("’", "'")
    spans = _spans(text)
    tokens = [text[a:b] for a, b in spans]
    taken = [False] * len(text)

    def claim(m: re.Match[str]) -> bool:
        if any(taken[m.start() : m.end()]):
            return False
        for i in range(m.start(), m.end()):
            taken[i] = True
        return True

    reading = Reading()
    # Disjunctions: both poles of the food group.
    for m in _DISJUNCTION.finditer(text):
        if claim(m):
            at = _token_at(spans, m.start())
            reading.terms.append(Term("food", 0, m.group(), at))
            if "without" in m.group():
                reading.terms.append(Term("food", 1, m.group(), at))
            else:  # "with or just after a meal": with food, and after it
                reading.terms.append(Term("timing", 1, m.group(), at))
    boundary = {_token_at(spans, m.start()) for m in _TERMINATOR.finditer(text)}
    # The longest term wins where terms overlap ("advises against" over "advises"); on equal length, the group
    # listed first ("lower right": location, not direction).
    found = [
        (m, rank, group, pole) for rank, (group, pole, pattern) in enumerate(_POLES) for m in pattern.finditer(text)
    ]
    for m, _, group, pole in sorted(found, key=lambda x: (x[0].start() - x[0].end(), x[1], x[0].start())):
        if claim(m):
            reading.terms.append(Term(MERGE.get(group, group), pole, m.group(), _token_at(spans, m.start())))
    reading.terms.sort(key=lambda t: t.start)

    # "while using colchicine", "when taking it": a circumstance, not an instruction to take or use.
    def circumstance(t: Term) -> bool:
        before = [w for w in tokens[max(0, t.start - 3) : t.start] if w not in _SUBJECTS]
        return bool(before) and before[-1] in _CIRCUMSTANCE

    reading.terms = [t for t in reading.terms if not (t.group == "action" and t.pole == 0 and circumstance(t))]
    # "stop taking", "avoid using": the governing avoid-word absorbs the action word right after it.
    # Likewise "keep taking", "recommended to use", "approved for use": one action, the first word's.
    kept: list[Term] = []
    for t in reading.terms:
        prev = kept[-1] if kept else None
        if prev and t.group == prev.group == "action" and t.start - prev.start <= 3:
            continue
        kept.append(t)
    reading.terms = kept
    # "avoid dry air", "prevent dehydration": an avoid-word negates the evaluative term it governs (moist air).
    for a, b in zip(reading.terms, reading.terms[1:], strict=False):
        if (
            a.group == "action"
            and a.pole == 1
            and _GOVERNING.match(a.text)
            and b.group not in NOT_NEGATED
            and b.group != "action"
            and b.start - a.start <= 3
        ):
            b.flipped = not b.flipped
            b.pole ^= 1

    # ConText: each modifier (trigger) and the targets (polarity terms) in its scope.
    n_tokens = max(1, len(tokens))
    by_extent: dict[tuple[int, int], list[Term]] = {}
    for t in reading.terms:
        if t.start < n_tokens:
            by_extent.setdefault((t.start, min(n_tokens, t.start + _length(t))), []).append(t)
    extents = tuple(sorted({(a, b, t.group) for (a, b), ts in by_extent.items() for t in ts}))
    context_modifiers = modifiers(text, extents)
    hypothetical_scopes = [scope for category, _, scope, _ in context_modifiers if category == HYPOTHETICAL]
    for category, trigger, scope, extents_in in context_modifiers:
        reading.modifiers.append((category, trigger))
        inside = [t for extent in extents_in for t in by_extent.get(extent, [])]
        if category == HYPOTHETICAL:
            reading.hypothetical = True
            reading.triggers.append(trigger)
            for t in inside:
                t.hypothetical = True
            continue
        if category == HISTORICAL:
            reading.historical = True
            for t in inside:
                t.historical = True
            continue
        if category == FAMILY:
            reading.family = True
            for t in inside:
                t.family = True
            continue
        if category not in (NEGATED, WEAK):
            reading.uncertain = reading.uncertain or category == "POSSIBLE_EXISTENCE"
            continue
        reading.triggers.append(trigger)
        first = scope[0]
        hypothetical = any(a <= first < b for a, b in hypothetical_scopes)
        unique = list({id(t): t for t in inside}.values())
        flip = [t for t in unique if not t.flipped and t.group not in NOT_NEGATED]
        flip = flip[: None if FLIP_ALL else 1]
        for t in flip:  # ConText: what lies in the scope is negated, i.e. read as the opposite pole
            t.flipped = True
            t.pole ^= 1
        if flip and category != WEAK:
            reading.absorbed.append((hypothetical, frozenset(t.group for t in flip)))
        if flip or category == WEAK:
            continue
        if hypothetical:
            reading.negated_hypothetical = True
        else:
            reading.negated = True
    # Each term's context: the content words around it, which tie it to what it qualifies.
    inside_terms = {i for t in reading.terms for i in range(t.start, t.start + len(_TOKEN.findall(t.text)))}
    reading.content = frozenset(
        _stem(w)
        for i, w in enumerate(tokens)
        if i not in inside_terms and w[:1].isalpha() and w not in _STOP and not _is_negation_word(w)
    ) | {f"<{t.group}>" for t in reading.terms}
    for t in reading.terms:
        end = t.start + len(_TOKEN.findall(t.text))
        lo, hi = max(0, t.start - ANCHOR_WINDOW), min(len(tokens), end + ANCHOR_WINDOW)
        if CLAUSE_CONTEXT:  # the context stays inside the term's clause
            for i in range(t.start - 1, lo - 1, -1):
                if i in boundary or _CLAUSE_PUNCT.fullmatch(tokens[i]):
                    lo = i + 1
                    break
            for i in range(end, hi):
                if i in boundary or _CLAUSE_PUNCT.fullmatch(tokens[i]):
                    hi = i
                    break
        t.context = frozenset(
            _stem(tokens[i])
            for i in range(lo, hi)
            if i not in inside_terms
            and tokens[i][:1].isalpha()
            and tokens[i] not in _STOP
            and not _is_negation_word(tokens[i])
        )
    return reading


def _stem(word: str) -> str:
    return word.replace("'", "")[:5]


@dataclass(frozen=True)
class Opposition:
    group: str
    claim: str
    evidence: str
    by_negation: bool  # the same pole words, one side negated: a negation rather than a polarity mismatch


def _label(reading: Reading, group: str) -> str:
    return ", ".join(("not " if t.flipped else "") + t.text for t in reading.terms if t.group == group)


def oppositions(claim: Reading, sentence: Reading) -> list[Opposition]:
    """Groups where the claim and the sentence hold opposite poles: one side holds only one pole of the group and
    the other only the opposite one, or a claim term and a sentence term of opposite poles qualify the same
    word (they share a content word within ``ANCHOR_WINDOW`` tokens: "lowers the risk" / "increase the risk")."""
    c, s = claim.poles(), sentence.poles()
    out = []
    for group in dict.fromkeys(t.group for t in claim.terms):
        pair = None
        if SIMPLE and len(c.get(group, ())) == 1 and len(s.get(group, ())) == 1 and c[group] != s[group]:
            ct = next(t for t in claim.terms if t.group == group)
            st = next(t for t in sentence.terms if t.group == group)
            pair = (ct, st)
        if pair is None and ANCHOR:
            pair = _aligned(claim, sentence, group)
        if pair is not None:
            ct, st = pair
            by_negation = ct.flipped != st.flipped and ct.text == st.text
            out.append(
                Opposition(
                    group,
                    ("not " if ct.flipped else "") + ct.text,
                    ("not " if st.flipped else "") + st.text,
                    by_negation,
                )
            )
    return out


def match(claim: Reading, sentence: Reading) -> float:
    """F1 of the two sentences' content stems, polarity terms left out (they are the slot compared)."""
    common = len(claim.content & sentence.content)
    return 2 * common / (len(claim.content) + len(sentence.content)) if common else 0.0


def _aligned(a: Reading, b: Reading, group: str) -> tuple[Term, Term] | None:
    """Pair the group's terms of ``a`` and ``b`` one to one, the pairs sharing most context words first (on a
    tie, a pair of the same pole first): the first pair that shares context and holds opposite poles, if any."""
    pairs = sorted(
        (
            (len(t.context & u.context), t.pole == u.pole, i, j, t, u)
            for i, t in enumerate(a.terms)
            if t.group == group
            for j, u in enumerate(b.terms)
            if u.group == group
        ),
        key=lambda x: (-x[0], not x[1], x[2], x[3]),
    )
    used_a: set[int] = set()
    used_b: set[int] = set()
    for overlap, same, i, j, t, u in pairs:
        if not overlap:
            break
        if i in used_a or j in used_b:
            continue
        used_a.add(i)
        used_b.add(j)
        if not same:
            return t, u
    return None


def negation_differs(claim: Reading, sentence: Reading) -> bool:
    """One side holds a negation and the other does not (assertions; hypothetical scopes only when both sentences
    have one). A negation read into a polarity term counts only when the other side has no term of that group
    to compare it with: "not commonly" against "seldom" is compared as rare against rare, "not commonly" against
    a sentence that says nothing about frequency is a negation."""

    if negated_against(claim, sentence) != negated_against(sentence, claim):
        return True
    return (
        claim.hypothetical
        and sentence.hypothetical
        and (negated_against(claim, sentence, hypothetical=True) != negated_against(sentence, claim, hypothetical=True))
    )


def negated_against(a: Reading, b: Reading, *, hypothetical: bool = False) -> bool:
    """Is ``a`` negated when compared with ``b`` (see :func:`negation_differs`)?"""
    groups = {t.group for t in b.terms}
    own = a.negated_hypothetical if hypothetical else a.negated
    if own or any(h == hypothetical and not (g & groups) for h, g in a.absorbed):
        return True
    # "Avoid alcohol" against "Do not drink alcohol": an avoid-word is the negation when the other side has no
    # action term to compare it with.
    return "action" not in groups and any(
        t.group == "action"
        and t.pole == 1
        and not t.flipped
        and t.hypothetical == hypothetical
        and _GOVERNING.match(t.text)
        for t in a.terms
    )


@lru_cache(maxsize=4096)
def polarity_words(text: str) -> frozenset[str]:
    """Words of the polarity terms in ``text`` (left out of the content match, like the other slots)."""
    return frozenset(w for t in read(text).terms for w in re.findall(r"[a-z]+(?:'[a-z]+)?", t.text))
