"""pytest's rewritten test modules, written ahead once, in parallel: ``python -m
tests.assertion_cache`` (``make unit`` runs it before pytest).

pytest compiles each test module and conftest.py anew, its assertions rewritten to explain a
failure, unless it finds that module's rewritten code in ``__pycache__`` (a pyc named for
pytest's version, checked against a hash of the source). Where PYTHONDONTWRITEBYTECODE is set
(this machine sets it) it never writes one, so each of the suite's workers rewrote all
of them: about 1.1 MB of tests, 3.8 s of CPU in each worker, on two cores, before
any test ran. Written here once, by pytest's own functions, each worker reads them instead.

The writer calls pytest's rewriter and pyc writer as pytest does, with no configuration: the
only setting the rewrite reads, ``enable_assertion_pass_hook``, is off here. Should a pytest
release change those functions, this fails and pytest rewrites as before: pytest reads a pyc
only when its header and the source's hash are right, so a stale or foreign one is ignored.

Beside them, hypothesis's Unicode tables: the characters of each category, and those UTF-8
encodes, which hypothesis works out over every code point (1.7 s of CPU) in the first process
that draws text, unless it finds them in its storage directory (``.hypothesis`` here). On a
fresh clone each worker whose tests draw text (schemathesis's requests, generated payloads)
worked them out at once; written here once, they read them.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

# Imported before the pool forks: its processes need not import pytest again.
from _pytest.assertion.rewrite import PYC_TAIL, _rewrite_test, _write_pyc_fp, get_cache_dir

TESTS = Path(__file__).resolve().parent


def modules() -> list[Path]:
    """The modules pytest rewrites when it collects the suite: the test modules and the
    conftest, largest first (the pool then ends together)."""
    found = [*TESTS.glob("test_*.py"), *TESTS.glob("conftest.py")]
    return sorted(found, key=lambda path: path.stat().st_size, reverse=True)


def write(module: Path) -> str:
    """Rewrite ``module`` and write its pyc where pytest looks for it (a temporary file
    renamed over it, as pytest does, so that a reader never sees half of one)."""
    # (the source's hash, or its stat in pytest 8: passed on to the writer as pytest does)
    checked, code = _rewrite_test(module, None)
    cache = get_cache_dir(module)
    cache.mkdir(exist_ok=True)
    pyc = cache / (module.name[:-3] + PYC_TAIL)
    partial = cache / f"{pyc.name}.{os.getpid()}"
    with open(partial, "wb") as out:
        _write_pyc_fp(out, checked, code)
    os.replace(partial, pyc)
    return module.name


def unicode_tables() -> str:
    """Hypothesis's tables, written to its storage directory as its text strategies write
    them (its own functions, so that their format is always the release's)."""
    from hypothesis.internal.charmap import charmap, intervals_from_codec

    charmap()
    intervals_from_codec("utf-8")
    return "hypothesis's Unicode tables"


def main() -> int:
    with ProcessPoolExecutor(os.cpu_count()) as pool:
        tables = pool.submit(unicode_tables)  # the longest job, first
        written = list(pool.map(write, modules()))
        tables.result()
    print(f"{len(written)} test modules rewritten for pytest, and hypothesis's Unicode tables",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
