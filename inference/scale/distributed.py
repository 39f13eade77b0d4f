"""Fitting over the partitions of a Dask cluster: one statistic per file, merged in a tree.

``bayescheck fit SPEC --scheduler ADDRESS`` (or ``--scheduler local --workers N``) runs the
families whose statistics merge associatively (linear regression, Beta-Bernoulli,
Dirichlet-categorical, naive Bayes) and the Gaussian mixture's EM on a
``dask.distributed`` cluster:

* every file of the spec's ``[data] path`` is one partition; a worker reads it (the same
  reader and validation as the in-process stream, :func:`bayescheck.data.batch.read_batch`) and
  computes the family's statistic of that batch there, the same function the stream calls;
* the statistics are merged by a tree of tasks on the workers (each merging up to
  :data:`FAN_IN` neighbours; 3 levels for 100 files), with the family's merge (``+`` of the
  engine's statistics: counts add, the linear-Gaussian roots merge by the QR of the stacked
  factors), and only the root travels back;
* the family applies the merged statistic to its prior exactly as after a stream.

The merges are associative, so the result equals the single-process stream up to the
order of floating-point additions (tests hold it to 1e-12 relative). EM
(:class:`ClusterRows`) keeps each partition's rows in worker memory and runs one map-reduce
of the responsibility-weighted moments per iteration
(:func:`bayescheck.inference.engines.mixture_em.fit_em` drives it through its ``Rows`` protocol).

With an output folder, a run of the merging families keeps a checkpoint
(:func:`checkpointed_reduce`): the client gathers each partition's statistic as it
finishes, merges it into the running statistic and writes, on the stream's interval, at the
end and when the run stops on an error, the same checkpoint the stream writes (the prior
state with the merged statistic applied, and the file, fingerprint and rows of every
partition it covers). ``--resume`` verifies the covered files' fingerprints on the workers
and computes only the others; a checkpoint of either kind resumes in either place. EM
keeps its iterations instead (:mod:`bayescheck.inference.scale.em_checkpoint`). Dask is an optional
dependency (``pip install 'bayescheck[dask]'``); nothing here is imported by an in-process fit.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from bayescheck.data.batch import SUFFIXES, Batch, read_batch
from bayescheck.data.fingerprints import file_fingerprint
from bayescheck.data.remote import data_file, is_url
from bayescheck.inference.scale.streaming import (
    BatchRecord,
    StreamResult,
    checkpoint_interval,
    load_checkpoint,
    resumable,
    save_checkpoint,
)
from bayescheck.models.errors import BayescheckError, DataError, SpecError
from bayescheck.models.resources import check_workers

__all__ = ["ClusterRows", "active",
           "checkpointed_reduce", "cluster", "partition_files", "reduce_partitions",
           "stream_or_reduce", "uncovered_files"]

_CLIENT: contextvars.ContextVar = contextvars.ContextVar("bayescheck_dask_client", default=None)


def active():
    """The ``distributed.Client`` of the enclosing :func:`cluster`, or None (in-process)."""
    return _CLIENT.get()


def _import_distributed():
    try:
        import distributed
    except ImportError:
        raise BayescheckError("--scheduler needs Dask: pip install 'bayescheck[dask]' "
                              "(dask and distributed)") from None
    return distributed


@contextlib.contextmanager
def cluster(scheduler: str, workers: int | None = None, *, processes: bool = True,
            timeout: float = 10.0) -> Iterator[Any]:
    """Connect to a Dask scheduler (or start a local cluster) for the fits inside the block.

    Parameters
    ----------
    scheduler : str
        A scheduler address (``tcp://host:8786``, ``inproc://...``), or ``"local"`` to start a
        ``distributed.LocalCluster`` for the block.
    workers : int, optional
        Workers of the local cluster (default 2); only with ``"local"``.
    processes : bool
        Local cluster workers as processes (one thread each), else threads of this process.
    timeout : float
        Seconds to wait for the scheduler.

    Raises
    ------
    BayescheckError
        Dask not installed, ``workers`` without ``"local"``, or a scheduler that cannot be
        reached (exit 2, naming the address).
    """
    distributed = _import_distributed()
    if workers is not None and scheduler != "local":
        raise BayescheckError(f"--workers {workers}: only with --scheduler local (a running "
                              f"cluster at {scheduler} has its own workers)")
    if workers is not None and workers < 1:
        raise BayescheckError(f"--workers {workers}: expected a positive number of workers")
    if workers is not None:
        check_workers(workers)
    with contextlib.ExitStack() as stack:
        if scheduler == "local":
            local = stack.enter_context(distributed.LocalCluster(
                n_workers=workers or 2, threads_per_worker=1, processes=processes,
                dashboard_address=None))
            client = stack.enter_context(distributed.Client(local))
        else:
            try:
                client = distributed.Client(scheduler, timeout=timeout)
            except (OSError, TimeoutError, ValueError, TypeError) as exc:
                raise BayescheckError(f"--scheduler {scheduler}: cannot reach a Dask scheduler "
                                      f"there ({type(exc).__name__}: {exc})") from None
            stack.callback(client.close)
        token = _CLIENT.set(client)
        try:
            yield client
        finally:
            _CLIENT.reset(token)


def partition_files(source) -> list[str]:
    """The files of a data source, one partition each, in the stream's order."""
    if source.pattern is None:
        raise SpecError("--scheduler reads files: give [data] path (in-memory frames are "
                        "fitted in-process)")
    return [str(f) for f in source.files()]


def _read(name: str) -> Batch:
    return read_batch(data_file(name))


def _partition(name: str, statistic: Callable[[Batch], Any]):
    batch = _read(name)
    stat = statistic(batch)
    return stat, [BatchRecord(batch.name, batch.fingerprint, int(stat.n))]


def _merge_records(merge, *parts):
    """(statistic, records) pairs merged in order: statistics by ``merge``, records joined."""
    stats = parts[0][0]
    for p in parts[1:]:
        stats = merge(stats, p[0])
    return stats, [r for p in parts for r in p[1]]


def _merge_in_order(merge, *parts):
    out = parts[0]
    for p in parts[1:]:
        out = merge(out, p)
    return out


#: Partial results merged by one task of the tree: 100 files take 3 levels and 16 tasks.
FAN_IN = 8


def _tree(client, futures: list, merge: Callable, combine=_merge_in_order) -> Any:
    """Merge futures in groups of :data:`FAN_IN` neighbours, level by level, until one is left.

    Neighbours stay in order, so the result is the sequential merge regrouped: equal to it
    for an associative ``merge``, up to floating-point rounding.
    """
    level = list(futures)
    while len(level) > 1:
        level = [level[i] if len(level[i:i + FAN_IN]) == 1 else
                 client.submit(combine, merge, *level[i:i + FAN_IN], pure=False)
                 for i in range(0, len(level), FAN_IN)]
    return level[0]


@contextlib.contextmanager
def _worker_errors():
    """A worker's OSError becomes a DataError (exit 2) naming its file."""
    try:
        yield
    except BayescheckError:
        raise
    except OSError as exc:
        raise DataError(f"a worker cannot read it: {exc.strerror or exc}",
                        path=exc.filename) from None


def _gather(client, future):
    """The result of a future (or a list of them), errors as :func:`_worker_errors`."""
    with _worker_errors():
        return client.gather(future)


def _as_finished(futures: list) -> Iterator[Any]:
    """The results of ``futures`` in the order they finish, errors as :func:`_worker_errors`.

    Results that finished together are gathered in one round trip; a failed one is raised
    after the others of its round trip were handed out (so they can be kept).
    """
    from distributed import as_completed

    with _worker_errors():
        finished = as_completed(futures, with_results=True, raise_errors=False)
        for batch in finished.batches():
            failed = [result for future, result in batch if future.status == "error"]
            for future, result in batch:
                if future.status != "error":
                    yield result
            if failed:
                _, exc, traceback = failed[0]
                raise exc.with_traceback(traceback)


def reduce_partitions(source, statistic: Callable[[Batch], Any],
                      merge: Callable[[Any, Any], Any], *,
                      files: list[str] | None = None) -> tuple[Any, list[BatchRecord]]:
    """Statistic of every file on the workers, merged by a tree reduction.

    Parameters
    ----------
    source : models.DataSource
        The spec's data (files the workers can read at the same paths).
    statistic : callable
        ``statistic(batch) -> stats`` with ``stats.n`` its rows; run on a worker.
    merge : callable
        ``merge(a, b) -> stats``, associative.
    files : list of str, optional
        These files of the source only (default: all).

    Returns
    -------
    (stats, records)
        The merged statistic and each file's
        :class:`~bayescheck.inference.scale.streaming.BatchRecord`.

    Raises
    ------
    DataError
        A file a worker cannot read or that fails validation (named), or two files with the
        same content (counted once only in a stream, so refused here too).
    """
    client = active()
    files = partition_files(source) if files is None else files
    parts = client.map(_partition, files, statistic=statistic, pure=False)
    stats, records = _gather(client, _tree(client, parts, merge, _merge_records))
    seen: dict[str, str] = {}
    for r in records:
        if r.fingerprint in seen:
            raise DataError(f"same content as batch {seen[r.fingerprint]!r}; refusing to count "
                            f"it twice", path=r.name)
        seen[r.fingerprint] = r.name
    return stats, records


def _file_fingerprint(name: str) -> str:
    """The fingerprint of a file's bytes (on a worker): a covered partition, verified."""
    try:
        file = data_file(name)
        return file_fingerprint(file.read_bytes(), SUFFIXES.get(file.suffix.lower()))
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}", path=name) from None


