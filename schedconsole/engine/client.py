"""How the web side reaches the engine: one Celery task, answered by the engine's process.

Embedded, the task runs in this process (the engine thread answers it); in production it goes to
the `engine` queue through Redis and the engine worker answers it.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings


class EngineCallError(Exception):
    """The engine refused or could not answer: `status` is the HTTP status to reply with."""

    def __init__(self, status: int, message: str, field: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field


def call(op: str, payload: dict[str, Any] | None = None, timeout: float | None = None) -> Any:
    """Run a control operation on the engine and return its result, or raise EngineCallError."""
    from celery.exceptions import TaskRevokedError
    from celery.exceptions import TimeoutError as CeleryTimeout

    from schedconsole.engine.tasks import control

    wait = float(timeout or settings.CONTROL_TIMEOUT_SECONDS)
    if settings.EMBEDDED:
        answer = control.apply(args=(op, payload, wait)).get()
    else:
        from celery.utils.nodenames import worker_direct
        from kombu.exceptions import OperationalError as BrokerError
        from redis.exceptions import RedisError

        from schedconsole.engine.leader import NOT_LEADER, leader_hostname

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
            result = control.apply_async(args=(op, payload, wait), queue=worker_direct(leader), expires=wait)
            answer = result.get(timeout=wait + 1, disable_sync_subtasks=False)  # tasks may call it too (imports)
        except (CeleryTimeout, TaskRevokedError):
            # Not answered, or expired unread in the leader's queue: either way nothing was done.
            raise EngineCallError(504, f"the engine did not answer {op!r} within {wait:g}s") from None
        except (OSError, BrokerError, RedisError) as exc:
            raise EngineCallError(503, f"the engine cannot be reached: {exc}") from exc
        finally:
            if result is not None:
                try:
                    result.forget()  # results are read once; don't let them pile up in Redis
                except Exception:
                    pass
    error = answer.get("error")
    if error:
        raise EngineCallError(int(error["status"]), error["message"], error.get("field", ""))
    return answer["ok"]


_redis_client: Any = None


def _redis() -> Any:
    global _redis_client
    if _redis_client is None:
        from schedconsole.engine.leader import redis_client

        _redis_client = redis_client()
    return _redis_client


async def acall(op: str, payload: dict[str, Any] | None = None, timeout: float | None = None) -> Any:
    """`call` for async views. Embedded, the request goes straight to the engine thread (what the
    control task's body does) and is awaited without holding a thread; otherwise through Celery."""
    import asyncio

    from asgiref.sync import sync_to_async

    if not settings.EMBEDDED:
        return await sync_to_async(call, thread_sensitive=False)(op, payload, timeout)
    from schedconsole.engine.tasks import answer, submit

    wait = float(timeout or settings.CONTROL_TIMEOUT_SECONDS)
    try:
        future = submit(op, payload)
        result = await asyncio.wait_for(asyncio.wrap_future(future), wait)
        answered = {"ok": result}
    except TimeoutError:
        future.cancel()
        answered = {"error": {"status": 504, "message": f"the engine did not answer {op!r} within {wait:g}s"}}
    except Exception as exc:
        answered = answer(exc)
    error = answered.get("error")
    if error:
        raise EngineCallError(int(error["status"]), error["message"], error.get("field", ""))
    return answered["ok"]
