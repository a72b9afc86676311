"""The memory budget of the requests the receiver decodes at once.

A request's body is small next to what decoding it costs: the OTLP-JSON line (4.4 times a
protobuf body of tiny spans), the slice of decoded spans and their JSON objects, and for a
JSON body the whole parsed document and message (:meth:`._otlp_json.Signal.accept`). Its
estimate is the (decompressed) body times the expansion measured for its encoding on the
densest batches a real exporter sends, spans with nothing but their ids and a name (a 16 MiB
protobuf request holds 508k of them); a request waits until its estimate fits beside those
being decoded, so what is decoded at once stays within the budget whatever the bodies'
sizes. The budget is held until the line is durable: the line is most of the cost.
"""

from __future__ import annotations

import asyncio
from typing import Final

__all__ = ["EXPANSION", "DecodeBudget"]

#: Peak memory of decoding a request and holding its line, per byte of its (decompressed)
#: body, by media type, the body included: measured 5.5x (protobuf, decoded a slice at a
#: time) and 6.3x (JSON, decoded whole) on tiny spans, rounded up. Pathological shapes cost
#: more (a span of millions of empty attributes: ~170x).
EXPANSION: Final = {"application/x-protobuf": 6, "application/json": 7}


class DecodeBudget:
    """Bytes of estimated memory shared by the requests being decoded (one event loop).

    Waiters are not served in order: any request whose estimate fits goes ahead, so small
    requests pass a large one waiting for room. A request estimated beyond the whole budget
    is charged the whole budget: it runs alone rather than never.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.used = 0
        self._waiters: list[asyncio.Future[None]] = []

    async def acquire(self, estimate: int) -> int:
        """Wait until ``estimate`` bytes fit, take them and return what was charged."""
        charge = min(estimate, self.capacity)
        while self.used + charge > self.capacity:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                self._waiters.remove(waiter)
        self.used += charge
        return charge

    def release(self, charge: int) -> None:
        """Give back what :meth:`acquire` charged and wake the waiters to try again."""
        self.used -= charge
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