def _real_path(name) -> str:
    return str(name) if is_url(name) else os.path.realpath(name)


def uncovered_files(files: list[str], covered: list[BatchRecord]) -> list[str]:
    """The files, in order, that no record of a checkpoint names (matched by real path)."""
    done = {_real_path(r.name) for r in covered}
    return [f for f in files if _real_path(f) not in done]


def _uncovered(client, files: list[str], covered: list[BatchRecord]) -> list[str]:
    """The files a checkpoint does not cover, in order, once the covered ones are verified.

    Every covered file must still be among ``files`` (matched by real path, as the stream
    does) with the fingerprint it had: the workers read its bytes again (no parsing).

    Raises
    ------
    DataError
        Naming a covered file that changed or is no longer matched by ``[data] path``.
    """
    by_path = {_real_path(f): f for f in files}
    pairs = []
    for r in covered:
        current = by_path.get(_real_path(r.name))
        if current is None:
            raise DataError("absorbed into the checkpoint but no longer matched by [data] "
                            "path; start afresh without --resume", path=r.name)
        pairs.append((current, r))
    digests = _gather(client, client.map(_file_fingerprint, [f for f, _ in pairs],
                                         pure=False))
    for (current, r), digest in zip(pairs, digests, strict=True):
        if digest != r.fingerprint:
            raise DataError("content changed since this batch was absorbed into the "
                            "checkpoint; start afresh without --resume", path=current)
    return uncovered_files(files, covered)


