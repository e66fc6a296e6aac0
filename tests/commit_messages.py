"""Commit messages a reader of ``git log --oneline`` can take in: a subject of at most 72
characters, then (when the why needs more) a blank line and a body.

    python -m tests.commit_messages          # check every commit after RULE_SINCE (make lint)

Commits before ``RULE_SINCE`` are history and stay as they are (rewriting them would change
every later hash). Outside a git checkout, or in a shallow clone without that commit, there is
nothing to check: it says so and passes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RULE_SINCE = "24e04cb8a9de23b27aa0c4d5bad6e901c82ba3ac"  # the last commit before the rule
MAX_SUBJECT = 72


def problems(message: str) -> list[str]:
    """What is wrong with one commit message (empty: nothing)."""
    lines = message.rstrip("\n").split("\n")
    found = []
    subject = lines[0]
    if not subject.strip():
        found.append("an empty subject")
    if len(subject) > MAX_SUBJECT:
        found.append(f"a subject of {len(subject)} characters (at most {MAX_SUBJECT}): "
                     "shorten it and say the rest in the body")
    if len(lines) > 1 and lines[1].strip():
        found.append("no blank line between the subject and the body")
    return found


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                          check=False)


def main() -> int:
    if _git("rev-parse", "--git-dir").returncode != 0:
        print("commit messages: not a git checkout, nothing to check")
        return 0
    if _git("cat-file", "-e", f"{RULE_SINCE}^{{commit}}").returncode != 0:
        print(f"commit messages: {RULE_SINCE[:7]} is not in this clone (shallow?): nothing "
              "to check")
        return 0
    log = _git("log", "-z", "--format=%H%n%B", f"{RULE_SINCE}..HEAD")
    if log.returncode != 0:
        print(log.stderr, file=sys.stderr)
        return 2
    bad = 0
    for entry in filter(None, log.stdout.split("\0")):
        commit, _, message = entry.partition("\n")
        for problem in problems(message):
            bad += 1
            print(f"commit {commit[:10]} ({message.splitlines()[0][:50]!r}): {problem}",
                  file=sys.stderr)
    if bad:
        print("reword them with `git rebase -i` before they land", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
