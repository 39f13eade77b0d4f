#!/bin/bash
# A checkpoint written by another checkout's stream, resumed by this one.
#
#   benchmarks/resume_from_base.sh BASE_TREE SPEC [KILL_AFTER_BATCHES]
#
# BASE_TREE: another checkout's source (git archive main | tar -x -C /tmp/main-r8).
# Runs BASE's `bayescheck fit SPEC` with a checkpoint after every batch, SIGKILLs it after
# KILL_AFTER_BATCHES (default 12) progress lines, resumes with this tree's `fit --resume`,
# and compares the posterior with uninterrupted fits of both trees. Use a spec of 20 or more
# Parquet files (e.g. 30 files of bench_stream.py's data).
set -u
BASE=$(realpath "$1"); SPEC=$(realpath "$2"); KILL=${3:-12}
HERE=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-$HERE/.venv/bin/python}
[ -x "$PY" ] || PY=/work/main/.venv/bin/python
OUT=$(mktemp -d)
cd "$OUT"  # not a source tree: python -m would import reports from the working folder
BAYESCHECK_CHECKPOINT_SECONDS=0 PYTHONPATH=$BASE $PY -m reports fit "$SPEC" \
  --out "$OUT/killed" 2> "$OUT/killed.err" &
pid=$!
for _ in $(seq 400); do
  n=$(grep -c "^batch" "$OUT/killed.err" 2>/dev/null); [ "${n:-0}" -ge "$KILL" ] && break
  sleep 0.05
done
kill -9 $pid; wait $pid 2>/dev/null
echo "base killed after $(grep -c '^batch' "$OUT/killed.err") batches reported"
PYTHONPATH=$HERE $PY -m reports fit "$SPEC" --out "$OUT/killed" --resume --quiet > /dev/null \
  || { echo "resume failed"; exit 1; }
PYTHONPATH=$HERE $PY -m reports fit "$SPEC" --out "$OUT/here" --quiet > /dev/null
PYTHONPATH=$BASE $PY -m reports fit "$SPEC" --out "$OUT/base" --quiet > /dev/null
OUT=$OUT $PY - <<'PY'
import json, os
import numpy as np
out = os.environ["OUT"]
load = lambda d: json.load(open(f"{out}/{d}/posterior.json"))
r, h, b = load("killed"), load("here"), load("base")
print(f"resumed: {len(r['batches'])} batches")
for name, other in (("this tree, uninterrupted", h), ("base, uninterrupted", b)):
    a = np.array(r["parameters"]["theta"]["mean"])
    o = np.array(other["parameters"]["theta"]["mean"])
    print(f"resumed vs {name}: mean {np.max(np.abs(a - o) / np.abs(o)):.2e} relative at most, "
          f"log evidence {abs(r['log_evidence'] - other['log_evidence']) / abs(other['log_evidence']):.2e}")
PY
rm -rf "$OUT"