def checkpointed_reduce(source, *, initial_state: Any, statistic: Callable[[Batch], Any],
                        apply: Callable[[Any, Any], Any], merge: Callable[[Any, Any], Any],
                        checkpoint, resume: bool = False, model_key: str = "",
                        checkpoint_seconds: float | None = None) -> StreamResult:
    """The statistic of every file on the workers, merged on the client as each finishes.

    The client merges each partition's statistic into the running one in the order the
    partitions finish and writes :func:`~bayescheck.inference.scale.streaming.save_checkpoint`'s
    checkpoint (``apply(state, merged)``, the records of the partitions it covers, the trajectory
    loaded) every ``checkpoint_seconds`` (default
    :func:`~bayescheck.inference.scale.streaming.checkpoint_interval`), at the end and when the run
    stops on an error or an interrupt. The order of merging changes only floating-point rounding
    (counts add exactly).

    Parameters
    ----------
    source : models.DataSource
    initial_state : object
        The prior state (a fresh run starts from it).
    statistic, apply, merge : callable
        As in :func:`stream_or_reduce`.
    checkpoint : pathlib.Path or None
        The checkpoint file; None keeps none (``resume`` then refused).
    resume : bool
        Start from the checkpoint: its covered files are verified on the workers (same
        content, still matched) and not computed again.
    model_key : str
        :func:`bayescheck.inference.scale.streaming.model_key` of the spec.
    checkpoint_seconds : float, optional
        Seconds between checkpoints (0: after every partition).

    Returns
    -------
    inference.streaming.StreamResult
        The state, the records of every file in file order, the checkpoint's trajectory and,
        in ``resumed_from``, the number of partitions the checkpoint covered.

    Raises
    ------
    DataError
        A file that cannot be read or fails validation, a covered file that changed or is
        gone, or two files with the same content.
    SpecError
        A checkpoint of another model, prior, schema or version, or none to resume from.
    """
    client = active()
    files = partition_files(source)
    if resume:
        if checkpoint is None:
            raise SpecError("--resume needs an output folder holding a checkpoint")
        resume = resumable(checkpoint)
    if resume:
        done = load_checkpoint(checkpoint, type(initial_state), model_key,
                               initial_state=initial_state)
        todo = _uncovered(client, files, done.records)
    else:
        done, todo = StreamResult(initial_state), files
    interval = checkpoint_interval() if checkpoint_seconds is None else checkpoint_seconds
    seen = {r.fingerprint: r.name for r in done.records}
    start, merged, new = done.state, None, []
    saved, last_save = 0, time.monotonic()
    order = {_real_path(f): i for i, f in enumerate(files)}

    def state():
        return start if merged is None else apply(start, merged)

    def records():  # in file order, as a stream lists them (it may resume this checkpoint)
        return sorted(done.records + new, key=lambda r: order[_real_path(r.name)])

    def save():
        nonlocal saved, last_save
        if checkpoint is not None and saved != len(new):
            save_checkpoint(checkpoint, state(), records(), done.trajectory, model_key)
            saved, last_save = len(new), time.monotonic()

    futures = client.map(_partition, todo, statistic=statistic, pure=False)
    try:
        for stat, (record,) in _as_finished(futures):
            if record.fingerprint in seen:
                raise DataError(f"same content as batch {seen[record.fingerprint]!r}; "
                                f"refusing to count it twice", path=record.name)
            # Statistic and records change together: a checkpoint at any point is whole.
            merged = stat if merged is None else merge(merged, stat)
            new.append(record)
            seen[record.fingerprint] = record.name
            if time.monotonic() - last_save >= interval:
                save()
    finally:
        client.cancel(futures)
        save()
    return StreamResult(state(), records(), list(done.trajectory),
                        resumed_from=len(done.records))


