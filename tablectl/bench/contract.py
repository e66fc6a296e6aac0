"""The cost of checking a message at a boundary, against parsing it at all.

    python -m tablectl.bench.contract [--envelopes 2000] [--json]

Real envelopes (the events of generated hands, as the table link publishes them on
``private``), each measured in the same run:

- the floor: ``json.loads`` of the bytes, which any consumer pays;
- ``contract.wire.decode`` (strict JSON);
- ``contract.schema.receive("Envelope", ...)``: strict JSON and the schema, with
  jsonschema-rs, what the recorder does per message;
- the reference ``jsonschema`` package validating the same schema (the choice not taken);
- the same envelopes as backlog batches of 100 (``EnvelopeBatch``, what a hub catching up and
  the group's central recorder take in): ``json.loads``, ``decode`` and
  ``receive_events("Envelope", ...)``, per envelope.

Figures are microseconds per envelope (median of five passes) and ratios to the floor (for
batches, to ``json.loads`` of the batch). It asserts nothing (tests assert behaviour, never
speed).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from contract.envelope import envelope
from contract.schema import document, receive, receive_events
from contract.wire import decode
from houses.loaders import load_profile
from simulators.dealer_script import session
from tablectl.bench import replay_lines


def envelopes(count: int) -> list[bytes]:
    lines, _ = session(random.Random(7), load_profile("tda-2024"), hands=max(2, count // 10),
                       irregularity_rate=0.1)
    events = replay_lines(lines)
    return [json.dumps(envelope(e, venue="v", table="t1", seq=i + 1, boot=1, ts_ms=1000 + i),
                       separators=(",", ":")).encode()
            for i, e in enumerate(events[:count])]


def per_envelope_us(check: Callable[[bytes], Any], payloads: list[bytes]) -> float:
    passes = []
    for _ in range(5):
        start = time.perf_counter()
        for payload in payloads:
            check(payload)
        passes.append((time.perf_counter() - start) / len(payloads) * 1e6)
    return round(statistics.median(passes), 2)


def run(count: int) -> dict[str, Any]:
    payloads = envelopes(count)
    figures = {
        "json_loads": per_envelope_us(json.loads, payloads),
        "wire_decode": per_envelope_us(decode, payloads),
        "receive_jsonschema_rs": per_envelope_us(lambda p: receive("Envelope", p), payloads),
    }
    try:  # the reference implementation, where it is installed (the development extras)
        import jsonschema
    except ImportError:
        pass
    else:
        root = {"$ref": "#/components/schemas/Envelope", "components": document()["components"]}
        reference = jsonschema.Draft202012Validator(root)
        figures["receive_with_reference_jsonschema"] = per_envelope_us(
            lambda p: reference.validate(decode(p)), payloads[: max(1, len(payloads) // 10)])
    floor = figures["json_loads"]
    batches = [b'{"v":1,"batch":[' + b",".join(payloads[i:i + 100]) + b"]}"
               for i in range(0, len(payloads), 100)]
    per_batch = {
        "json_loads": per_envelope_us(json.loads, batches),
        "wire_decode": per_envelope_us(decode, batches),
        "receive_events": per_envelope_us(lambda p: receive_events("Envelope", p), batches),
    }
    size = len(payloads) / len(batches)
    batched = {k: round(v / size, 2) for k, v in per_batch.items()}
    return {"envelopes": len(payloads), "us_per_envelope": figures,
            "over_json_loads": {k: round(v / floor, 2) for k, v in figures.items()},
            "batched_us_per_envelope": batched,
            "batched_over_json_loads": {k: round(v / per_batch["json_loads"], 2)
                                        for k, v in per_batch.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envelopes", type=int, default=2000)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = run(args.envelopes)
    if args.json:
        print(json.dumps(result))
        return 0
    for name, us in result["us_per_envelope"].items():
        print(f"{name}: {us} us per envelope ({result['over_json_loads'][name]}x json.loads)")
    for name, us in result["batched_us_per_envelope"].items():
        print(f"batches of 100, {name}: {us} us per envelope "
              f"({result['batched_over_json_loads'][name]}x json.loads of the batch)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
