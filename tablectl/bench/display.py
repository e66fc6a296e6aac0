"""Display benchmarks: a frame rendered and pushed through the SSD1306 driver over the fake I2C
bus (only the columns that changed), against luma's driver pushing a prepared image whole (the
floor) in the same run; and the CPU an idle table spends with the clock ticking.

    python -m tablectl.bench.display [--frames 300] [--idle-seconds 10] [--json]

Targets: render + push within 2x the whole push of a prepared image (issue 4); an idle table
under 1 % of one core (issue 29). The idle table is the core with a running blind clock, the
display model and the OLED refreshed when it changes (the daemon's timer turns four times a
second), and the dealer button on a gpiozero mock pin with its timer (asleep until an edge):
what runs on a Pi between hands.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import replace

from controller.events import ClockAction
from controller.inputs import ClockCommand, Setup
from controller.screens import DisplayModel, Status, mmss, sample_screens
from controller.table import Table
from hardware.display import Display, oled_device, render_oled
from houses.loaders import load_profile, load_structure
from simulators.fake_i2c import OledBus
from tablectl.bench import ms, percentile
from tablectl.daemon import TICK

SETTLE = 1.0  # seconds of the idle table's first turns before its CPU is counted


def frame_cost(frames: int) -> dict[str, float]:
    """The clock screen, its time one second less each frame (a new figure to draw every time,
    as on a table; the title and status lines repeat, and are cached), rendered and pushed as
    the daemon does (only the changed columns), against luma's driver pushing a prepared
    image whole on a bus of its own: time and bytes on the bus a frame."""
    floor_bus, bus = OledBus(), OledBus()
    floor_device = oled_device("ssd1306", bus=floor_bus)
    display = Display(oled_device("ssd1306", bus=bus))
    base = sample_screens()["clock"]
    screens = [replace(base, big=mmss(3600 - i)) for i in range(frames + 1)]
    prepared = [render_oled(s).convert(floor_device.mode) for s in screens]
    display.show(screens[0])  # the first frame is whole, as at a start
    floor, ours = [], []
    floor_bytes, our_bytes = floor_bus.bytes, bus.bytes
    for i in range(1, frames + 1):
        start = time.perf_counter()
        floor_device.display(prepared[i])
        floor.append(time.perf_counter() - start)
        start = time.perf_counter()
        display.show(screens[i])
        ours.append(time.perf_counter() - start)
    return {"frames": frames, "render_push_ms": ms(ours, 50), "floor_push_ms": ms(floor, 50),
            "ratio": round(percentile(ours, 50) / percentile(floor, 50), 2),
            "bus_bytes_per_frame": round((bus.bytes - our_bytes) / frames),
            "floor_bus_bytes_per_frame": round((floor_bus.bytes - floor_bytes) / frames)}


def idle_cpu(seconds: float, settle: float = SETTLE) -> dict[str, float]:
    from gpiozero.pins.mock import MockFactory

    from hardware.button import DealerButton

    table = Table(load_profile("tda-2024"), structure_loader=load_structure)
    table.handle(Setup("holdem", (1, 2, 3, 4, 5, 6), 1, t=0.0))
    start_wall = time.monotonic()
    model = DisplayModel(status=Status(hand=1, hub="ok"))
    for event in table.handle(ClockCommand(ClockAction.START, "tda-2024", t=0.0)):
        model.update(event)
    display = Display(oled_device("ssd1306", bus=OledBus()))
    factory = MockFactory()
    button = DealerButton(17, lambda e: None, pin_factory=factory)
    pushes = 0
    settled = time.monotonic() + settle  # the first turns (lazy imports, caches) not counted
    cpu_start: float | None = None
    wall_start = math.inf
    while (now := time.monotonic()) - wall_start < seconds:
        if cpu_start is None and now >= settled:
            cpu_start, wall_start, pushes = time.process_time(), now, 0
        t = now - start_wall
        for event in table.advance(t):
            model.update(event)
        pushes += display.show(model.screen(t, table.clock_state(), table.now))
        time.sleep(TICK - (time.monotonic() - now) % TICK)
    assert cpu_start is not None
    cpu = time.process_time() - cpu_start
    wall = time.monotonic() - wall_start
    button.close()
    factory.close()
    return {"seconds": round(wall, 1), "cpu_percent_of_one_core": round(100 * cpu / wall, 2),
            "pushes": pushes}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--idle-seconds", type=float, default=10.0)
    parser.add_argument("--settle-seconds", type=float, default=SETTLE,
                        help="the idle table's first turns, before its CPU is counted")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = {"frame": frame_cost(args.frames),
              "idle": idle_cpu(args.idle_seconds, args.settle_seconds)}
    if args.json:
        print(json.dumps(result))
        return 0
    f, idle = result["frame"], result["idle"]
    print(f"OLED frame: render + push of what changed {f['render_push_ms']} ms, "
          f"{f['bus_bytes_per_frame']} bytes on the bus; luma's driver pushing a prepared "
          f"frame whole {f['floor_push_ms']} ms, {f['floor_bus_bytes_per_frame']} bytes "
          f"(ratio {f['ratio']}x)")
    print(f"idle table: {idle['cpu_percent_of_one_core']} % of one core over {idle['seconds']} s "
          f"({idle['pushes']} frames pushed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