def stream_or_reduce(source, *, initial_state: Any, statistic: Callable[[Batch], Any],
                     apply: Callable[[Any, Any], Any], merge: Callable[[Any, Any], Any],
                     summarize: Callable[[Any], dict | None], stream: Callable[..., StreamResult],
                     progress: bool | Callable = False, checkpoint=None, resume: bool = False,
                     model_key: str = "") -> StreamResult:
    """A family's pass over its data: on the cluster of :func:`cluster`, else the stream.

    In-process, ``stream(absorb, statistic)`` runs
    :func:`bayescheck.inference.scale.streaming.run_stream`
    with ``absorb(state, stat) = apply(state, stat)`` and ``statistic`` (which the stream
    computes on its read-ahead threads, in file order); on a cluster the statistics of
    the files are merged by :func:`reduce_partitions` (a tree on the workers) and applied
    once, ``apply(initial_state, merged)``; with a ``checkpoint`` or ``resume``, by
    :func:`checkpointed_reduce` (merged on the client, checkpointed). The trajectory then
    has one record, for the end, after the resumed checkpoint's.

    Parameters
    ----------
    source : models.DataSource
    initial_state : object
        The prior state.
    statistic, apply, merge : callable
        The statistic of one batch, its application to a state, and the merge of two
        statistics.
    summarize : callable
        ``summarize(state) -> dict or None``.
    stream : callable
        ``stream(absorb, statistic) -> StreamResult``: the family's in-process stream.
    progress : bool
        On a cluster, one line on stderr at the end.
    checkpoint, resume, model_key
        On a cluster, as :func:`checkpointed_reduce` takes them (the stream gets its own).

    Returns
    -------
    inference.streaming.StreamResult
    """
    if active() is None:
        def absorb(state, stat):
            return apply(state, stat), stat.n

        return stream(absorb, statistic)
    started = time.perf_counter()
    if checkpoint is None and not resume:
        stats, records = reduce_partitions(source, statistic, merge)
        result = StreamResult(apply(initial_state, stats), records)
    else:
        result = checkpointed_reduce(source, initial_state=initial_state, statistic=statistic,
                                     apply=apply, merge=merge, checkpoint=checkpoint,
                                     resume=resume, model_key=model_key)
    rows = sum(r.rows for r in result.records)
    if progress:
        import sys
        resumed = (f" ({result.resumed_from} of them from the checkpoint)"
                   if result.resumed_from else "")
        print(f"{len(result.records)} partitions{resumed}, {rows} rows merged on the cluster "
              f"in {time.perf_counter() - started:.3f} s", file=sys.stderr, flush=True)
    summary = summarize(result.state)
    if summary:
        result.trajectory.append({"batch": "all partitions", "rows": rows, **summary})
    return result


