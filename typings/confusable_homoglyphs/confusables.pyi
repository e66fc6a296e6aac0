# Stubs for confusable_homoglyphs 3.3.1 (the parts the project calls), from
# confusable_homoglyphs/confusables.py and the confusables.json it loads.
from typing import TypedDict

class _Confusable(TypedDict):
    c: str  # the character (or characters) it may be confused with
    n: str  # their Unicode names

# Each line of Unicode's confusables.txt, both ways: a character -> what it may be confused with.
confusables_data: dict[str, list[_Confusable]]
