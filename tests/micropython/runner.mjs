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
import fs from "node:fs";
import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";

let printed = [];
const mp = await loadMicroPython({
  heapsize: 1024 * 1024,
  stdout: (line) => printed.push(line),
  stderr: (line) => printed.push(line),
});

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
