# Subutai on LiteX: top-level commands. `make help` lists them.

PYTHON  := .venv/bin/python
TILES   ?= 4
APP     ?= hello
PYTEST_ARGS ?=

BACKEND ?= subutai
ARGS    ?=

.PHONY: help setup test sim bench bench-apps simspeed bench-noc bench-fsm resources clean

help:
	@echo "make setup                 install apt packages and the Python venv (.venv)"
	@echo "make test                  run the test suite (pytest; builds Verilator models once)"
	@echo "make sim TILES=4 APP=hello build the SoC model and run a firmware app in Verilator"
	@echo "                           (BACKEND=subutai|swonly: PThreads backend of the app;"
	@echo "                           APP=x264 ARGS=\"-i test\": a benchmark program and its arguments)"
	@echo "make bench                 prodcons, SW-only vs Subutai on 2, 4, 8 tiles: results/prodcons.*"
	@echo "make bench-apps            benchmark programs (streamcluster, bodytrack, x264, radix), both backends"
	@echo "                           on 1, 2, 4, 8 tiles: speed-up, scaling, sync events: results/apps.*"
	@echo "make simspeed              simulated cycles per second for 1, 2, 4, 8 tiles (benchmark)"
	@echo "make bench-noc             NoC zero-load latency, cycles per hop, saturation, SoC ping-pong"
	@echo "make bench-fsm             cycles of every Subutai-HW operation, best and worst case"
	@echo "make resources             LUT/FF/BRAM of one router and one NI from a yosys synthesis"
	@echo "make clean                 remove build/ (models, firmware, generated headers)"

setup:
	bash scripts/setup.sh

$(PYTHON):
	@echo "error: no virtual environment: run 'make setup' first" >&2; exit 1

test: | $(PYTHON)
	$(PYTHON) -m pytest tests -q $(PYTEST_ARGS)

sim: | $(PYTHON)
	$(PYTHON) boards/sim.py --tiles $(TILES) --app $(APP) --backend $(BACKEND) --args "$(ARGS)"

bench: | $(PYTHON)
	$(PYTHON) scripts/bench.py

bench-apps: | $(PYTHON)
	$(PYTHON) scripts/bench_apps.py

simspeed: | $(PYTHON)
	$(PYTHON) scripts/simspeed.py

bench-noc: | $(PYTHON)
	$(PYTHON) scripts/bench_noc.py

bench-fsm: | $(PYTHON)
	$(PYTHON) scripts/bench_fsm.py

resources: | $(PYTHON)
	$(PYTHON) scripts/noc_resources.py

clean:
	rm -rf build
