"""The composition root: the ``tablectl`` command, its configuration, the table daemon's wiring,
the doctor, the deck commands, the translation from the shoe link to core inputs, and the
simulated table and venue. Everything here may import everything below it; nothing imports
this package."""
