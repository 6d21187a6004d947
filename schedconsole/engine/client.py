"""How the web side reaches the engine: one Celery task, answered by the engine's process.

`call(operation)` returns the operation's result type (see `operations`). Embedded, the task runs
in this process (the engine thread answers it); in production it goes to the leader's queue
through Redis and the engine worker answers it. Either way the operation crosses as its name and
fields (`operations.to_wire`) and its answer as JSON.

Through Redis, every call runs on one of `ENGINE_CALL_THREADS` long-lived threads. Celery's Redis
result backend is per thread, with a connection pool and a subscribed connection of its own; under
ASGI each Django request runs on a new thread, so calling from the request's thread built a new
backend, connected and subscribed again for every request.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar, cast

from celery.exceptions import TaskRevokedError
from celery.exceptions import TimeoutError as CeleryTimeout
from celery.utils.nodenames import worker_direct
from django.conf import settings
from kombu.exceptions import OperationalError as BrokerError
from redis import Redis
from redis.exceptions import RedisError

from schedconsole.engine.host import get_host
from schedconsole.engine.leader import NOT_LEADER, leader_hostname, redis_client
from schedconsole.engine.operations import Operation, to_wire
from schedconsole.engine.tasks import ControlAnswer, Refusal, control, refusal

T = TypeVar("T")


class EngineCallError(Exception):
    """The engine refused or could not answer: `status` is the HTTP status to reply with."""

    def __init__(self, status: int, message: str, field: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field

    @classmethod
    def of(cls, refusal: Refusal) -> EngineCallError:
        """The error a refusal sent as data stands for."""
        return cls(int(refusal["status"]), refusal["message"], refusal.get("field", ""))


def call(op: Operation[T], timeout: float | None = None) -> T:
    """Run an operation on the engine and return its result, or raise EngineCallError."""
    wait = float(timeout or settings.CONTROL_TIMEOUT_SECONDS)
    name, fields = to_wire(op)
    if settings.EMBEDDED:
        answer: ControlAnswer = control.apply(args=(name, fields, wait)).get()
    elif threading.current_thread().name.startswith(_THREAD_PREFIX):
        answer = _remote(name, fields, wait)
    else:
        answer = _calls().submit(_remote, name, fields, wait).result()
    return cast(T, _result(answer))


def _result(answer: ControlAnswer) -> Any:
    if "error" in answer:
        raise EngineCallError.of(answer["error"])
    # The answer is the JSON of `op.run(...)`, whose type is the operation's result type.
    return answer["ok"]


_THREAD_PREFIX = "schedconsole-engine-call"
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _calls() -> ThreadPoolExecutor:
    """The threads that wait for the engine's answers (made on first use)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(settings.ENGINE_CALL_THREADS, thread_name_prefix=_THREAD_PREFIX)
        return _pool


def _remote(name: str, fields: dict[str, Any], wait: float) -> ControlAnswer:
    """The control task sent to the leader's own queue through the broker, and its answer."""
    try:
        leader = leader_hostname(_redis())
    except RedisError as exc:
        raise EngineCallError(503, f"the engine cannot be reached: {exc}") from exc
    if leader is None:
        raise EngineCallError(503, NOT_LEADER)
    result = None
    try:
        # Only the leader consumes its own queue; a request it cannot take in time expires
        # unread instead of running later behind the caller's back.
        result = control.apply_async(args=(name, fields, wait), queue=worker_direct(leader), expires=wait)
        answer: ControlAnswer = result.get(timeout=wait + 1, disable_sync_subtasks=False)  # tasks may call it too (imports)
        return answer
    except (CeleryTimeout, TaskRevokedError):
        # Not answered, or expired unread in the leader's queue: either way nothing was done.
        raise EngineCallError(504, f"the engine did not answer {name!r} within {wait:g}s") from None
    except (OSError, BrokerError, RedisError) as exc:
        raise EngineCallError(503, f"the engine cannot be reached: {exc}") from exc
    finally:
        if result is not None:
            try:
                result.forget()  # results are read once; don't let them pile up in Redis
            except Exception:
                pass


_redis_client: Redis | None = None


def _redis() -> Redis:
    global _redis_client
    if _redis_client is None:
        _redis_client = redis_client()
    return _redis_client


async def acall(op: Operation[T], timeout: float | None = None) -> T:
    """`call` for async views. Embedded, the operation goes straight to the engine thread (what the
    control task's body does) and is awaited without holding a thread; otherwise through Celery."""
    wait = float(timeout or settings.CONTROL_TIMEOUT_SECONDS)
    if not settings.EMBEDDED:
        name, fields = to_wire(op)
        return cast(T, _result(await asyncio.wrap_future(_calls().submit(_remote, name, fields, wait))))
    try:
        future = get_host().submit(op)
    except Exception as exc:
        raise EngineCallError.of(refusal(exc)) from exc
    try:
        return await asyncio.wait_for(asyncio.wrap_future(future), wait)
    except TimeoutError:
        future.cancel()
        raise EngineCallError(504, f"the engine did not answer {op.wire_name!r} within {wait:g}s") from None
    except Exception as exc:
        raise EngineCallError.of(refusal(exc)) from exc
