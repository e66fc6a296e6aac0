# Stubs for luma.lcd 2.13.0 (the parts the project calls): the package.