# --------------------------------------------------------------------------------------------
# EM: the rows stay on the workers, one map-reduce of the E-step statistics per iteration
# --------------------------------------------------------------------------------------------


def _load_rows(name: str, read_rows: Callable[[Batch], np.ndarray]):
    from bayescheck.inference.engines.mixture_em import MatrixRows

    batch = _read(name)
    return MatrixRows(read_rows(batch), name=batch.name, fingerprint=batch.fingerprint)


# Small tasks on one partition's MatrixRows (or its squared distances d2), run on the workers.
def _info(rows):
    return rows.n, rows.D, rows.name, rows.fingerprint


def _statistics(rows, state, moments, hard):
    return rows.statistics(state, moments, hard)


def _range(rows):
    return rows.X.min(axis=0), rows.X.max(axis=0)


def _column_sum(rows):
    return rows.X.sum(axis=0)


def _rows(rows, start, stop):
    return rows.X[start:stop]


def _d2(rows, centre, previous):
    d2 = np.square(rows.X - centre).sum(axis=1)
    return d2 if previous is None else np.minimum(previous, d2)


def _sum(a):
    return float(np.sum(a))


def _largest(a):
    i = int(np.argmax(a))
    return float(a[i]), i


def _locate(d2, u):
    return min(int(np.searchsorted(np.cumsum(d2), u, side="right")), d2.size - 1)


def _lloyd(rows, centres):
    from bayescheck.inference.engines.mixture_em import lloyd_sums

    return lloyd_sums(rows.X, centres)


def _add_pairs(a, b):
    return tuple(x + y for x, y in zip(a, b, strict=True))


