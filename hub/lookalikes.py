"""Names that look alike: the floor must always tell two entrants apart, so a name that looks
like another's ('Alice' and 'Аlice', whose first letter is Cyrillic) is refused, and so is a
name that mixes alphabets (a Cyrillic letter among Latin ones is how such a twin is made).

Two names look alike when their skeletons are the same: Unicode's confusable detection (UTS
#39, section 4), each character replaced by the prototype of the characters that look like it
(Cyrillic 'А' and Latin 'A' by 'A', 'rn' for 'm', 'l' for 'I'), compared as typed and
case-folded, each after NFKC (a fullwidth 'Ａ' is an 'A'). The data is Unicode's
confusables.txt as the confusable_homoglyphs package keeps it, and its scripts (Scripts.txt).
Pure: text in, text out.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from functools import cache, lru_cache

# What is no alphabet of its own: digits, punctuation, spaces, combining marks.
NEUTRAL_SCRIPTS = frozenset({"COMMON", "INHERITED"})
# The scripts one name may mix: a single one, or Latin with those written together in China,
# Japan and Korea (UTS #39's "highly restrictive" level, as browsers show a domain name).
TOGETHER = (frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
            frozenset({"LATIN", "HAN", "BOPOMOFO"}),
            frozenset({"LATIN", "HAN", "HANGUL"}))
# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt, Unicode 15.0; Python
# 3.11's 14.0 adds none of them since): drawn as nothing, and UTS #39's skeleton removes them
# before it compares, so 'Alice' with one is an exact twin of 'Alice'. A table, as the regex
# module (which knows the property) is not installed. Merged where ranges meet.
DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD),  # SOFT HYPHEN
    (0x034F, 0x034F),  # COMBINING GRAPHEME JOINER
    (0x061C, 0x061C),  # ARABIC LETTER MARK
    (0x115F, 0x1160),  # HANGUL CHOSEONG FILLER..HANGUL JUNGSEONG FILLER
    (0x17B4, 0x17B5),  # KHMER VOWEL INHERENT AQ..KHMER VOWEL INHERENT AA
    (0x180B, 0x180F),  # MONGOLIAN FREE VARIATION SELECTOR ONE..FOUR, VOWEL SEPARATOR
    (0x200B, 0x200F),  # ZERO WIDTH SPACE..RIGHT-TO-LEFT MARK
    (0x202A, 0x202E),  # LEFT-TO-RIGHT EMBEDDING..RIGHT-TO-LEFT OVERRIDE
    (0x2060, 0x206F),  # WORD JOINER..NOMINAL DIGIT SHAPES (2065 reserved)
    (0x3164, 0x3164),  # HANGUL FILLER
    (0xFE00, 0xFE0F),  # VARIATION SELECTOR-1..VARIATION SELECTOR-16
    (0xFEFF, 0xFEFF),  # ZERO WIDTH NO-BREAK SPACE
    (0xFFA0, 0xFFA0),  # HALFWIDTH HANGUL FILLER
    (0xFFF0, 0xFFF8),  # reserved
    (0x1BCA0, 0x1BCA3),  # SHORTHAND FORMAT LETTER OVERLAP..SHORTHAND FORMAT UP STEP
    (0x1D173, 0x1D17A),  # MUSICAL SYMBOL BEGIN BEAM..MUSICAL SYMBOL END PHRASE
    (0xE0000, 0xE0FFF),  # LANGUAGE TAG, TAG SPACE..CANCEL TAG, VARIATION SELECTOR-17..256
)
# Around right-to-left characters in the library's pairs (its data is taken from the file's
# comments, which show them so): not part of a character.
_LEFT_TO_RIGHT_MARK = "\u200e"


@cache
def _prototypes() -> dict[str, str]:
    """Each confusable character and the prototype it maps to. The library keeps each line of
    confusables.txt (a character -> its prototype) as a pair both ways; a class of look-alikes
    is a star around its prototype: the one member several characters long, else the member
    every other one is paired with, else (of two alone) the one a longer prototype holds, else
    either (both then map to one)."""
    from confusable_homoglyphs.confusables import confusables_data

    paired: dict[str, set[str]] = defaultdict(set)
    for source, targets in confusables_data.items():
        for target in targets:
            one = source.replace(_LEFT_TO_RIGHT_MARK, "")
            other = target["c"].replace(_LEFT_TO_RIGHT_MARK, "")
            if one != other:
                paired[one].add(other)
                paired[other].add(one)
    # A prototype several characters long is made of prototypes (their skeletons are
    # themselves): of two characters paired alone, the one such a prototype holds is theirs.
    within_longer = {c for member in paired if len(member) > 1 for c in member}
    prototypes: dict[str, str] = {}
    seen: set[str] = set()
    for start in paired:
        if start in seen:
            continue
        members, stack = [], [start]
        seen.add(start)
        while stack:
            member = stack.pop()
            members.append(member)
            for other in paired[member] - seen:
                seen.add(other)
                stack.append(other)
        prototype = max(members, key=lambda m: (len(m) > 1, m in within_longer,
                                                len(paired[m]), m.isascii(), m))
        prototypes.update((m, prototype) for m in members if len(m) == 1 and m != prototype)
    return prototypes


def skeleton(text: str) -> str:
    """UTS #39's skeleton: NFD, each character by its prototype, NFD again. Two texts with one
    skeleton look alike; a skeleton is for comparing, never for showing."""
    prototypes = _prototypes()
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(prototypes.get(c, c) for c in decomposed))


# A roster compares each new name with every entrant's: each name's keys are computed once, not
# once a comparison (2,000 entrants and an import's 2,000 lines fit).
@lru_cache(maxsize=4096)
def lookalike_keys(name: str) -> tuple[str, str]:
    """What two names that look alike share, one place or the other: the skeleton of the name
    as typed (an 'I' looks like an 'l') and of the name case-folded (a Cyrillic 'а' among
    capitals), each after NFKC."""
    typed = unicodedata.normalize("NFKC", name)
    folded = unicodedata.normalize("NFKC", typed.casefold())
    return skeleton(typed), skeleton(folded)


def look_alike(one: str, other: str) -> bool:
    return any(a == b for a, b in zip(lookalike_keys(one), lookalike_keys(other), strict=True))


def script_of(char: str) -> str:
    """The character's script (Scripts.txt: LATIN, CYRILLIC, COMMON...; UNKNOWN if none)."""
    from confusable_homoglyphs.categories import alias

    return alias(char).upper()


