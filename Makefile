# `make demo`, `make test`, `make bench`: each creates .venv on first use.
# Python >= 3.12 is needed: PYTHON=/path/to/python3.12 overrides the search below.

VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

FIND_PYTHON = for c in "$$PYTHON" python3.12 python3.13 python3.14 python3 \
	  "$$(pyenv root 2>/dev/null)"/versions/3.1[2-9]*/bin/python3; do \
	  [ -n "$$c" ] || continue; \
	  if command -v "$$c" >/dev/null 2>&1 && "$$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then \
	    command -v "$$c"; exit 0; fi; \
	done; \
	echo "bayescheck needs Python >= 3.12: tried \$$PYTHON, python3.12, python3.13, python3.14, python3 and pyenv's 3.12+; set PYTHON=/path/to/python3.12" >&2; exit 1

.PHONY: demo test test-fast bench clean hygiene

$(STAMP): pyproject.toml setup.py
	@py=$$($(FIND_PYTHON)) || exit 1; \
	 echo "creating $(VENV) with $$py"; \
	 [ -x $(VPY) ] || "$$py" -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet -e ".[test,bench]"
	@touch $(STAMP)

# demo-output is the demo's own folder (as for `make clean`): removed first, so that no file
# of an older demo, nor one an older bayescheck wrote without a manifest, is left or refused
demo: $(STAMP)
	rm -rf demo-output
	$(VENV)/bin/bayescheck demo --out demo-output
	@echo "open demo-output/index.html"

# Test files run in parallel, one worker per core (pytest-xdist); --dist loadfile keeps a test
# file on one worker, so a module's NUTS fixture runs once.
PYTEST_JOBS ?= auto

# the whole suite (what CI runs): about 9 minutes on the idle 2-core machine, most of it
# compiling NUTS models
# Public APIs only: ../shared/hygiene.py lists every place that leans on another package's
# insides (private names, monkeypatching, sys.modules, native code at run time); it must find 0.
# A clone outside the workplace has no ../shared: the check is skipped with a note.
HYGIENE := ../shared/hygiene.py
hygiene:
	@if [ -f $(HYGIENE) ]; then python3 $(HYGIENE) --quiet models inference reports bayescheck data; \
	 else echo "note: $(HYGIENE) is absent (a clone outside the workplace): public-API check skipped"; fi

test: $(STAMP) hygiene
	$(VENV)/bin/ruff check .
	$(VPY) -m pytest -q -n $(PYTEST_JOBS) --dist loadfile --durations=15

# the inner loop: engines, specs, CLI errors; no NUTS, nothing marked slow (about a minute)
test-fast: $(STAMP) hygiene
	$(VENV)/bin/ruff check .
	$(VPY) -m pytest -q -n $(PYTEST_JOBS) --dist loadfile -m "not nuts and not slow"

# every peer comparison, one table: benchmarks/RESULTS.md (BENCH_ARGS=--quick: a few minutes,
# bench-output/RESULTS-quick.md; BENCH_ARGS="--baseline OTHER/.venv/bin/bayescheck": before/after)
bench: $(STAMP)
	$(VPY) benchmarks/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) demo-output bench-output