class ClusterRows:
    """The rows of a mixture held on the workers, one ``MatrixRows`` per file.

    Implements the ``Rows`` protocol of :func:`bayescheck.inference.engines.mixture_em.fit_em`
    (``n``, ``D``, the E-step ``statistics`` at a state, ``ptp``, ``seed_centres``) by running the
    same computation on each partition's
    :class:`~bayescheck.inference.engines.mixture_em.MatrixRows`
    and merging the partial results: the E-step statistics by a tree of
    :func:`~bayescheck.inference.engines.mixture_em.combine_statistics` on the workers, so one
    iteration of EM is one map-reduce and only the merged statistics reach the client.

    Parameters
    ----------
    source : models.DataSource
        The spec's data.
    read_rows : callable
        ``read_rows(batch) -> (n, D) float64``: the model's validated matrix of one batch.
    """

    def __init__(self, source, read_rows: Callable[[Batch], np.ndarray]):
        self.client = active()
        files = partition_files(source)
        self.parts = self.client.map(_load_rows, files, read_rows=read_rows, pure=False)
        info = self._map(_info)
        self.sizes = np.array([i[0] for i in info], dtype=np.int64)
        self.D = int(info[0][1])
        self.n = int(self.sizes.sum())
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)])
        self.records = [BatchRecord(i[2], i[3], int(i[0])) for i in info]

    def _submit(self, fn, *args) -> list:
        return [self.client.submit(fn, p, *args, pure=False) for p in self.parts]

    def _map(self, fn, *args) -> list:
        return _gather(self.client, self._submit(fn, *args))

    def statistics(self, state, moments: str, hard: bool):
        """E-step statistics of all rows: per partition on the workers, merged in a tree."""
        from bayescheck.inference.engines.mixture_em import combine_statistics

        futures = self._submit(_statistics, state, moments, hard)
        return _gather(self.client, _tree(self.client, futures, combine_statistics))

    def ptp(self) -> np.ndarray:
        """Range of every column over all rows."""
        lo, hi = zip(*self._map(_range), strict=True)
        return np.max(hi, axis=0) - np.min(lo, axis=0)

    def head(self, m: int) -> np.ndarray:
        """The first ``m`` rows."""
        out, p = [], 0
        while sum(len(b) for b in out) < m and p < len(self.parts):
            out.append(_gather(self.client, self.client.submit(_rows, self.parts[p], 0, m)))
            p += 1
        return np.vstack(out)[:m]

    def _row(self, index: int) -> np.ndarray:
        p = int(np.searchsorted(self.offsets, index, side="right")) - 1
        i = int(index - self.offsets[p])
        return _gather(self.client, self.client.submit(_rows, self.parts[p], i, i + 1))[0]

    def _argmax(self, d2: list) -> int:
        """Global index of the largest value (the first on ties) of per-partition arrays."""
        best = _gather(self.client, [self.client.submit(_largest, f) for f in d2])
        p = max(range(len(best)), key=lambda q: (best[q][0], -q))
        return int(self.offsets[p] + best[p][1])

    def seed_centres(self, K: int, rng=None) -> np.ndarray:
        """:func:`~bayescheck.inference.engines.mixture_em.seed_centres` over the partitions.

        The same choices as on the whole matrix: the squared distances to the nearest chosen
        row stay on the workers; a k-means++ draw ``u * total`` is located first among the
        partitions' totals, then in the cumulative sum of that partition. Deterministic
        seeding (``rng=None``) takes the largest distance, the first on ties, in row order.
        """
        if rng is None:
            mean = np.sum(self._map(_column_sum), axis=0) / self.n
            d2 = self._submit(_d2, mean, None)
            first = self._argmax(d2)
        else:
            first = int(rng.integers(self.n))
        chosen = [self._row(first)]
        d2 = self._submit(_d2, chosen[0], None)
        for _ in range(1, K):
            if rng is None:
                nxt = self._argmax(d2)
            else:
                sums = np.array(_gather(self.client, [self.client.submit(_sum, f) for f in d2]))
                cum = np.cumsum(sums)
                if cum[-1] > 0:
                    u = rng.random() * cum[-1]
                    p = min(int(np.searchsorted(cum, u, side="right")), len(sums) - 1)
                    local = _gather(self.client, self.client.submit(_locate, d2[p],
                                                                    u - (cum[p] - sums[p])))
                    nxt = int(self.offsets[p] + local)
                else:  # every row equals a chosen centre
                    nxt = int(rng.integers(self.n))
            chosen.append(self._row(nxt))
            d2 = [self.client.submit(_d2, p, chosen[-1], f, pure=False)
                  for p, f in zip(self.parts, d2, strict=True)]
        return np.array(chosen)

    def kmeans(self, K: int, iterations: int = 50) -> np.ndarray:
        """The centres of :func:`~.engines.mixture_em.kmeans`, over the partitions."""
        from bayescheck.inference.engines.mixture_em import lloyd_centres, order_centres

        centres = self.seed_centres(K)
        for _ in range(iterations):
            futures = self._submit(_lloyd, centres)
            counts, sums = _gather(self.client, _tree(self.client, futures, _add_pairs))
            new = lloyd_centres(counts, sums, centres)
            if np.allclose(new, centres):
                break
            centres = new
        return order_centres(centres)
