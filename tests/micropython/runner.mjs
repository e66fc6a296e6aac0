// The real MicroPython interpreter (its WebAssembly port, from the npm registry) as a child
// process of the tests: tests/micropython_vm.py speaks to it in JSON lines on stdin/stdout.
//
//   {"op": "write", "path": "/fw/protocol.mpy", "data": "<base64>"}   -> {"ok": true}
//   {"op": "exec", "code": "..."}   -> {"ok": true, "out": "<what it printed>"}
//                                      {"ok": false, "error": "<traceback>", "out": "..."}
//
// While code runs, it may call js.host("<text>") (the fake board modules do, for the I2C bus,
// the USB serial port and the clock): the runner writes {"call": "<text>"} and blocks until the
// test answers {"reply": "<text>"}, which host() returns. Everything is synchronous: one
// interpreter, one conversation.
//
// MICROPYTHON_HEAP=<bytes> in the environment gives the interpreter a heap of that size, and
// no more. loadMicroPython's `heapsize` alone does not bound it: this package is the port's
// "pyscript" variant, built with MICROPY_GC_SPLIT_HEAP_AUTO, so an allocation that does not
// fit adds a new heap area from the C heap (gc_try_add_heap in py/gc.c, at least as large as
// the heap so far). With a bound, the WebAssembly memory cannot grow and the C heap is used
// up but for 64 KiB (what the runner's own calls take), less than any new area: an
// allocation the heap cannot hold raises MemoryError, as on a board.
import fs from "node:fs";

const bound = Number(process.env.MICROPYTHON_HEAP || 0);
if (bound) {
  // emscripten reports each refused growth on console.error (bound when it loads): expected
  const report = console.error;
  console.error = (...args) => {
    if (!/grow/i.test(String(args[0]))) report(...args);
  };
}
const { loadMicroPython } = await import("@micropython/micropython-webassembly-pyscript");

let printed = [];
const mp = await loadMicroPython({
  heapsize: bound || 1024 * 1024,
  stdout: (line) => printed.push(line),
  stderr: (line) => printed.push(line),
});
if (bound) {
  const module = mp._module;
  WebAssembly.Memory.prototype.grow = () => {
    throw new RangeError("the heap is bounded");
  };
  const reserve = module._malloc(64 * 1024);
  for (let size = 1 << 26; size >= 16; ) {
    if (!module._malloc(size)) size >>= 1;
  }
  module._free(reserve);
}

let pending = Buffer.alloc(0);
function readLine() {
  const chunk = Buffer.alloc(65536);
  for (;;) {
    const end = pending.indexOf(10);
    if (end >= 0) {
      const line = pending.subarray(0, end).toString("utf8");
      pending = pending.subarray(end + 1);
      return line;
    }
    let n;
    try {
      n = fs.readSync(0, chunk, 0, chunk.length, null);
    } catch (error) {
      if (error.code === "EAGAIN") continue;
      throw error;
    }
    if (n === 0) process.exit(0); // the test is gone
    pending = Buffer.concat([pending, chunk.subarray(0, n)]);
  }
}

function send(message) {
  fs.writeSync(1, JSON.stringify(message) + "\n");
}

globalThis.host = (text) => {
  send({ call: String(text) });
  const answer = JSON.parse(readLine());
  return answer.reply;
};

function makeDirs(path) {
  const parts = path.split("/").filter(Boolean);
  let dir = "";
  for (const part of parts.slice(0, -1)) {
    dir += "/" + part;
    try {
      mp.FS.mkdir(dir);
    } catch (error) {
      // it exists
    }
  }
}

for (;;) {
  const request = JSON.parse(readLine());
  if (request.op === "write") {
    makeDirs(request.path);
    mp.FS.writeFile(request.path, Buffer.from(request.data, "base64"));
    send({ ok: true });
  } else if (request.op === "exec") {
    printed = [];
    try {
      mp.runPython(request.code);
      send({ ok: true, out: printed.join("\n") });
    } catch (error) {
      send({ ok: false, error: String(error.message || error), out: printed.join("\n") });
    }
  } else {
    send({ ok: false, error: "unknown op " + request.op, out: "" });
  }
}
