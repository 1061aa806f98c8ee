# The two commands: `make demo` and `make test`. Both set everything up on a fresh machine.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DB ?= demo/kenning.db

.PHONY: setup demo test bench clean chromium

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

# The `kenning ui` browser tests drive Debian's chromium through Playwright (no browser download).
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian chromium for the browser tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else \
	    echo "make test: the browser tests need chromium — run: sudo apt-get install -y chromium" >&2; \
	  fi; }

test: $(STAMP) chromium
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
