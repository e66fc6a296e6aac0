# A fake RP2040 board for the shoe firmware (main.py, shoe_main.py) on the real MicroPython
# interpreter.
#
# MicroPython code (it runs inside the WebAssembly port): install() puts fake `machine`, `time`,
# `select`, `micropython`, `rp2` and `sys` modules in sys.modules, so that `import main` runs
# the firmware's own main.py against them. What the board does the world answers: every I2C
# transfer and every sleep (a turn of the loop) is a call to js.host (tests/micropython_vm.py),
# which the test's world answers (tests/test_firmware_micropython.py: the simulated PN532 on
# the bus, the host's end of the USB serial link, the sensors' levels).
#
# What is modelled as a board does it:
# - time.ticks_ms() and ticks_us() wrap at 2**30 (their period on 32-bit ports);
#   ticks_diff/ticks_add are the interpreter's own;
# - byte 0x03 arriving on the USB serial port raises KeyboardInterrupt (and is not delivered)
#   unless micropython.kbd_intr(-1) was called, as the rp2 port's USB CDC does;
# - machine.WDT resets the board (Reset is raised) when it is not fed for its timeout;
# - an I2C transfer takes its time on a 400 kHz bus (9 bits a byte, and the address);
# - the USB serial port writes as rp2's does (shared/tinyusb/mp_usbd_cdc.c, mp_usbd_cdc_tx_strn):
#   through a 256-byte FIFO (CFG_TUD_CDC_TX_BUFSIZE), in pieces of up to 64 bytes
#   (CFG_TUD_CDC_EP_BUFSIZE); a piece larger than the room left waits
#   MICROPY_HW_USB_CDC_TX_TIMEOUT (500 ms) when the host does not read, then writes what fits;
#   POLLOUT says there is room for one byte. A host that reads empties the FIFO.
#
# What the board's C code keeps outside the heap the fake board makes once, at install(): the
# pins, the I2C buses and the watchdog are static objects on rp2 (machine.Pin(n) returns the
# same object each time), so the fake ones are too, and the poll objects are made ahead and
# allocate nothing when registered (the bench adds the port's own: tests/bench/shoe_memory.py).
# And what the fake board allocates while the firmware calls it (the calls to the test's world,
# the bytes of the USB serial port) is counted in `meter` when a bench turns it on: the bench
# takes it off what a turn of the firmware allocates, so that only the firmware's own
# allocations are counted.

import gc
import json
import sys
import time as _time

import js
import micropython as _micropython

PERIOD = 1 << 30  # ticks_ms / ticks_us period on 32-bit ports
BUS_US_PER_BYTE = 23  # 9 bit times at 400 kHz
CDC_FIFO = 256
CDC_PIECE = 64
CDC_TIMEOUT_US = 500_000
PINS = 30  # GP0-GP29
POLLS = 4  # poll objects made ahead (the firmware makes two)


class Meter:
    """Bytes the fake board allocated while the firmware called it (gc.mem_alloc deltas: the
    WebAssembly port collects nothing within a run), counted once however deep its calls.
    Off unless a bench runs it (``Meter.running = True``): gc.mem_alloc counts every block of
    the heap, and a long run's heap grows to tens of megabytes; counted at every call, it was
    80 % of a firmware test's time. A class attribute named with a word board.py holds
    already: a new name would add a qstr, and move the bench's count of the modules by 16 B."""

    running = False

    def __init__(self):
        self.depth = 0
        self.since = 0
        self.spent = 0

    def enter(self):
        if not self.running:
            return
        if not self.depth:
            self.since = gc.mem_alloc()
        self.depth += 1

    def leave(self):
        if not self.running:
            return
        self.depth -= 1
        if not self.depth:
            self.spent += gc.mem_alloc() - self.since


meter = Meter()


class Stop(BaseException):
    """The world has seen enough: the test ends the run."""


class Reset(BaseException):
    """The board resets: its watchdog bit, or machine.reset() was called."""


def call(message):
    meter.enter()
    try:
        return js.host(json.dumps(message))
    finally:
        meter.leave()


