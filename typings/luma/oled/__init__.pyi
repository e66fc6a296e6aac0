# Stubs for luma.oled 3.16.0 (the parts the project calls): the package.
