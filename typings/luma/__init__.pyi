# Stubs for luma.core 2.6.0, luma.oled 3.16.0 and luma.lcd 2.13.0: the namespace of the three.