class World:
    def __init__(self, start_ms):
        self.us = start_ms * 1000
        self.stdin = bytearray()
        self.stdout = bytearray()
        self.pins = [None] * PINS  # each pin's level, None while nothing drives it
        self.interrupt_char = 3
        self.kbd_intr_calls = [None] * 8  # made ahead: main.py's import calls it
        self.kbd_intr_count = 0
        self.watchdog = None
        self.last_feed_us = 0
        self.feeds = 0
        self.sleeps = 0
        self.bootsel = False
        self.writable = True  # the host reads what the USB serial port is given
        self.fifo = bytearray()  # written to the USB serial port, not yet taken by the host
        self.last_turn_us = None
        self.longest_turn_us = 0  # the longest time between two sleeps of the loop
        self.write_waits = 0  # USB serial writes that waited for room

    def turn(self, ms):
        meter.enter()
        try:
            self._turn(ms)
        finally:
            meter.leave()

    def _turn(self, ms):
        if self.last_turn_us is not None:
            self.longest_turn_us = max(self.longest_turn_us, self.us - self.last_turn_us)
        self.us += ms * 1000
        self.last_turn_us = self.us
        self.sleeps += 1
        if self.watchdog is not None and self.us - self.last_feed_us > self.watchdog * 1000:
            raise Reset("watchdog")
        if self.writable:
            self.stdout.extend(self.fifo)
            self.fifo = bytearray()
        out = bytes(self.stdout)
        self.stdout = bytearray()
        answer = json.loads(call({"op": "turn", "us": self.us, "out": out.hex(),
                                  "feeds": self.feeds}))
        for name, level in answer.get("pins", {}).items():
            self.pins[int(name)] = level
        self.bootsel = answer.get("bootsel", self.bootsel)
        self.writable = answer.get("writable", True)
        data = bytes.fromhex(answer.get("in", ""))
        interrupted = False
        for byte in data:
            if byte == self.interrupt_char:
                interrupted = True  # the USB CDC driver keeps it out of the stream
            else:
                self.stdin.append(byte)
        if answer.get("stop"):
            raise Stop()
        if interrupted:
            raise KeyboardInterrupt()


world = None


