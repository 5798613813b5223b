"""The comparison keys of a pseudonym: two pseudonyms that a reader could take for one another share one.

Annotators are known by their pseudonyms in adjudication, exports and reports, so two people of a study
must never look alike there: "A1", "a1", "Al" (a small L), "AI" (a capital i), "А1" (a Cyrillic A),
"Ａ１" (full width) and "A\u200b1" (with a zero-width space) are one pseudonym to a reader.
``pseudonym_keys`` gives each pseudonym two keys, and two pseudonyms look alike when they share one
(``look_alike``). Pseudonyms are compared so wherever one is checked against another: an import's
pseudonyms against the study's people and against each other, in the dry run as in the import, and the
console's choice of a new member's pseudonym.

A pseudonym is first made plain: NFKC folds compatibility forms (full-width letters, ligatures, Roman
numerals, superscripts); invisible characters (Unicode's Default_Ignorable_Code_Point: zero-width spaces
and joiners, soft hyphens, bidirectional controls, variation selectors) are removed; white space around
it is dropped and each run of it inside becomes one space (a page shows them so). Then look-alike
characters, within and across scripts, are mapped to one prototype by the confusables skeleton of
UTS #39 (ICU's ``SpoofChecker``, the reference implementation, with Unicode's confusables data, not a
table of our own), and case is folded. The two keys differ in the order of those two steps, because the
skeleton is case-sensitive and the relation is not transitive: a capital I looks like a small L, a small
i does not, yet I and i are one letter to a case-insensitive reader. So

* the skeleton first, then the fold, catches what looks alike as written: "AI" and "Al", "0" and "o";
* the fold first, then the skeleton, catches case variants and what they look like: "KIM" and "Kim",
  "M" and "rn";

and one key could not hold both without making a small i and a small L one letter ("Ali" and "All").

Accents are kept: the skeleton decomposes "é" into "e" and a combining acute accent and keeps both, so
"José" and "Jose", "Müller" and "Muller", "Łukasz" and "Lukasz", "Zoë" and "Zoe" stay different people,
as do names in different scripts that do not look alike ("Иван" and "Ivan");
``tests/test_security_import_identities.py`` checks these and the look-alikes above. A name written in
Cyrillic or Greek letters that look Latin does share a key with its Latin look-alike: a reader could not
tell the two people apart.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

import icu

_SPOOF = icu.SpoofChecker()
_INVISIBLE = icu.UnicodeSet("[:Default_Ignorable_Code_Point:]")
# uspoof_getSkeleton's first argument (the check type) is ignored since ICU 58.
_ANY = 0


def _skeleton(text: str) -> str:
    return str(_SPOOF.getSkeleton(_ANY, text))


def _plain(pseudonym: str) -> str:
    text = unicodedata.normalize("NFKC", pseudonym)
    return " ".join("".join(c for c in text if not _INVISIBLE.contains(c)).split())


@lru_cache(maxsize=4096)
def pseudonym_keys(pseudonym: str) -> tuple[str, str]:
    """The two keys of ``pseudonym`` (both "" for one with no visible character): the skeleton of it as
    written, folded; and the skeleton of it folded, folded again. Only for comparing: the pseudonym itself
    is stored and shown as written (trimmed)."""
    text = _plain(pseudonym)
    return _skeleton(text).casefold(), _skeleton(text.casefold()).casefold()


def look_alike(one: str, other: str) -> bool:
    """Whether a reader could take one pseudonym for the other."""
    return not set(pseudonym_keys(one)).isdisjoint(pseudonym_keys(other))
