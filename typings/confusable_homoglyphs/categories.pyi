# Stubs for confusable_homoglyphs 3.3.1 (the parts the project calls), from
# confusable_homoglyphs/categories.py.

# The character's script alias ("LATIN", "GREEK", "COMMON"; "Unknown" if none).
def alias(chr: str) -> str: ...
