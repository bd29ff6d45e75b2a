"""The wire between server, kernel and runs (kernel/protocol.py): every message one side sends has
a record describing it and a handler on the other side's table."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_type_hints

from cs336_lectures.runtime.kernel import protocol
from cs336_lectures.runtime.kernel.process import ORDER_HANDLERS, WORKER_HANDLERS

KERNEL = Path(protocol.__file__).resolve().parent


def sent(module: str, key: str) -> set[str]:
    """The values of `key` in the message literals a module sends."""
    return set(re.findall(rf'\{{"{key}": "(\w+)"', (KERNEL / module).read_text(encoding="utf-8")))


def kinds(records: tuple, key: str) -> set[str]:
    return {get_type_hints(record)[key].__args__[0] for record in records}


def test_every_order_the_server_sends_has_a_record_and_a_handler():
    orders = sent("client.py", "op")
    assert orders == {"run", "cancel", "stop"}
    assert orders <= kinds(protocol.ORDERS, "op") and orders == set(ORDER_HANDLERS)


def test_every_message_of_a_run_or_checkpoint_has_a_record_and_a_handler():
    roles = sent("forked_run.py", "role")
    assert roles == {"checkpoint", "early", "run", "done"}
    assert roles == kinds(protocol.WORKER_MESSAGES, "role") == set(WORKER_HANDLERS)


def test_the_kernel_orders_a_checkpoint_only_to_resume():
    assert sent("process.py", "op") == {"resume"} <= kinds(protocol.ORDERS, "op")
