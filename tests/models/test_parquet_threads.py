"""Parquet columns are decoded without pyarrow's thread pool on a stream's reading threads.

There the cores are already busy with other batches and the pool only adds hand-offs; read
in the calling thread, a file's columns are decoded in parallel as before. The values are
the same either way.
"""

import threading

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from models.data import numeric_columns, read_batch


def _file(tmp_path):
    rng = np.random.default_rng(3)
    table = pa.table({f"x{j}": rng.standard_normal(500) for j in range(4)})
    path = tmp_path / "part0.parquet"
    pq.write_table(table, path)
    return path, np.column_stack([table.column(j).to_numpy() for j in range(4)])


def test_pool_only_in_the_calling_thread(tmp_path, monkeypatch):
    path, expected = _file(tmp_path)
    calls = []
    read = pq.ParquetFile.read

    def spy(self, *args, **kwargs):
        calls.append(kwargs.get("use_threads", True))
        return read(self, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read", spy)
    columns = [f"x{j}" for j in range(4)]
    here = numeric_columns(read_batch(path), columns)
    there = {}
    worker = threading.Thread(target=lambda: there.setdefault(
        "out", numeric_columns(read_batch(path), columns)))
    worker.start()
    worker.join()
    assert calls == [True, False]
    np.testing.assert_array_equal(here, expected)
    np.testing.assert_array_equal(there["out"], expected)
