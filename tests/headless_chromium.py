"""The browser that the browser tests drive: Debian's Chromium as its headless shell (the
package chromium-headless-shell, the build Playwright itself runs for headless pages; the same
Blink as the browser a tablet runs). The full browser (the package chromium) run headless also
keeps its own window's WebUI in a renderer of its own: with it, Chromium took a third of `make
test`'s CPU (measured on tests/test_dashboard_browser.py:
36 s of Chromium's CPU with the full browser, 12 s with the shell). The dashboard's bench
(tests/bench/dashboard.py) keeps the full browser its figures were measured with (it times the
page's main thread, which is Blink's in both); its test gives it the shell."""

from __future__ import annotations

import os
import shutil

# The binary, not /usr/bin's shell script around it: Playwright ends the process it started.
CHROMIUM = next((path for path in ("/usr/lib/chromium/chromium-headless-shell",
                                   shutil.which("chromium-headless-shell")) if path),
                "chromium-headless-shell")
MISSING = ("Chromium's headless shell is missing: `make system-deps` installs Debian's "
           "chromium-headless-shell")


def present() -> bool:
    return os.path.exists(CHROMIUM)
