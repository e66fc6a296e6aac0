"""How another thread reaches a hub worker's state (the floor's, a venue clock's): a ``Call``
on the worker's queue, run on its thread between MQTT messages, its result or exception back
in a future. The worker's thread alone touches its part: no lock, the queue's order is the
order things happen in."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

from contract.mqtt import MqttWorker

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """Run ``function`` on the worker; its result or exception goes to ``future``."""

    function: Callable[[], Any]
    future: Future[Any]
    name: str = "a call"  # what it does, for a log line that says what the worker was on

    def __str__(self) -> str:
        return f"Call({self.name})"

    def run(self) -> Exception | None:
        """On the worker's thread; what it raised, if it did (the worker then undoes what it
        left half-written). A call its caller gave up on (cancelled: a request that timed
        out) is not run late."""
        if not self.future.set_running_or_notify_cancel():
            return None
        try:
            self.future.set_result(self.function())
        except Exception as exc:  # handed to the caller, whose error it is to say
            self.future.set_exception(exc)
            return exc
        return None


def use_case_name(use_case: Callable[..., Any]) -> str:
    """A use case as a log line names it (``FloorService.bust``)."""
    return str(getattr(use_case, "__qualname__", "a use case"))


def submit(worker: MqttWorker, function: Callable[[], T], name: str = "a call") -> Future[T]:
    """``function`` queued for ``worker``'s thread; its result comes in the future."""
    future: Future[T] = Future()
    worker.put(Call(function, future, name))
    return future
