"""Sentence segmentation of clinical text (annotation.segmentation), and the import's fast path
(annotation.segmentation_fast) giving exactly the same spans."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from annotation import segmentation, segmentation_fast
from annotation.segmentation import split_sentences


def _texts(text):
    return [s.text for s in split_sentences(text)]


def _offsets_are_consistent(text, spans):
    previous_end = 0
    for span in spans:
        assert text[span.start : span.end] == span.text
        assert span.text == span.text.strip() and span.text
        assert span.start >= previous_end
        previous_end = span.end


def test_doctor_title_does_not_end_a_sentence():
    assert _texts("Dr. Smith saw the patient. She was well.") == ["Dr. Smith saw the patient.", "She was well."]


def test_latin_abbreviations_do_not_end_a_sentence():
    text = "Avoid NSAIDs, e.g. ibuprofen, if you bleed easily. Rest, i.e. stay in bed, for two days."
    assert _texts(text) == [
        "Avoid NSAIDs, e.g. ibuprofen, if you bleed easily.",
        "Rest, i.e. stay in bed, for two days.",
    ]


def test_approx_does_not_end_a_sentence():
    assert _texts("It takes approx. 3 weeks to work. Then reassess.") == [
        "It takes approx. 3 weeks to work.",
        "Then reassess.",
    ]


def test_decimal_doses_stay_whole():
    assert _texts("Start with 0.5 mg at night. Increase to 1.5 mg if needed.") == [
        "Start with 0.5 mg at night.",
        "Increase to 1.5 mg if needed.",
    ]


def test_numbered_list_items_are_sentences():
    text = "Options include:\n1. Rest.\n2. Fluids.\n3. Paracetamol 500 mg."
    texts = _texts(text)
    assert "1. Rest." in texts and "2. Fluids." in texts and "3. Paracetamol 500 mg." in texts


def test_questions_and_exclamations_end_sentences():
    assert _texts("Is it contagious? Yes! Wash your hands.") == ["Is it contagious?", "Yes!", "Wash your hands."]


def test_offsets_index_the_original_text_even_with_odd_whitespace():
    text = "  Hello there.   Take 0.5 mg daily, e.g. with food.\n\nCall Dr. Jones if worse!  "
    spans = split_sentences(text)
    _offsets_are_consistent(text, spans)
    assert [s.text for s in spans][-1] == "Call Dr. Jones if worse!"


def test_empty_text_has_no_sentences():
    assert split_sentences("") == [] and split_sentences("   \n") == []


def test_html_is_segmented_as_plain_text():
    text = "<b>Take</b> it daily. <script>alert(1)</script> is not code here."
    _offsets_are_consistent(text, split_sentences(text))


# --- the fast path -----------------------------------------------------------------------------

_WORDS = [
    "the",
    "patient",
    "should",
    "take",
    "dose",
    "daily",
    "mg",
    "approx",
    "dr",
    "Dr",
    "e",
    "g",
    "i",
    "e.g",
    "i.e",
    "fig",
    "no",
    "vs",
    "etc",
    "Smith",
    "USA",
    "II",
    "A",
    "I",
    "x",
    "it",
    "is",
    "pain",
    "swelling",
    "0",
    "5",
    "0.5",
    "1",
    "twice",
    "with",
    "food",
    "don't",
    "patient's",
    "a",
    "p",
    "pp",
    "art",
    "St",
    "co",
    "al",
    "jr",
    "mr",
    "ms",
    "(see",
    "below)",
    '"quoted"',
    "'single'",
    "-",
    ";",
    ":",
    ",",
    "...",
    "U.S",
    "week",
    "and",
]
_SEPARATORS = [" ", " ", " ", " ", ". ", ". ", "? ", "! ", ".", "\n", "  ", ", ", ".\n", "!? ", ".. "]


@st.composite
def _clinical_text(draw):
    n = draw(st.integers(min_value=1, max_value=25))
    parts = []
    for _ in range(n):
        word = draw(st.sampled_from(_WORDS))
        if draw(st.booleans()):
            word = word.capitalize()
        parts.append(word)
        parts.append(draw(st.sampled_from(_SEPARATORS)))
    text = "".join(parts)
    if draw(st.booleans()):
        text = text.rstrip() + draw(st.sampled_from([".", "?", "!", ""]))
    return text


_PROSE_WORDS = [
    "the",
    "patient",
    "should",
    "take",
    "dose",
    "daily",
    "mg",
    "approx",
    "dr",
    "fig",
    "no",
    "vs",
    "etc",
    "al",
    "co",
    "jr",
    "mr",
    "ms",
    "st",
    "art",
    "pp",
    "p",
    "x",
    "it",
    "is",
    "pain",
    "swelling",
    "twice",
    "with",
    "food",
    "don't",
    "patient's",
    "a",
    "i",
    "ok",
    "gen",
    "col",
    "ave",
    "est",
    "inc",
    "ltd",
    "min",
    "max",
    "hr",
    "wk",
    "yr",
    "mo",
    "ed",
    "vol",
    "ref",
    "tab",
    "cap",
    "sig",
    "prn",
    "bid",
    "tid",
    "iv",
    "im",
    "po",
    "sc",
    "ca",
    "two",
    "tablets",
    "bleeding,",
    "rest;",
    "fever:",
    "follow-up",
    "is",
    "am",
    "pm",
    "us",
    "nov",
    "dec",
    "jan",
    "sept",
    "oct",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "feb",
    "md",
    "phd",
    "rn",
    "vit",
    "approx",
    "cf",
    "incl",
]


@st.composite
def _plain_prose(draw):
    sentences = []
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        words = draw(st.lists(st.sampled_from(_PROSE_WORDS), min_size=1, max_size=8))
        first = draw(st.sampled_from(["Take", "The", "It", "A", "I", "Dr", "Call", "Rest", "Mg", "St", "No"]))
        sentences.append(" ".join([first, *words]) + draw(st.sampled_from([".", ".", ".", "?", "!"])))
    return " ".join(sentences)


@example("etc. I\nfoo.")  # a line pysbd reads differently alone than before a new line
@example("etc. I\n")
@settings(max_examples=200, deadline=None)
@given(_clinical_text())
def test_fast_path_gives_exactly_the_spans_of_the_full_segmenter(text):
    assert segmentation_fast.split_sentences(text) == segmentation.split_sentences(text)


@settings(max_examples=300, deadline=None)
@given(_plain_prose())
def test_fast_path_agrees_on_prose_full_of_abbreviation_like_words(text):
    assert segmentation_fast.split_sentences(text) == segmentation.split_sentences(text)


def test_fast_path_is_taken_for_plain_prose_and_agrees():
    text = "Take the tablets with food. Stop if you feel dizzy! Is the rash spreading? Call your doctor today."
    fast = segmentation_fast._fast_spans(text)
    assert fast is not None
    assert fast == segmentation.split_sentences(text)


def test_fast_path_declines_abbreviations_decimals_and_new_lines():
    for text in ("See Dr. Smith today.", "Take 0.5 mg daily.", "Rest today.\nDrink water.", "Use it, e.g. daily. Ok."):
        assert segmentation_fast._fast_spans(text) is None


_PLAIN_CLAUSES = [
    "take the tablets with food",
    "stop if you feel dizzy",
    "the dose is 5 mg",
    "rest for two days",
    "it helps with pain and swelling",
    "call your doctor today",
    "fever above 38 is common",
    "use 50% less at night",
    "give 10 mg/kg daily",
    "the rash fades in a week",
    "drink water, rest; and wait",
    "ask about side-effects",
]
_HARD_SENTENCES = [
    "Dr. Lee suggests approx. 0.5 mg twice daily, e.g. after meals.",
    "Take 2.5 ml, i.e. half a spoon, every 8 hrs.",
    "See fig. 2 for the dose vs. weight table.",
    "J. Smith et al. reported it.",
    "The U.S. guidance says so.",
    "1. Rest.",
    "a. Fluids.",
    "Use it etc. and more.",
    "Mr. Brown is fine.",
    "No. 5 is best.",
    "Is it ok?",
    "Wow!",
    "Take 0.5 mg.",
    "St. John wort interacts.",
    "Take it at 8 a.m. daily.",
    "Take it at 8 p.m. Then sleep.",
    "Call 911... Now.",
    "Really?! Yes.",
    "It is II. Then III.",
    "Use 1.5.2 units.",
    "Mix it. then stir.",
]


@st.composite
def _mixed_answer(draw):
    parts = []
    for _ in range(draw(st.integers(min_value=1, max_value=8))):
        if draw(st.integers(min_value=0, max_value=9)) < 4:
            parts.append(draw(st.sampled_from(_HARD_SENTENCES)))
        else:
            clause = draw(st.sampled_from(_PLAIN_CLAUSES))
            parts.append(clause[0].upper() + clause[1:] + draw(st.sampled_from([".", ".", ".", "?", "!"])))
    return " ".join(parts)


@settings(max_examples=200, deadline=None)
@given(_mixed_answer())
def test_piecewise_path_gives_exactly_the_spans_of_the_full_segmenter(text):
    assert segmentation_fast.split_sentences(text) == segmentation.split_sentences(text)


def test_piecewise_path_sends_only_the_hard_piece_to_pysbd():
    text = "Take the tablets with food. Dr. Lee suggests approx. 0.5 mg daily. Call your doctor today."
    assert segmentation_fast._fast_spans(text) is None
    spans = segmentation_fast._piecewise_spans(text)
    assert spans == segmentation.split_sentences(text)
    assert [s.text for s in spans] == [
        "Take the tablets with food.",
        "Dr. Lee suggests approx. 0.5 mg daily.",
        "Call your doctor today.",
    ]


def test_piecewise_path_declines_quotes_brackets_lists_and_new_lines():
    for text in (
        'He said "stop." Then left.',
        "Rest (a lot). Then eat.",
        "Options: 1. Rest. 2. Fluids.",
        "Rest today.\nDrink water.",
    ):
        assert segmentation_fast._piecewise_spans(text) is None


_LINE_FRAGMENTS = [
    "1. Rest.",
    "2. Fluids.",
    "a. Take it.",
    "b) Eat.",
    "- nausea",
    "* rash",
    "Dr.",
    "Smith is here.",
    "e.g.",
    "approx. 5 mg",
    "Take it daily",
    "Then rest.",
    "(see below)",
    '"quoted."',
    "ii.",
    "iii. Sleep.",
    "Call 911!",
    "Is it ok?",
    "  indented line.",
    "Mr. Brown",
    "",
    " ",
    "10. Ten.",
    "Fig. 2 shows it.",
    "U.S.",
    "etc.",
    "A.",
    "B. Smith",
    "vs. placebo.",
    "The end",
    "\t tab.",
    "Take 0.5 mg.",
    "J. Smith et al.",
    "Step 1: rest.",
    "1) one",
    "(a) first",
    "end...",
    "Stop!!",
    "ok?!",
]


@st.composite
def _multi_line_text(draw):
    parts = draw(st.lists(st.sampled_from(_LINE_FRAGMENTS), min_size=1, max_size=8))
    separators = draw(
        st.lists(st.sampled_from(["\n", "\n\n", " ", "\r\n", " \n", "\n "]), min_size=len(parts), max_size=len(parts))
    )
    return "".join(p + s for p, s in zip(parts, separators, strict=True))


@settings(max_examples=300, deadline=None)
@given(_multi_line_text())
def test_line_by_line_segmentation_gives_exactly_the_spans_of_the_full_segmenter(text):
    assert segmentation_fast.split_sentences(text) == segmentation.split_sentences(text)


def test_list_markers_keep_multi_line_text_with_the_full_segmenter():
    text = "Options:\n1. Rest.\n2. Fluids."
    assert segmentation_fast.split_sentences(text) == segmentation.split_sentences(text)


# --- pysbd's character spans, found without compiling a pattern per sentence ---------------------


@settings(max_examples=300, deadline=None)
@given(st.one_of(_clinical_text(), _mixed_answer(), _multi_line_text(), st.text(max_size=80)))
def test_char_spans_by_string_search_are_pysbds_own(text):
    import pysbd

    ours = segmentation._segmenter()
    theirs = pysbd.Segmenter(language="en", clean=False, char_span=True)
    assert type(ours) is not pysbd.Segmenter  # the override is what runs
    assert [(s.sent, s.start, s.end) for s in ours.segment(text)] == [
        (s.sent, s.start, s.end) for s in theirs.segment(text)
    ]


def test_char_spans_skip_an_earlier_occurrence_of_a_repeated_sentence():
    text = "Rest. Rest. Then rest."
    assert [(s.text, s.start) for s in split_sentences(text)] == [("Rest.", 0), ("Rest.", 6), ("Then rest.", 12)]
