# Stubs for confusable_homoglyphs 3.3.1 (the parts the project calls).
