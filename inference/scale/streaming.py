"""Streaming a posterior over batches, with atomic checkpoints on a time interval.

The driver owns the loop; the model supplies an ``absorb(state, batch)`` step and a
``summarize(state)`` record. The state, the batches consumed (name, fingerprint, rows) and
the trajectory are written to a checkpoint by write-to-temporary, fsync and rename, so a crash
at any instant leaves either the previous or the new checkpoint, never a torn one. It is
written when :data:`CHECKPOINT_SECONDS` have passed since the last one (environment variable
``BAYESCHECK_CHECKPOINT_SECONDS``; 0 writes one after every batch), at the end, and when the
stream stops on an error or an interrupt; a crash (SIGKILL, power) loses at most that interval
of work, which ``--resume`` does again. ``resume=True`` continues from it: files already
consumed are verified by fingerprint and skipped, and a batch whose content was already
absorbed (under any name) is refused rather than counted twice. Each batch is absorbed into
the state of the batches before it, in file order, whether or not a checkpoint came between,
so a resumed stream performs the same operations on the same numbers as an uninterrupted one.

Reading runs ahead of absorbing: up to :data:`READ_AHEAD` batches (environment variable
``BAYESCHECK_READ_AHEAD``; 0 reads in the calling thread) are read, checked and, when the
family gives its ``statistic`` of one batch, reduced to it on worker threads while the
state absorbs the batch before them. A statistic is small (a triangular factor, counts),
so up to :data:`STATISTICS_AHEAD` finished ones may wait for the state, the threads still
holding at most ``READ_AHEAD`` batches; an ``initial_state`` given as a function is built
after the threads started, so its cost (the prior's, which imports scipy.linalg: about
0.3 s of CPU) runs beside the first batches' reading. Parquet decoding, numpy and the
LAPACK QR release the GIL, so on a machine with two cores reading and arithmetic overlap.
The results are absorbed strictly in file order, and an error met on a worker (a bad
value, naming its file, column and row) is raised when the stream reaches that batch,
after the batches before it were absorbed, exactly as without read-ahead; at most
``READ_AHEAD + 1`` batches are held at once (plus the finished statistics), so memory
stays flat in the number of rows.

For parallel reductions (Dask), a family's ``absorb`` is the statistic of one batch followed
by a merge; for linear regression these are
:func:`bayescheck.inference.families.linear_regression.batch_statistic` (``(model, batch) ->
RegressionStats``) and ``+`` on two statistics, or ``state.update(statistic)`` into a
posterior.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import hashlib
import io
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from bayescheck.data.batch import Batch
from bayescheck.data.output_files import write_file
from bayescheck.data.sources import DataSource
from bayescheck.models.errors import BayescheckError, DataError, SpecError

__all__ = [
    "CHECKPOINT_NAME",
    "CHECKPOINT_SECONDS",
    "READ_AHEAD",
    "BatchRecord",
    "StreamResult",
    "load_checkpoint",
    "model_key",
    "run_stream",
    "save_checkpoint",
]

# 2: the linear-Gaussian states carry a triangular root instead of X'X (precision, shift).
# 3: batch fingerprints are XXH3-128 instead of SHA-256.
# 4: a CSV file's fingerprint is taken with its line endings normalised.
CHECKPOINT_VERSION = 4
#: Seconds between checkpoints when ``BAYESCHECK_CHECKPOINT_SECONDS`` is not set.
CHECKPOINT_SECONDS = 10.0
#: File name of the checkpoint inside an output folder.
CHECKPOINT_NAME = "checkpoint.npz"
#: Batches read ahead of the one being absorbed when ``BAYESCHECK_READ_AHEAD`` is not set.
READ_AHEAD = 2
#: Finished statistics that may wait for the state when a family gives its ``statistic``
#: (each a few kilobytes), so the reading threads need not stop while the calling thread
#: is busy elsewhere (building the prior, a checkpoint).
STATISTICS_AHEAD = 32


def model_key(spec) -> str:
    """A fingerprint of a spec's model, prior and columns: a checkpoint is only valid for it.

    Sampling and check settings are left out: they do not change the posterior.
    """
    raw = {k: v for k, v in spec.raw.items() if k not in ("sampling", "check")}
    return hashlib.sha256(json.dumps(raw, sort_keys=True, default=str).encode()).hexdigest()


@dataclass(frozen=True)
class BatchRecord:
    """One absorbed batch: its name, content fingerprint and number of rows."""

    name: str
    fingerprint: str
    rows: int


@dataclass
class StreamResult:
    """What a stream leaves: the final state, the batches and the per-batch trajectory."""

    state: Any
    records: list[BatchRecord] = field(default_factory=list)
    trajectory: list[dict] = field(default_factory=list)
    resumed_from: int = 0


def _description(value: Any) -> Any:
    """A dataclass as the plain JSON value it is saved as (tuples become lists)."""
    return json.loads(json.dumps(dataclasses.asdict(value), default=str))


def _is_array_tuple(value: Any) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, np.ndarray) for v in value)


def save_checkpoint(path: Path, state: Any, records: list[BatchRecord], trajectory: list[dict],
                    model_key: str, *, encoded: list[str] | None = None) -> None:
    """Write a checkpoint atomically (temporary file, fsync, rename, fsync of the folder).

    ``state`` must be a dataclass (an engine's statistics, as they are) whose fields are
    arrays, numbers, tuples of labels, None, tuples of arrays (saved one array each), or
    dataclasses describing the statistics (a schema: saved as JSON, to be checked on resume,
    see :func:`load_checkpoint`).

    ``encoded``, optional: a list of the JSON texts of the trajectory's first records, which
    is extended here to all of them. A stream passes the same list to every checkpoint, so
    each record is encoded once, not once per checkpoint (1000 batches' records took 0.27 s
    to encode, at every checkpoint).
    """
    path = Path(path)
    if encoded is None:
        encoded = []
    encoded.extend(json.dumps(step) for step in trajectory[len(encoded):])
    meta = {
        "version": CHECKPOINT_VERSION,
        "state_type": type(state).__name__,
        "model_key": model_key,
        "records": [dataclasses.asdict(r) for r in records],
        "none_fields": [],
        "tuple_fields": {},
        "described_fields": {},
    }
    arrays = {}
    for f in dataclasses.fields(state):
        value = getattr(state, f.name)
        if value is None:
            meta["none_fields"].append(f.name)
        elif dataclasses.is_dataclass(value):
            meta["described_fields"][f.name] = _description(value)
        elif _is_array_tuple(value):
            meta["tuple_fields"][f.name] = len(value)
            for i, item in enumerate(value):
                arrays[f"state__{f.name}__{i}"] = item
        else:
            arrays[f"state__{f.name}"] = np.asarray(value)
    meta["digest"] = content_digest(meta, arrays)
    # The meta's JSON with the trajectory's encoded records spliced in as its last member.
    text = f'{json.dumps(meta)[:-1]}, "trajectory": [{", ".join(encoded)}]}}'
    buffer = io.BytesIO()
    np.savez(buffer, meta=np.array(text), **arrays)
    write_atomically(path, buffer.getvalue())


def content_digest(meta: dict, arrays: dict[str, np.ndarray]) -> str:
    """XXH3-128 of a checkpoint's content: its meta and its arrays.

    The meta without ``trajectory`` and ``digest`` (not state), and every array's name,
    type, shape and bytes. Saved in the checkpoint and checked on resume, so a checkpoint
    edited by hand or damaged (a record removed, which would count its batch twice; a number
    changed) is refused. It guards against accidents, not against someone who recomputes it.
    """
    import xxhash

    h = xxhash.xxh3_128()
    head = {k: v for k, v in meta.items() if k not in ("trajectory", "digest")}
    h.update(json.dumps(head, sort_keys=True).encode())
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}:{a.dtype.str}:{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def check_digest(path: Path, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    """Refuse a checkpoint whose content does not match its saved :func:`content_digest`.

    A checkpoint without one is refused too: with its digest removed, an edited checkpoint
    (a record deleted, which would count its batch twice) would pass unseen.
    """
    if "digest" not in meta:
        raise SpecError("checkpoint has no digest, so it cannot be verified (it was edited "
                        "or written by another program); start afresh without --resume",
                        path=path, key="digest")
    if meta["digest"] != content_digest(meta, arrays):
        raise SpecError("checkpoint was altered or damaged (its content does not match its "
                        "digest); start afresh without --resume", path=path)


#: The meta keys every checkpoint has, and their JSON types.
COMMON_KEYS = {"version": int, "state_type": str, "model_key": str, "records": list,
               "digest": str}
#: The meta keys of a stream's (or a cluster reduction's) checkpoint.
STREAM_KEYS = {**COMMON_KEYS, "none_fields": list, "tuple_fields": dict,
               "described_fields": dict, "trajectory": list}
_RECORD_KEYS = {"name": str, "fingerprint": str, "rows": int}


def _malformed(path: Path, key: str, why: str) -> SpecError:
    return SpecError(f"malformed checkpoint: {why}; start afresh without --resume", path=path,
                     key=key)


def _type_name(kind) -> str:
    return {int: "a whole number", str: "a string", list: "a list", dict: "a table",
            bool: "true or false", float: "a number"}[kind]


def check_meta(path: Path, meta, keys: dict[str, type]) -> None:
    """Refuse a checkpoint's meta that lacks one of ``keys`` or holds a wrong type.

    The records (``name``, ``fingerprint``, ``rows`` >= 0) are checked too. Run before the
    digest: a malformed meta is named by its key rather than reported as a digest mismatch.

    Raises
    ------
    SpecError
        Naming the file and the key.
    """
    if not isinstance(meta, dict):
        raise _malformed(path, "meta", "its meta is not a table")
    for key, kind in keys.items():
        if key not in meta:
            if key == "digest":
                check_digest(path, meta, {})
            raise _malformed(path, key, "the key is missing")
        value = meta[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise _malformed(path, key, f"expected {_type_name(kind)}, got {value!r:.60}")
    for i, record in enumerate(meta.get("records", [])):
        if not isinstance(record, dict) or set(record) != set(_RECORD_KEYS):
            raise _malformed(path, f"records[{i}]", f"expected a table with keys "
                                                    f"{sorted(_RECORD_KEYS)}, got "
                                                    f"{record!r:.80}")
        for key, kind in _RECORD_KEYS.items():
            value = record[key]
            if not isinstance(value, kind) or isinstance(value, bool) or \
                    (kind is int and value < 0):
                raise _malformed(path, f"records[{i}].{key}",
                                 f"expected {_type_name(kind)}, got {value!r:.60}")


def resumable(path: Path) -> bool:
    """Whether ``--resume`` has a checkpoint at ``path`` to continue from.

    When there is none, the run stopped before its first checkpoint (or never ran in this
    folder): that is said on stderr, and the run starts from the beginning.
    """
    if os.path.lexists(path):
        return True
    print(f"bayescheck: --resume: no checkpoint {path} (the run stopped before its first "
          f"checkpoint); starting from the beginning", file=sys.stderr, flush=True)
    return False


def read_checkpoint(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    """A checkpoint's meta (parsed, not yet checked) and its arrays by name.

    Raises
    ------
    SpecError
        When there is no checkpoint or it cannot be read.
    """
    try:
        with np.load(path, allow_pickle=False) as npz:
            meta = json.loads(str(npz["meta"]))
            arrays = {k: npz[k] for k in npz.files if k != "meta"}
    except FileNotFoundError:
        raise SpecError("--resume was given but there is no checkpoint to resume from",
                        path=path) from None
    except Exception as exc:  # noqa: BLE001 - a damaged checkpoint is a user-facing error
        raise SpecError(f"cannot read checkpoint: {exc}", path=path) from None
    return meta, arrays


def write_atomically(path: Path, content: bytes) -> None:
    """Write a file by temporary file, fsync, rename and fsync of the folder.

    A crash at any instant leaves the old file or the new one, never a torn one; a link
    under the name is replaced, never followed
    (:func:`bayescheck.data.output_files.write_file`).
    """
    write_file(path, content)


class SchemaChanged(SpecError):
    """A checkpoint's described state (a schema) differs from the one the data now give.

    ``records`` are the batches the checkpoint had absorbed, so a family can name the batch,
    column and row that brought the change.
    """

    def __init__(self, message: str, *, path=None, records=()):
        super().__init__(message, path=path)
        self.records = list(records)


def load_checkpoint(path: Path, state_type: type, model_key: str,
                    initial_state: Any = None) -> StreamResult:
    """Read a checkpoint written by :func:`save_checkpoint` for the same model.

    Parameters
    ----------
    path : pathlib.Path
        The checkpoint file.
    state_type : type
        The state's dataclass.
    model_key : str
        :func:`model_key` of the spec; a checkpoint of another key is refused.
    initial_state : object, optional
        The state a fresh stream would start from. A field saved as a description (a
        dataclass such as a schema) is taken from it, and must equal the saved one; needed
        when the state has such fields.

    Raises
    ------
    SpecError
        When the checkpoint belongs to another model, prior or schema, or cannot be read.
    """
    path = Path(path)
    meta, saved = read_checkpoint(path)
    if not isinstance(meta, dict) or meta.get("version") != CHECKPOINT_VERSION or \
            meta.get("state_type") != state_type.__name__:
        raise SpecError("checkpoint was written for another model or version", path=path)
    check_meta(path, meta, STREAM_KEYS)
    if meta["model_key"] != model_key:
        raise SpecError("checkpoint was written with another model, prior or columns; "
                        "start afresh without --resume", path=path)
    check_digest(path, meta, saved)
    arrays = {k.removeprefix("state__"): v for k, v in saved.items()}
    try:
        return _state_from(path, meta, arrays, state_type, initial_state)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _malformed(path, "state", f"{type(exc).__name__}: {exc}") from None


def _state_from(path: Path, meta: dict, arrays: dict, state_type: type,
                initial_state: Any) -> StreamResult:
    """The :class:`StreamResult` of a checked checkpoint's meta and arrays."""
    values = {}
    for f in dataclasses.fields(state_type):
        if f.name in meta["none_fields"]:
            values[f.name] = None
        elif f.name in meta.get("tuple_fields", {}):
            values[f.name] = tuple(arrays[f"{f.name}__{i}"]
                                   for i in range(meta["tuple_fields"][f.name]))
        elif f.name in meta.get("described_fields", {}):
            if initial_state is None:
                raise ValueError(f"load_checkpoint: the state's {f.name} is not saved; pass "
                                 f"initial_state")
            values[f.name] = getattr(initial_state, f.name)
            saved, now = meta["described_fields"][f.name], _description(values[f.name])
            if saved != now:
                changed = "; ".join(f"{k} {saved.get(k)!r} then, {now.get(k)!r} now"
                                    for k in sorted(set(saved) | set(now))
                                    if saved.get(k) != now.get(k))
                raise SchemaChanged(f"the checkpoint was written for another {f.name} than "
                                    f"the data now give ({changed}); start afresh without "
                                    f"--resume", path=path,
                                    records=[BatchRecord(**r) for r in meta["records"]])
        else:
            arr = arrays[f.name]
            values[f.name] = arr if arr.ndim else arr.item()
    state = state_type(**values)
    records = [BatchRecord(**r) for r in meta["records"]]
    return StreamResult(state, records, list(meta["trajectory"]), resumed_from=len(records))


def checkpoint_description(path: Path, name: str) -> dict | None:
    """What a checkpoint saved as the description of its state's field ``name`` (or None).

    A family whose initial state depends on it reads it before :func:`load_checkpoint`: a
    resumed naive Bayes fit on a cluster rebuilds the schema of the checkpoint to learn the
    labels of the batches it covers, so that only the other batches' labels are read.

    None too when there is no checkpoint (the run stopped before its first one).

    Raises
    ------
    SpecError
        When the checkpoint cannot be read.
    """
    if not os.path.lexists(path):
        return None
    meta, _ = read_checkpoint(path)
    described = meta.get("described_fields") if isinstance(meta, dict) else None
    if not isinstance(described, dict):
        raise _malformed(Path(path), "described_fields", "the key is missing or not a table")
    return described.get(name)


def _progress_printer(stream=None):
    stream = stream or sys.stderr

    def report(i: int, total: int | None, record: BatchRecord, seconds: float, rows: int):
        of = f"/{total}" if total else ""
        print(f"batch {i}{of} {record.name}: {record.rows} rows in {seconds:.3f} s "
              f"(total {rows} rows)", file=stream, flush=True)

    return report


def checkpoint_interval() -> float:
    """Seconds between checkpoints: ``BAYESCHECK_CHECKPOINT_SECONDS`` or the default.

    Raises
    ------
    SpecError
        When the variable is set to something other than a non-negative number.
    """
    return _env_number("BAYESCHECK_CHECKPOINT_SECONDS", float, CHECKPOINT_SECONDS,
                       "a number of seconds >= 0")


def read_ahead() -> int:
    """Batches to read ahead of the one absorbed: ``BAYESCHECK_READ_AHEAD`` or the default.

    Raises
    ------
    SpecError
        When the variable is set to something other than a whole number >= 0.
    """
    return _env_number("BAYESCHECK_READ_AHEAD", int, READ_AHEAD,
                       "a whole number of batches >= 0")


def _env_number(name: str, kind, default, wanted: str):
    """``kind(os.environ[name])`` when set and >= 0 (NaN refused), else ``default``."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = -1
    if not value >= 0:
        raise SpecError(f"{name} must be {wanted}, got {raw!r}")
    return value


def _failed(exc: BaseException) -> Future:
    future: Future = Future()
    future.set_exception(exc)
    return future


def _in_order(loaders: Iterable[Callable[[], Any]], work: Callable[[Callable[[], Any]], Any],
              depth: int, threads: int | None = None,
              started: Callable[[], None] | None = None) -> Iterator[Any]:
    """``work(load)`` for each loader, in order, up to ``depth`` of them ahead on threads.

    With ``depth`` 0 everything runs in the calling thread. Otherwise, while the caller
    handles result i, results i+1 .. i+depth are being computed (or wait, finished) on at
    most ``threads`` threads (default ``depth``; no more than the cores). An exception,
    whether raised by ``work`` on a thread or by the iteration of ``loaders`` (a resumed
    batch whose content changed), is raised in its place in the order, after every result
    before it was handed out. Closing the generator (an error in the caller, an interrupt)
    cancels what has not started; the (at most ``threads``) running calls finish on their
    own and their results are dropped, so the caller can save its checkpoint at once even
    if a read hangs.

    ``started()``, if given, is called in the calling thread once the first ``depth + 1``
    loads were handed to the threads (with ``depth`` 0: before the first), before any
    result is handed out, so its work runs beside theirs.
    """
    loaders = iter(loaders)
    if depth <= 0:
        if started is not None:
            started()
        for load in loaders:
            yield work(load)
        return
    workers = depth if threads is None else threads
    pool = ThreadPoolExecutor(max_workers=max(1, min(workers, depth, os.cpu_count() or 1)),
                              thread_name_prefix="bayescheck-read")
    window: collections.deque[Future] = collections.deque()
    exhausted = False
    try:
        while True:
            while not exhausted and len(window) <= depth:
                try:
                    load = next(loaders)
                except StopIteration:
                    exhausted = True
                except BayescheckError as exc:
                    window.append(_failed(exc))
                    exhausted = True
                else:
                    window.append(pool.submit(work, load))
            if started is not None:
                started, call = None, started
                call()
            if not window:
                return
            yield window.popleft().result()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


#: Streams of more bytes than this run with BLAS on one thread (see :func:`_one_blas_thread`).
BIG_STREAM_BYTES = 8 * 2**20


def _one_blas_thread(source: DataSource):
    """Limit BLAS to one thread while a big stream runs.

    Each batch's factorisation is small (a 10,000 x 51 QR takes milliseconds), too small for
    OpenBLAS threads to pay: on this 2-core machine, busy with other work, they made the
    1e6-row stream 5x slower (91 s instead of 17 s) by spinning against each other. Small
    streams skip it: threadpoolctl costs about 75 ms to import and inspect the libraries.
    """
    try:
        size = sum(f.stat().st_size for f in source.files())
    except (OSError, DataError):
        size = 0
    if size < BIG_STREAM_BYTES:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits
    return threadpool_limits(limits=1, user_api="blas")


def run_stream(source: DataSource, *, initial_state: Any | Callable[[], Any],
               absorb: Callable[[Any, Batch], tuple[Any, int]],
               summarize: Callable[[Any], dict | None],
               checkpoint: Path | None = None, resume: bool = False, model_key: str = "",
               total: int | None = None, progress: bool | Callable = False,
               checkpoint_seconds: float | None = None,
               statistic: Callable[[Batch], Any] | None = None,
               ahead: int | None = None) -> StreamResult:
    """Absorb batches one at a time into a posterior state.

    Parameters
    ----------
    source : models.DataSource
        The stream (read lazily, one batch at a time).
    initial_state : object or callable
        The prior, as a state dataclass with an immutable update; or a function of no
        arguments returning it, called once the reading threads have started (unless
        resuming), so that its cost overlaps the reading.
    absorb : callable
        ``absorb(state, batch) -> (new_state, rows)``; with ``statistic``,
        ``absorb(state, statistic(batch))``.
    summarize : callable
        ``summarize(state) -> dict or None``: the trajectory record after a batch.
    checkpoint : pathlib.Path, optional
        Where to write the state (see the module's description for when).
    resume : bool
        Continue from ``checkpoint`` instead of starting from ``initial_state``.
    model_key : str
        Identifies model and prior; a checkpoint with another key is refused.
    total : int, optional
        Number of batches, for progress lines.
    progress : bool or callable
        True prints one line per batch to stderr; a callable receives
        ``(i, total, record, seconds, total_rows)``.
    checkpoint_seconds : float, optional
        Seconds between checkpoints (0: after every batch); default
        :func:`checkpoint_interval`.
    statistic : callable, optional
        ``statistic(batch)``: the part of absorbing a batch that does not depend on the
        state (reading the columns, a factorisation), computed on the read-ahead threads.
        It must be a pure function of the batch.
    ahead : int, optional
        Batches read (and reduced by ``statistic``) ahead of the one absorbed; 0 reads in
        the calling thread. Default :func:`read_ahead`. With ``statistic``, up to
        :data:`STATISTICS_AHEAD` finished statistics may wait, still computed on at most
        ``ahead`` threads.

    Returns
    -------
    StreamResult
    """
    build = initial_state if callable(initial_state) else None
    if resume:
        if checkpoint is None:
            raise SpecError("--resume needs an output folder holding a checkpoint")
        resume = resumable(checkpoint)
    if resume:
        if build is not None:
            initial_state, build = build(), None
        result = load_checkpoint(checkpoint, type(initial_state), model_key,
                                 initial_state=initial_state)
    else:
        # Built below, once the reading threads run, when given as a function.
        result = StreamResult(None if build is not None else initial_state)
    interval = checkpoint_interval() if checkpoint_seconds is None else checkpoint_seconds
    depth = read_ahead() if ahead is None else ahead
    seen = {r.fingerprint: r.name for r in result.records}
    report = _progress_printer() if progress is True else (progress or None)
    rows = sum(r.rows for r in result.records)
    saved = len(result.records)
    last_save = time.monotonic()
    encoded: list[str] = []  # the trajectory's records as JSON, each encoded once

    def save():
        nonlocal saved, last_save
        if checkpoint is not None and saved != len(result.records):
            save_checkpoint(checkpoint, result.state, result.records, result.trajectory,
                            model_key, encoded=encoded)
            saved, last_save = len(result.records), time.monotonic()

    def read(load):
        # On a read-ahead thread: only the batch's name and fingerprint and what absorb
        # needs are kept, so the file's bytes are freed as soon as the statistic is taken.
        started = time.perf_counter()
        batch = load()
        item = batch if statistic is None else statistic(batch)
        return batch.name, batch.fingerprint, item, time.perf_counter() - started

    def absorb_all():
        loaders = source.loaders(skip={r.name: r.fingerprint for r in result.records})
        window = depth if statistic is None or depth == 0 else max(depth, STATISTICS_AHEAD)
        with contextlib.closing(_in_order(loaders, read, window, threads=depth,
                                          started=build_state)) as items:
            for name, digest, item, seconds in items:
                absorb_one(name, digest, item, seconds)

    def build_state():
        if build is not None:
            result.state = build()

    def absorb_one(name, digest, item, seconds):
        nonlocal rows
        if digest in seen:
            raise DataError(f"same content as batch {seen[digest]!r}, which was already "
                            f"absorbed; refusing to count it twice", path=name)
        started = time.perf_counter()
        state, n = absorb(result.state, item)
        record = BatchRecord(name, digest, int(n))
        step = {"batch": name, "rows": int(n), **(summarize(state) or {})}
        # State, records and trajectory change together: a checkpoint taken at any
        # point (the interval, an error in the next batch) is consistent.
        result.state = state
        result.records.append(record)
        result.trajectory.append(step)
        seen[digest] = name
        rows += n
        if time.monotonic() - last_save >= interval:
            save()
        if report:
            report(len(result.records), total, record,
                   seconds + time.perf_counter() - started, rows)

    try:
        with _one_blas_thread(source):
            absorb_all()
    finally:
        # At the end, and on the way out of an error or an interrupt: keep what was done.
        save()
    return result
