"""EM's progress in a checkpoint, so that an interrupted cluster fit resumes where it was.

A mixture's EM has no per-partition statistic to keep: every iteration is a map-reduce over
all the rows. What an interruption loses is the iterations, so that is what is kept: the
starting states of the runs (the k-means++ seeds and their first M step), the runs that
finished, and the parameters and objective history of the run in progress after its last
M step. :class:`EMJournal` is the ``journal`` of
:func:`bayescheck.inference.engines.mixture_em.fit_em`;
it writes ``DIR/checkpoint.npz`` (atomically) on the stream's interval
(``BAYESCHECK_CHECKPOINT_SECONDS``), after every finished run and when the fit stops
(:meth:`EMJournal.flush`).

Resuming means: the rows are read onto the workers again (they were in the workers' memory),
every file must be the one the checkpoint's iterations used (same files, same content, same
order: a changed, missing or new file is refused by name, since the iterations so far are
not those of other data), and EM continues from the saved parameters, performing the same
operations on the same numbers as an uninterrupted fit, so the result is the same.
"""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path

import numpy as np
from bayescheck.data.remote import is_url
from bayescheck.inference.engines.mixture_em import EMState
from bayescheck.inference.scale.streaming import (
    COMMON_KEYS,
    BatchRecord,
    check_digest,
    check_meta,
    checkpoint_interval,
    content_digest,
    read_checkpoint,
    resumable,
    write_atomically,
)
from bayescheck.models.errors import DataError, SpecError

__all__ = ["EMJournal"]

#: ``state_type`` of an EM checkpoint: another family's resume refuses it by this name.
STATE_TYPE = "EMProgress"
# 2: the fingerprints of CSV files are taken with their line endings normalised.
VERSION = 2
#: The meta keys of an EM checkpoint, and their JSON types.
EM_KEYS = {**COMMON_KEYS, "starts": int, "runs": list, "current": bool}


def _real(name: str) -> str:
    return name if is_url(name) else os.path.realpath(name)


def _put(arrays: dict, prefix: str, state: EMState) -> None:
    arrays[f"{prefix}_weights"] = state.weights
    arrays[f"{prefix}_means"] = state.means
    arrays[f"{prefix}_chol"] = state.chol


def _get(npz, prefix: str) -> EMState:
    return EMState(npz[f"{prefix}_weights"], npz[f"{prefix}_means"], npz[f"{prefix}_chol"])


