# Stubs for luma.core 2.6.0 (the parts the project calls): the package.