class FakeTime:
    def ticks_ms(self):
        return (world.us // 1000) % PERIOD

    def ticks_us(self):
        return world.us % PERIOD

    def ticks_diff(self, a, b):
        return _time.ticks_diff(a, b)

    def ticks_add(self, a, b):
        return _time.ticks_add(a, b)

    def sleep_ms(self, ms):
        world.turn(ms)

    def sleep_us(self, us):
        world.us += us

    def sleep(self, seconds):
        world.turn(int(seconds * 1000))


WIRED = (4, 5, 6)  # SDA, SCL and the PN532's RSTPDN: what the board drives there reaches it


class Pin:
    """A pin: machine.Pin(n, ...) sets up and returns the one object of pin n (PinClass)."""

    IN = 0
    OUT = 1
    OPEN_DRAIN = 2
    PULL_UP = 1
    PULL_DOWN = 2

    def __init__(self, number):
        self.number = number
        self.mode = -1

    def init(self, mode=-1, pull=None, value=None):
        self.mode = mode
        if pull == Pin.PULL_UP and world.pins[self.number] is None:
            world.pins[self.number] = 1
        if value is not None and mode in (Pin.OUT, Pin.OPEN_DRAIN):
            self.value(value)
        return self

    def value(self, level=None):
        if level is not None:
            level = 1 if level else 0
            if self.number in WIRED and self.mode in (Pin.OUT, Pin.OPEN_DRAIN):
                call({"op": "pin", "us": world.us, "pin": self.number, "level": level})
            world.pins[self.number] = level
            return None
        level = world.pins[self.number]
        return 0 if level is None else level


class PinClass:
    """machine.Pin: its constants, and called, pin n's object set up (rp2's are static)."""

    IN = Pin.IN
    OUT = Pin.OUT
    OPEN_DRAIN = Pin.OPEN_DRAIN
    PULL_UP = Pin.PULL_UP
    PULL_DOWN = Pin.PULL_DOWN

    def __call__(self, number, mode=-1, pull=None, value=None):
        return world.pin_objects[number].init(mode, pull, value)


class I2C:
    def __init__(self, bus_id):
        self.bus_id = bus_id

    def writeto(self, address, data, stop=True):
        meter.enter()
        try:
            world.us += BUS_US_PER_BYTE * (len(data) + 1)
            answer = call({"op": "i2c_write", "us": world.us, "address": address,
                           "data": bytes(data).hex()})
            if answer:
                raise OSError(int(answer))  # e.g. 5 (EIO): no device acknowledged
            return len(data)
        finally:
            meter.leave()

    def readfrom(self, address, count, stop=True):
        meter.enter()
        try:
            world.us += BUS_US_PER_BYTE * (count + 1)
            answer = call({"op": "i2c_read", "us": world.us, "address": address,
                           "count": count})
            if answer.startswith("E"):
                raise OSError(int(answer[1:]))
            return bytes.fromhex(answer)
        finally:
            meter.leave()

    def readfrom_into(self, address, buf, stop=True):
        meter.enter()
        try:
            data = self.readfrom(address, len(buf), stop)
            buf[:] = data
        finally:
            meter.leave()


class I2CClass:
    """machine.I2C(id, ...): bus id's object (static on rp2)."""

    def __call__(self, bus_id, sda=None, scl=None, freq=400000):
        return world.i2c_objects[bus_id]


class WDT:
    def feed(self):
        world.last_feed_us = world.us
        world.feeds += 1


class FakeMachine:
    Pin = PinClass()
    I2C = I2CClass()

    def WDT(self, id=0, timeout=5000):  # machine.WDT: one object on rp2
        world.watchdog = timeout
        world.last_feed_us = world.us
        return world.wdt

    def unique_id(self):
        return b"\xe6\x61\x38\x52\x83\x4a\x2f\x1c"

    def reset(self):
        raise Reset("machine.reset")


class FakeMicropython:
    def const(self, value):
        return value

    def kbd_intr(self, char):
        world.interrupt_char = char
        world.kbd_intr_calls[world.kbd_intr_count] = char
        world.kbd_intr_count += 1

    def mem_info(self, *args):
        return _micropython.mem_info(*args)


class FakeRp2:
    def bootsel_button(self):
        return 1 if world.bootsel else 0


class _Buffer:
    """sys.stdin.buffer and sys.stdout.buffer: the USB serial port's bytes."""

    def read(self, count=-1):
        meter.enter()
        try:
            data = world.stdin if count < 0 else world.stdin[:count]
            taken = bytes(data)
            world.stdin = world.stdin[len(taken):]
            return taken
        finally:
            meter.leave()

    def readinto(self, buf):
        meter.enter()
        try:
            taken = self.read(len(buf))
            buf[:len(taken)] = taken
            return len(taken)
        finally:
            meter.leave()

    def write(self, data):
        meter.enter()
        try:
            return self._write(data)
        finally:
            meter.leave()

    def _write(self, data):
        if world.writable:  # the host takes what comes, as fast as it comes
            world.stdout.extend(data)
            return len(data)
        done = 0
        while done < len(data):
            n = min(len(data) - done, CDC_PIECE)
            if n > CDC_FIFO - len(world.fifo):
                world.us += CDC_TIMEOUT_US  # waits for room that never comes
                world.write_waits += 1
                n = min(n, CDC_FIFO - len(world.fifo))
                if n == 0:
                    break
            world.fifo.extend(data[done:done + n])
            done += n
        return done


class _Stream:
    def __init__(self):
        self.buffer = _Buffer()

    def write(self, text):
        meter.enter()
        try:
            world.stdout.extend(text.encode())
        finally:
            meter.leave()


class FakeSys:
    def __init__(self, real):
        self.real = real
        self.stdin = _Stream()
        self.stdout = _Stream()
        self.path = real.path
        self.modules = real.modules
        self.implementation = real.implementation

    def print_exception(self, exc, file=None):
        self.real.print_exception(exc)


class Poll:
    """A poll object, made ahead (select.poll() hands them out): one object registered, and
    ipoll answers with a list made here, so polling allocates nothing, as on a board (the loop
    polls the USB serial port for each byte it writes)."""

    def __init__(self):
        self.obj = None
        self.mask = 0
        self.entry = [None, 0]
        self.answer = [self.entry]

    def register(self, obj, mask=1):
        if self.obj is not None and self.obj is not obj:
            raise OSError("the fake board's poll takes one object")
        self.obj = obj
        self.mask = mask
        self.entry[0] = obj
        self.entry[1] = mask

    def _ready(self):
        obj, mask = self.obj, self.mask
        if mask & 1 and obj is sys.modules["sys"].stdin and world.stdin:
            return True
        return bool(mask & 4 and obj is sys.modules["sys"].stdout
                    and (world.writable or len(world.fifo) < CDC_FIFO))

    def poll(self, timeout=-1):
        return [self.entry] if self.obj is not None and self._ready() else []

    def ipoll(self, timeout=-1, flags=0):
        if self.obj is not None and self._ready():
            return self.answer
        return ()


class FakeSelect:
    POLLIN = 1
    POLLOUT = 4

    def poll(self):
        made = world.polls
        if world.polls_given == len(made):
            raise OSError("the fake board made %d poll objects" % len(made))
        world.polls_given += 1
        return made[world.polls_given - 1]


def install(start_ms=0):
    """The fake board, its clock at ``start_ms`` milliseconds of uptime."""
    global world
    world = World(start_ms)
    # What rp2 holds outside the heap (static pins, buses, watchdog), and the poll objects,
    # made now: the firmware's calls then allocate nothing of the fake board's that stays.
    world.pin_objects = [Pin(n) for n in range(PINS)]
    world.i2c_objects = [I2C(0), I2C(1)]
    world.wdt = WDT()
    world.polls = [Poll() for _ in range(POLLS)]
    world.polls_given = 0
    sys.modules["time"] = FakeTime()
    sys.modules["machine"] = FakeMachine()
    sys.modules["micropython"] = FakeMicropython()
    sys.modules["rp2"] = FakeRp2()
    sys.modules["select"] = FakeSelect()
    sys.modules["sys"] = FakeSys(sys)
    for name in ("main", "shoe_main", "pn532", "shoe", "protocol"):
        if name in sys.modules:
            del sys.modules[name]
    return world


def uninstall():
    for name in ("time", "machine", "micropython", "rp2", "select", "sys", "main", "shoe_main",
                 "pn532", "shoe", "protocol"):
        if name in sys.modules:
            del sys.modules[name]


def _report(ended, detail):
    return {"ended": ended, "detail": detail,
            "kbd_intr": world.kbd_intr_calls[:world.kbd_intr_count],
            "feeds": world.feeds, "turns": world.sleeps, "us": world.us,
            "longest_turn_us": world.longest_turn_us, "write_waits": world.write_waits}


def run_main(start_ms):
    """Boot the board: main.py runs until the world stops it (or the watchdog resets the
    board, or an exception ends main.py as on a board: back to the REPL). What happened."""
    install(start_ms)
    ended = "stopped"
    detail = ""
    try:
        import main  # the module, as a board holds it: main.py's run() is what boot runs
        main.run()
        ended = "returned"
    except Stop:
        pass
    except Reset as exc:
        ended = "reset"
        detail = str(exc)
    except KeyboardInterrupt:
        ended = "KeyboardInterrupt"
    except Exception as exc:  # main.py died: on a board, the REPL; then the watchdog
        ended = "exception"
        detail = type(exc).__name__ + ": " + str(exc)
    report = _report(ended, detail)
    uninstall()
    return report


# -- the loop a turn at a time -----------------------------------------------------------------
# The WebAssembly port collects garbage only when control is back at the top level (its
# MICROPY_GC_SPLIT_HEAP_AUTO: gc_collect() only marks a collection pending, which runs when the
# outermost call from JavaScript returns), never inside one long run of main(). A test that
# needs the collector as a board has it (a bounded heap, where garbage must be reclaimed)
# boots the firmware with boot() and runs each turn as a run of its own with step(): the same
# Firmware.turn() and the same sleep that main() has, the collection after each.

firmware = None
failure = None  # what ended the last step, if anything did


def boot(start_ms):
    global firmware
    install(start_ms)
    import main  # noqa: F401 (the board's boot script: Ctrl-C off, the firmware imported)
    import shoe_main

    firmware = shoe_main.Firmware()


def step(turns=1):
    """``turns`` turns of the loop (as main(): a turn, then sleep_ms(2)). 0 while it runs; 1
    stopped by the world, 2 reset, 3 an exception main() would not have caught (``failure``
    says which). It allocates nothing once a turn has failed: the report comes from report(),
    in a run of its own, after the collection."""
    global failure
    try:
        for _ in range(turns):
            firmware.turn()
            sys.modules["time"].sleep_ms(2)
    except Stop:
        return 1
    except Reset as exc:
        failure = exc
        return 2
    except Exception as exc:
        failure = exc
        return 3
    return 0


def report():
    detail = "" if failure is None else type(failure).__name__ + ": " + str(failure)
    return _report("running", detail)
