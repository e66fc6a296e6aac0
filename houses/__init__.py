"""The houses' data: the built-in rule profiles and blind structures (each rule citing its
source), and the loaders that read them, or a house's own files, for the pure core."""

# The profile a table, the hub and the command line take when none is named.
DEFAULT_PROFILE = "tda-2024"