def mixed_scripts(name: str) -> dict[str, str] | None:
    """The alphabets a name mixes, each with its letters in the name (None: one alphabet, or
    Latin with Chinese, Japanese or Korean)."""
    letters: dict[str, str] = {}
    for char in name:
        script = script_of(char)
        if script not in NEUTRAL_SCRIPTS and char not in letters.get(script, ""):
            letters[script] = letters.get(script, "") + char
    if len(letters) < 2 or any(set(letters) <= allowed for allowed in TOGETHER):
        return None
    return letters


def unlike(name: str, other: str) -> str:
    """What in ``name`` is not in ``other``, said as the floor can check it: each such
    character with its Unicode name ("'А' CYRILLIC CAPITAL LETTER A")."""
    differing = [c for c in dict.fromkeys(name) if c not in other and not c.isspace()]
    return ", ".join(f"'{c}' {unicodedata.name(c, f'U+{ord(c):04X}')}" for c in differing)


def default_ignorable(char: str) -> bool:
    """Whether ``char`` is drawn as nothing (``DEFAULT_IGNORABLE``: a variation selector, a
    Hangul filler, a zero-width space...)."""
    code = ord(char)
    return any(first <= code <= last for first, last in DEFAULT_IGNORABLE)


def code_point_named(char: str) -> str:
    """A character as the floor can look it up: its code point and Unicode name
    ("U+3164 HANGUL FILLER"), or its kind where it has no name ("U+0007, a control
    character")."""
    kinds = {"Cc": "a control character", "Co": "a private-use character",
             "Cs": "a surrogate", "Cn": "an unassigned code point"}
    name = unicodedata.name(char, "")
    code = f"U+{ord(char):04X}"
    if name:
        return f"{code} {name}"
    return f"{code}, {kinds.get(unicodedata.category(char), 'a character without a name')}"
