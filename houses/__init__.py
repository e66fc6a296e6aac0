"""The houses' data: the built-in rule profiles, blind structures and payout tables (each rule
citing its source), and the loaders that read them, or a house's own files, for the pure core."""

# The profile a table, the hub and the command line take when none is named.
DEFAULT_PROFILE = "tda-2024"
# The payout table a tournament takes when the house names none (houses/payouts/standard.toml:
# the project's own, no seed gives one).
DEFAULT_PAYOUT_TABLE = "standard"
