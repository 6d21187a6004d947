"""Batched writes of the engine's changes, bindings and attempts (group commit), and loading them back.

The engine thread never waits for the database: it appends writes to a deque and goes on. The
store's thread wakes every 100 ms (never per item: waking a thread per attempt would
hand the GIL back and forth on every scheduling cycle), takes everything queued, writes it in one transaction, and only then runs the
callbacks that acknowledge bindings on the engine thread, so a binding is visible only once it
is stored. Attempts and score rows go in with `executemany` and ids the store assigns (it is the
only writer of that table), because the ORM's per-object cost would dominate the cycle. Each
attempt's score rows are a compact table in its JSON (one row per kept node), not rows of their
own: at 10 rows an attempt, inserting them took half the store's time.
"""

from __future__ import annotations

import functools
import logging
import sys
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, close_old_connections, connection, transaction
from django.db.models import Max

from schedconsole.cluster.models import Binding, ClusterObject
from schedconsole.engine import bridge
from schedconsole.history.models import Attempt, ObjectChange

log = logging.getLogger(__name__)
MAX_BATCH = 5000
POLL_SECONDS = 0.1


@dataclass(slots=True)
class _Bind:
    uid: str
    pod: str
    node: str
    at: float
    acknowledge: Callable[[], None]


@dataclass(slots=True)
class _Record:
    key: tuple[str, int, float]
    update: bool
    # (at, pod, uid, profile, attempt, outcome, node, nominatedNode, message, feasibleNodes): the
    # columns, scalars only. The row's nested dicts and lists are dropped once encoded, so a record
    # waiting here for the next batch holds no containers for the cyclic collector to scan and
    # promote (they made it run full collections over the whole heap while the engine scheduled).
    columns: tuple[Any, ...]
    text: str


@dataclass(slots=True)
class _Barrier:
    done: threading.Event


@dataclass(slots=True)
class _AfterCommit:
    callback: Callable[[], None]


_Item = bridge.Change | _Bind | _Record | _Barrier | _AfterCommit
"""What the engine hands the store, written in batches in the order handed over."""


class Fenced(RuntimeError):
    """Another engine took the lease: this one must not write (or acknowledge) anything more."""


class NotStored(RuntimeError):
    """The database refused a change an operation made: its answer must not claim it stored."""


