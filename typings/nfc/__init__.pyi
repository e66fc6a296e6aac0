# Stubs for nfcpy 1.0.4 (the parts the project calls), from nfc/__init__.py.
from nfc import clf as clf
from nfc.clf import ContactlessFrontend as ContactlessFrontend