class EMJournal:
    """Saves and loads EM's progress for :func:`~bayescheck.inference.engines.mixture_em.fit_em`.

    Parameters
    ----------
    path : pathlib.Path
        The checkpoint file.
    model_key : str
        :func:`bayescheck.inference.scale.streaming.model_key` of the spec.
    records : list of inference.streaming.BatchRecord
        The files whose rows the fit uses, in order, with their fingerprints.
    resume : bool
        :meth:`load` returns the saved progress (else None: a fresh fit).
    seconds : float, optional
        Seconds between checkpoints within a run (default
        :func:`bayescheck.inference.scale.streaming.checkpoint_interval`).
    """

    def __init__(self, path: Path, model_key: str, records: list[BatchRecord], *,
                 resume: bool = False, seconds: float | None = None):
        self.path = Path(path)
        self.model_key = model_key
        self.records = list(records)
        self.resume = resume
        self.seconds = checkpoint_interval() if seconds is None else seconds
        self.pending = None
        self.last_save = time.monotonic()

    def load(self):
        """The saved ``(starts, runs, current)``, or None when not resuming.

        None too when there is no checkpoint (the run stopped before its first one; said on
        stderr): the fit starts from the beginning.

        Raises
        ------
        SpecError
            An unreadable or malformed checkpoint, or one of another model, prior or
            version.
        DataError
            A file the checkpoint's iterations used that changed or is gone, or a file they
            did not use.
        """
        if not self.resume or not resumable(self.path):
            return None
        meta, arrays = read_checkpoint(self.path)
        if not isinstance(meta, dict) or meta.get("state_type") != STATE_TYPE or \
                meta.get("version") != VERSION:
            raise SpecError("checkpoint was written for another model or version",
                            path=self.path)
        check_meta(self.path, meta, EM_KEYS)
        for j, run in enumerate(meta["runs"]):
            if not (isinstance(run, dict) and isinstance(run.get("loglik"), (int, float))
                    and type(run.get("n_iter")) is int
                    and isinstance(run.get("converged"), bool)):
                raise SpecError(f"malformed checkpoint: expected a table of loglik (a "
                                f"number), n_iter (a whole number) and converged (true or "
                                f"false), got {run!r:.80}; start afresh without --resume",
                                path=self.path, key=f"runs[{j}]")
        if meta.get("model_key") != self.model_key:
            raise SpecError("checkpoint was written with another model, prior or columns; "
                            "start afresh without --resume", path=self.path)
        check_digest(self.path, meta, arrays)
        self._check_files([BatchRecord(**r) for r in meta["records"]])
        try:
            starts = [_get(arrays, f"start{i}") for i in range(meta["starts"])]
            runs = [(_get(arrays, f"run{j}"), float(r["loglik"]), arrays[f"run{j}_history"],
                     int(r["n_iter"]), bool(r["converged"]))
                    for j, r in enumerate(meta["runs"])]
            current = ((_get(arrays, "current"), arrays["current_history"].tolist())
                       if meta["current"] else None)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise SpecError(f"malformed checkpoint: its arrays do not match its starts, runs "
                            f"and current state ({type(exc).__name__}: {exc}); start afresh "
                            f"without --resume", path=self.path) from None
        return starts, runs, current

    def _check_files(self, saved: list[BatchRecord]) -> None:
        now = {_real(r.name): r for r in self.records}
        for r in saved:
            current = now.get(_real(r.name))
            if current is None:
                raise DataError("absorbed into the checkpoint but no longer matched by [data] "
                                "path; start afresh without --resume", path=r.name)
            if current.fingerprint != r.fingerprint:
                raise DataError("content changed since this batch was absorbed into the "
                                "checkpoint; start afresh without --resume", path=current.name)
        used = {_real(r.name) for r in saved}
        for r in self.records:
            if _real(r.name) not in used:
                raise DataError("not in the checkpoint: EM's iterations so far used the "
                                "other files' rows only, so a resumed EM cannot take a new "
                                "file; start afresh without --resume", path=r.name)

    def save(self, starts, runs, current) -> None:
        """Keep this progress; write it when the interval has passed or a run finished."""
        self.pending = (starts, runs, current)
        if current is None or time.monotonic() - self.last_save >= self.seconds:
            self.flush()

    def flush(self) -> None:
        """Write the progress not yet written (at the end, or when the fit stops)."""
        if self.pending is None:
            return
        starts, runs, current = self.pending
        arrays: dict[str, np.ndarray] = {}
        for i, state in enumerate(starts):
            _put(arrays, f"start{i}", state)
        for j, (state, _, history, _, _) in enumerate(runs):
            _put(arrays, f"run{j}", state)
            arrays[f"run{j}_history"] = np.asarray(history, dtype=np.float64)
        if current is not None:
            _put(arrays, "current", current[0])
            arrays["current_history"] = np.asarray(current[1], dtype=np.float64)
        meta = {
            "version": VERSION, "state_type": STATE_TYPE, "model_key": self.model_key,
            "records": [{"name": r.name, "fingerprint": r.fingerprint, "rows": r.rows}
                        for r in self.records],
            "starts": len(starts),
            "runs": [{"loglik": float(ll), "n_iter": int(n), "converged": bool(c)}
                     for _, ll, _, n, c in runs],
            "current": current is not None,
        }
        meta["digest"] = content_digest(meta, arrays)
        buffer = io.BytesIO()
        np.savez(buffer, meta=np.array(json.dumps(meta)), **arrays)
        write_atomically(self.path, buffer.getvalue())
        self.pending, self.last_save = None, time.monotonic()