class Store:
    """The engine's writer thread."""

    def __init__(
        self,
        post: Callable[[Callable[[], None]], None],
        fence: int | None = None,
        on_fenced: Callable[[], None] | None = None,
        on_dropped: Callable[[str, str, str, bool], None] | None = None,
    ) -> None:
        self._post = post
        self.fence = fence  # the leader's token: every batch is written only while the lease holds it
        self._on_fenced = on_fenced
        # Told (on the engine thread) of each write the database refused: its kind, its key, why, and
        # whether it created the object (a pod the database never held).
        self._on_dropped = on_dropped
        self.fenced = False
        self.changes_queued = 0  # how many cluster changes were handed over (the host watches it)
        self._changes_done = 0  # how many of them have been written or dropped since (in order)
        self.dropped: deque[tuple[int, str]] = deque(maxlen=1000)  # (a dropped change's number, what and why)
        self.outage_since: float | None = None
        self._pending: deque[_Item] = deque()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._attempt_ids: OrderedDict[tuple[str, int, float], int] = OrderedDict()
        self._next_attempt = 0
        self.batches = 0
        self.written = 0
        self.last_prune = time.monotonic()
        self.failed: BaseException | None = None
        self._score_nodes, self._filter_nodes = settings.HISTORY_SCORE_NODES, settings.HISTORY_FILTER_NODES

    # ----- the engine side ----------------------------------------------------------------------
    def put_change(self, change: bridge.Change) -> None:
        """A cluster object changed (bindings excepted: `put_bind` stores those)."""
        self.changes_queued += 1
        self._pending.append(change)

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run `callback` (on the store's thread) once everything queued before it is committed."""
        self._pending.append(_AfterCommit(callback))

    def put_bind(self, uid: str, pod: str, node: str, acknowledge: Callable[[], None]) -> None:
        """Store a binding; `acknowledge` runs on the engine thread once it is committed."""
        self._pending.append(_Bind(uid, pod, node, time.time(), acknowledge))

    def put_record(self, record: bridge.Record, update: bool) -> dict[str, Any]:
        """Store an attempt (or its later update). Its row and JSON are made here, on the engine
        thread, while the record is fresh in this core's cache: made on the store's thread, the same
        work cost the engine more (the two threads pass the interpreter lock and the record's objects
        between cores), measured with benchmarks/console_bench.py. Returns the row (the live view
        takes its top-N scores from it)."""
        row = bridge.record_row(record, self._score_nodes, self._filter_nodes)
        columns = (
            row["at"],
            row["pod"],
            row["uid"],
            row["profile"],
            row["attempt"],
            row["outcome"],
            row["node"] or "",
            row["nominatedNode"] or "",
            row["message"],
            row["feasibleNodes"],
        )
        self._pending.append(_Record(bridge.record_key(record), update, columns, _json(row)))
        return row

    def dropped_between(self, first: int, last: int) -> list[str]:
        """What was dropped of the changes numbered `first + 1` to `last` (`changes_queued` before
        and after an operation): read on the store's thread once they are written, by `after_commit`."""
        return [what for number, what in self.dropped if first < number <= last]

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until everything queued so far is committed."""
        if self._thread is None or not self._thread.is_alive():
            return False
        barrier = _Barrier(threading.Event())
        self._pending.append(barrier)
        return barrier.done.wait(timeout)

    # ----- the thread ---------------------------------------------------------------------------
    def start(self) -> None:
        """Start the writer thread."""
        self._init_ids()
        self._thread = threading.Thread(target=self._run, name="schedconsole-store", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Write what is queued, then stop."""
        self.flush(timeout)
        self._stopping = True
        if self._thread is not None:
            self._thread.join(timeout)

    def _init_ids(self) -> None:
        self._next_attempt = (Attempt.objects.aggregate(m=Max("id"))["m"] or 0) + 1

    def _run(self) -> None:
        try:
            while True:
                if not self._pending:
                    if self._stopping:
                        break
                    time.sleep(POLL_SECONDS)
                    continue
                batch: list[_Item] = []
                while self._pending and len(batch) < MAX_BATCH:
                    batch.append(self._pending.popleft())
                self._write(batch)
                if self.fenced:
                    break
                if time.monotonic() - self.last_prune > 300:
                    self.last_prune = time.monotonic()
                    from schedconsole.history.services import prune

                    prune()
        except BaseException as exc:  # the engine must hear that its writes stopped
            self.failed = exc
            log.exception("the store stopped")
        finally:
            connection.close()

    def _write(self, batch: list[_Item]) -> None:
        acks: list[Callable[[], None]] = []
        barriers: list[threading.Event] = []
        after: list[Callable[[], None]] = []
        if self.batches % 500 == 0:
            close_old_connections()
        failures = 0
        while True:
            try:
                # Every row is built before the transaction opens, so that it holds its locks (the
                # lease row's among them) only while the statements run back to back.
                statements = self._prepare(batch, acks, barriers, after)
                with transaction.atomic():
                    if self.fence is not None:
                        from schedconsole.engine.leader import check_fence

                        if not check_fence(self.fence):
                            raise Fenced(f"the lease moved past token {self.fence}")
                    _execute(statements)
                if self.outage_since is not None:
                    log.warning("store: the database is back after %.1fs", time.monotonic() - self.outage_since)
                    self.outage_since = None
                break
            except Fenced:
                # Nothing of this batch is stored, so nothing of it is acknowledged: the new
                # leader schedules those pods again from what the database holds.
                self.fenced = True
                log.error("store: fenced off; %d queued writes dropped", len(batch) + len(self._pending))
                self._pending.clear()
                for item in batch:
                    if isinstance(item, _Barrier):
                        item.done.set()
                if self._on_fenced is not None:
                    self._on_fenced()
                return
            except (OperationalError, InterfaceError):
                # The database is unreachable: keep the batch (bindings stay unacknowledged, so the
                # engine holds those pods as assumed) and try again until it answers.
                acks.clear()
                barriers.clear()
                after.clear()
                if self.outage_since is None:
                    self.outage_since = time.monotonic()
                    log.warning("store: the database is unavailable; holding %d writes", len(batch), exc_info=True)
                connection.close()
                if self._stopping and time.monotonic() - self.outage_since > 30:
                    raise
                time.sleep(min(2.0, 0.1 * 2 ** min(failures, 5)))
                failures += 1
                self._init_ids_quietly()
            except (DatabaseError, TypeError, ValueError):
                # DatabaseError: a row the database refuses; TypeError/ValueError: a document that
                # does not encode (an integer beyond 64 bits). Neither must stop the store.
                acks.clear()
                barriers.clear()
                after.clear()
                if not connection.is_usable():
                    connection.close()  # e.g. ended by the server; the next attempt reconnects
                failures += 1
                if failures >= 2 and len(batch) > 1:
                    # One row the database refuses must not stop the store (and the leader with it):
                    # write each item alone, so that only the refused one is dropped.
                    log.warning("store: batch of %d refused twice; writing its items one by one", len(batch), exc_info=True)
                    for item in batch:
                        if not self.fenced:
                            self._write([item])
                    return
                if failures >= 3:
                    log.error("store: the database refuses %s; dropped", _describe(batch[0]), exc_info=True)
                    self._dropped(batch)
                    break
                log.warning("store batch failed; retrying", exc_info=True)
                time.sleep(0.2 * failures)
                self._init_ids()
        self.batches += 1
        self.written += len(batch)
        self._changes_done += sum(1 for item in batch if isinstance(item, bridge.Change))
        if acks:
            self._post(lambda: _run_all(acks))  # one hand-over per batch, not per binding
        for event in barriers:
            event.set()
        for callback in after:
            callback()

    def _dropped(self, batch: list[_Item]) -> None:
        """Keep what the database refused (the operation that made a change answers with an error,
        see `dropped_between`) and tell the engine, which counts it and records a Warning Event."""
        exc = sys.exc_info()[1]
        reason = str(exc).strip().splitlines()[0] if exc is not None and str(exc).strip() else type(exc).__name__
        number = self._changes_done
        report = self._on_dropped
        for item in batch:
            if isinstance(item, bridge.Change):
                number += 1
                self.dropped.append((number, f"{item.kind} {_key(item.namespace, item.name)}: {reason}"))
            if report is not None and isinstance(item, bridge.Change | _Bind):
                kind = item.kind if isinstance(item, bridge.Change) else "Pod"
                key = _key(item.namespace, item.name) if isinstance(item, bridge.Change) else item.pod
                message = f"not stored: the database refused {_describe(item)}: {reason}"
                created = isinstance(item, bridge.Change) and item.kind == "Pod" and item.action == "add"
                self._post(functools.partial(report, kind, key, message, created))

    def _init_ids_quietly(self) -> None:
        try:
            self._init_ids()
        except DatabaseError:
            connection.close()

    def _prepare(
        self, batch: list[_Item], acks: list[Callable[[], None]], barriers: list[threading.Event], after: list[Callable[[], None]]
    ) -> list[_Stmt]:
        statements: list[_Stmt] = []
        binds: list[_Bind] = []
        records: list[_Record] = []
        changes: dict[str, bridge.Change] = {}
        logged: list[bridge.Change | _Bind] = []
        for item in batch:
            if isinstance(item, bridge.Change):
                if item.action:
                    logged.append(item)
                changes.pop(item.uid, None)
                changes[item.uid] = item  # the last change of an object in the batch wins
            elif isinstance(item, _Bind):
                binds.append(item)
                logged.append(item)
            elif isinstance(item, _Record):
                records.append(item)
            elif isinstance(item, _Barrier):
                barriers.append(item.done)
            elif isinstance(item, _AfterCommit):
                after.append(item.callback)
        # A pod's binding in the batch goes into its document's write (its result annotations, made
        # just before the binding), instead of a second write of the row.
        bound = {b.uid: b.node for b in binds if b.uid in changes and changes[b.uid].document is not None}
        if changes:
            self._write_changes(list(changes.values()), statements, bound)
        if records:
            self._write_records(records, statements)
        if binds:
            self._write_binds([b for b in binds if b.uid not in bound], binds, statements)
            acks.extend(b.acknowledge for b in binds)
        if logged:
            _write_log(logged, statements)
        return statements

    def _write_changes(self, changes: list[bridge.Change], statements: list[_Stmt], bound: dict[str, str]) -> None:
        """Upsert changed objects and mark deleted ones, a statement per kind of write; `bound`: the
        node of each pod whose binding is in the batch."""
        table = ClusterObject._meta.db_table
        js = "%s::jsonb" if connection.vendor == "postgresql" else "%s"
        now = connection.ops.adapt_datetimefield_value(datetime.now(tz=UTC))
        gone = [(c.uid,) for c in changes if c.document is None]
        rows = []
        for c in changes:
            if c.document is None:
                continue
            node = (bound.get(c.uid) or (c.document.get("spec") or {}).get("nodeName", "")) if c.kind == "Pod" else ""
            rows.append((c.kind, c.namespace, c.name, c.uid, _json(c.document), node or "", now, now))
        _insert_rows(
            statements,
            f"INSERT INTO {table} (kind, namespace, name, uid, document, node_name, deleted, created, updated)",
            f"(%s, %s, %s, %s, {js}, %s, FALSE, %s, %s)",
            rows,
            " ON CONFLICT (uid) DO UPDATE SET document = excluded.document, node_name = excluded.node_name, deleted = FALSE, updated = excluded.updated",
        )
        if gone:
            statements.append(
                (True, f"UPDATE {table} SET deleted = TRUE, updated = %s WHERE uid = %s", [(now, uid) for (uid,) in gone])
            )

    def _write_binds(self, rows: list[_Bind], binds: list[_Bind], statements: list[_Stmt]) -> None:
        """Set the node of each pod in `rows` (the others' were written with their documents) and
        insert every binding."""
        ops = connection.ops
        table = ClusterObject._meta.db_table
        for start in range(0, len(rows), MAX_PARAMS // 2):
            chunk = rows[start : start + MAX_PARAMS // 2]
            values = ", ".join(["(%s, %s)"] * len(chunk))
            statements.append(
                (
                    False,
                    f"WITH v(uid, node) AS (VALUES {values}) UPDATE {table} SET node_name = v.node FROM v WHERE {table}.uid = v.uid",
                    [value for b in chunk for value in (b.uid, b.node)],
                )
            )
        _insert_rows(
            statements,
            f"INSERT INTO {Binding._meta.db_table} (pod_uid, pod, node, at)",
            "(%s, %s, %s, %s)",
            [(b.uid, b.pod, b.node, ops.adapt_datetimefield_value(_dt(b.at))) for b in binds],
        )

    def _write_records(self, records: list[_Record], statements: list[_Stmt]) -> None:
        ops = connection.ops
        js = "%s::jsonb" if connection.vendor == "postgresql" else "%s"
        attempts: list[tuple[Any, ...]] = []
        updates: list[tuple[Any, ...]] = []
        for item in records:
            at, pod, uid, profile, attempt, outcome, node, nominated, message, feasible = item.columns
            known = self._attempt_ids.get(item.key)
            if item.update and known is not None:
                updates.append((outcome, node, nominated, message, item.text, known))
                continue
            attempt_id = self._next_attempt
            self._next_attempt += 1
            self._remember(item.key, attempt_id)
            attempts.append(
                (
                    attempt_id,
                    ops.adapt_datetimefield_value(_dt(at)),
                    pod,
                    uid,
                    profile,
                    attempt,
                    outcome,
                    node,
                    nominated,
                    message,
                    feasible,
                    item.text,
                )
            )
        table = Attempt._meta.db_table
        _insert_rows(
            statements,
            f"INSERT INTO {table} (id, at, pod, uid, profile, attempt, outcome, node, nominated_node, message, feasible_nodes, detail)",
            f"(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, {js})",
            attempts,
        )
        if updates:  # after the inserts: an attempt may be stored and updated in one batch
            statements.append(
                (
                    True,
                    f"UPDATE {table} SET outcome = %s, node = %s, nominated_node = %s, message = %s, detail = {js} WHERE id = %s",
                    updates,
                )
            )

    def _remember(self, key: tuple[str, int, float], attempt_id: int) -> None:
        self._attempt_ids[key] = attempt_id
        if len(self._attempt_ids) > 20000:
            self._attempt_ids.popitem(last=False)


def _write_log(items: list[bridge.Change | _Bind], statements: list[_Stmt]) -> None:
    """The change log a replay reads (history.ObjectChange), in the order the engine handed them over."""
    ops = connection.ops
    js = "%s::jsonb" if connection.vendor == "postgresql" else "%s"
    rows: list[tuple[Any, ...]] = []
    for item in items:
        if isinstance(item, _Bind):
            namespace, _, name = item.pod.partition("/")
            rows.append((ops.adapt_datetimefield_value(_dt(item.at)), "bind", "Pod", namespace, name, item.uid, item.node, None))
        else:
            doc = _json(item.document) if item.document is not None and item.action == "add" else None
            at = ops.adapt_datetimefield_value(_dt(item.at or time.time()))
            rows.append((at, item.action, item.kind, item.namespace, item.name, item.uid, "", doc))
    _insert_rows(
        statements,
        f"INSERT INTO {ObjectChange._meta.db_table} (at, action, kind, namespace, name, uid, node, document)",
        f"(%s, %s, %s, %s, %s, %s, %s, {js})",
        rows,
    )


MAX_PARAMS = 30000  # below SQLite's 32766 bound variables per statement (PostgreSQL allows 65535)


_Stmt = tuple[bool, str, Any]  # (executemany?, sql, parameters)


def _key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def _describe(item: _Item) -> str:
    if isinstance(item, bridge.Change):
        return f"the change of {item.kind} {item.namespace}/{item.name} (uid {item.uid})"
    if isinstance(item, _Bind):
        return f"the binding of {item.pod} to {item.node}"
    if isinstance(item, _Record):
        return f"an attempt of {item.columns[1]}"
    return type(item).__name__


def _insert_rows(statements: list[_Stmt], head: str, placeholders: str, rows: list[tuple[Any, ...]], tail: str = "") -> None:
    """One multi-row statement per chunk instead of `executemany`: SQLite's driver releases and
    retakes the GIL around every row it steps, and each hand-over stalls the engine thread."""
    if not rows:
        return
    per = max(1, MAX_PARAMS // len(rows[0]))
    for start in range(0, len(rows), per):
        chunk = rows[start : start + per]
        sql = f"{head} VALUES {', '.join([placeholders] * len(chunk))}{tail}"
        statements.append((False, sql, [value for row in chunk for value in row]))


def _json(value: Any) -> str:
    """JSON text for a document or attempt column (orjson: the store's thread holds the engine's
    interpreter lock while it encodes, so encoding time is taken from scheduling)."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY).decode()


def _execute(statements: list[_Stmt]) -> None:
    """Run prepared statements on the driver's own cursor, in the open transaction. Django's cursor
    wrapper would rewrite every `%s` of a 30000-parameter statement with a regular expression (SQLite)
    and time each call; errors still become Django's (`wrap_database_errors`). On PostgreSQL the
    parameters are sent apart from the statement (server-side binding) instead of quoted into its
    text, as Django's client-side cursor does: a pod carrying result annotations is a 65 KB document,
    and 2000 of them took 1.38 s to insert quoted, 0.67 s bound."""
    connection.ensure_connection()
    qmark = connection.vendor == "sqlite"
    with connection.wrap_database_errors:
        cur = connection.connection.cursor() if qmark else _bound_cursor(connection.connection)
        try:
            for many, sql, params in statements:
                if qmark:
                    sql = sql.replace("%s", "?")
                if many:
                    cur.executemany(sql, params)
                else:
                    cur.execute(sql, params)
        finally:
            cur.close()


def _bound_cursor(conn: Any) -> Any:
    """A psycopg cursor binding parameters on the server (Django's connections make client-side ones)."""
    import psycopg

    return psycopg.Cursor(conn)


def _run_all(callbacks: list[Callable[[], None]]) -> None:
    for callback in callbacks:
        callback()


def _dt(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, tz=UTC)


def load_documents() -> list[dict[str, Any]]:
    """The stored cluster: every live object's document, with the bindings applied."""
    docs = []
    for obj in ClusterObject.objects.filter(deleted=False).order_by("id"):
        doc = dict(obj.document)
        if obj.kind == "Pod" and obj.node_name:
            spec = dict(doc.get("spec") or {})
            spec["nodeName"] = obj.node_name
            doc["spec"] = spec
            status = dict(doc.get("status") or {})
            if status.get("phase") in (None, "", "Pending"):
                status["phase"] = "Running"
            status.pop("nominatedNodeName", None)
            doc["status"] = status
        docs.append(doc)
    return docs


def save_documents(docs: list[dict[str, Any]]) -> None:
    """Store new objects at once (imports and the demo cluster), before the engine sees them."""
    rows = []
    for doc in docs:
        meta = doc.get("metadata") or {}
        kind = doc.get("kind", "")
        rows.append(
            ClusterObject(
                kind=kind,
                namespace=meta.get("namespace", "") or "",
                name=meta.get("name", ""),
                uid=meta.get("uid") or f"{kind}/{meta.get('namespace', '')}/{meta.get('name', '')}",
                document=doc,
                node_name=(doc.get("spec") or {}).get("nodeName", "") if kind == "Pod" else "",
            )
        )
    ClusterObject.objects.bulk_create(rows, batch_size=500)
    now = datetime.now(tz=UTC)
    log = [
        ObjectChange(at=now, action="add", kind=r.kind, namespace=r.namespace, name=r.name, uid=r.uid, document=r.document)
        for r in rows
        if r.kind in ("Pod", "Node")
    ]
    ObjectChange.objects.bulk_create(log, batch_size=500)
