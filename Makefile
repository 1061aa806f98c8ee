# The two commands: `make demo` and `make test`. Both set everything up on a fresh machine.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DB ?= demo/kenning.db

.PHONY: setup demo test bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first, pinned: 2.13.0 is the CPU build this machine carries; an unpinned torch pulls CUDA.
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[models,serve,plots,dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	rm -f $(DEMO_DB) $(DEMO_DB)-wal $(DEMO_DB)-shm
	HF_HUB_OFFLINE=1 $(BIN)/kenning demo --db $(DEMO_DB)

test: $(STAMP)
	@if [ -z "$$KENNING_LOCOMO" ] && [ ! -f ../shared/data/locomo/26.json ] && [ ! -f ../../shared/data/locomo/26.json ]; then \
	  echo "note: LoCoMo data not found, so the LoCoMo tests will be skipped. Get 26.json … 50.json from"; \
	  echo "  github.com/snap-research/locomo (data/locomo10.zip) into ../shared/data/locomo, or set KENNING_LOCOMO=DIR"; \
	  echo "  (docs/development.md, 'LoCoMo data')."; \
	fi
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/ingest.py
	HF_HUB_OFFLINE=1 $(BIN)/python benchmarks/models.py
	HF_HUB_OFFLINE=1 $(BIN)/python benchmarks/run.py search --sizes 100000,1000000
	HF_HUB_OFFLINE=1 $(BIN)/python benchmarks/run.py queries --sizes 100000,1000000

clean:
	rm -rf $(VENV) demo .pytest_cache
