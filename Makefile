# Subutai on LiteX: top-level commands. `make help` lists them.

PYTHON  := .venv/bin/python
TILES   ?= 4
APP     ?= hello
PYTEST_ARGS ?=
# Workers of make test and test-fast (pytest-xdist: a test file per worker at a time; auto: one
# per core). 1 runs the suite in one process.
TEST_JOBS ?= auto
TEST_PARALLEL = $(if $(filter 1,$(TEST_JOBS)),,-n $(TEST_JOBS) --dist loadfile)

BACKEND ?= subutai
# A program's command line, split as a shell splits it (quotes and all): the recipes take it from
# the environment ("$ARGS"), so that no quoting of the recipe's shell changes it.
ARGS    ?=
export ARGS
# C macros of the APP, e.g. DEFINES="STRESS_CYCLES=1000000".
DEFINES ?=
STRESS_CYCLES ?= 10000000
# Benchmarks: simulations run at once (workers of the local Dask cluster; default: the number of
# cores); layouts of each prodcons image.
JOBS    ?=
LAYOUTS ?= 8
# make bench also links every prodcons image the perturbed ways (the prodcons experiment's --perturb); 0: not.
PERTURB ?= 1
JOBS_ARG = $(if $(JOBS),--jobs $(JOBS)) $(EXPERIMENT_ARGS)
# The benchmarks: experiments of scripts/experiments/, run as campaigns through Dask (a local
# cluster of JOBS workers; EXPERIMENT_ARGS="--scheduler tcp://host:8786" or "--cluster slurm" for
# others; a sweep stopped and started again runs only what is missing).
EXPERIMENT_ARGS ?=
EXPERIMENT = $(PYTHON) -m scripts.experiments

# Zephyr: ZEPHYR_BASE when set (a west workspace's zephyr/), else the tree make zephyr-tree
# unpacked from ZEPHYR_ARCHIVE (a Zephyr 4.3.0 for machines without a network: CI's).
ZEPHYR_ARCHIVE ?= ../shared/zephyr/zephyr-4.3.0-ci.tar.xz
ZEPHYR_TREE    := build/zephyr-ci
ifeq ($(ZEPHYR_BASE),)
ifneq ($(wildcard $(ZEPHYR_TREE)/.unpacked),)
export ZEPHYR_BASE := $(CURDIR)/$(ZEPHYR_TREE)/zephyr
endif
endif

# FPGA boards (boards/<board>.py); BOARD_ARGS: more options of the board target.
BOARD   ?= radiona_ulx3s
BOARDS  := radiona_ulx3s colorlight_i5 digilent_arty
BOARD_ARGS ?=

.PHONY: help setup lint format test test-slow test-fast sim stress bench bench-rwlock bench-switch bench-apps bench-apps-64 bench-mem simspeed simprofile figures bench-noc bench-fsm resources bitstream \
	test-bitstream board-sim zephyr-tree zephyr-check zephyr-sim zephyr-test zephyr-twister zephyr-bench bench-multi bench-tidon bench-chan clean

help:
	@echo "make setup                 install apt packages and the Python venv (.venv)"
	@echo "make lint                  ruff's checks and format of the Python and mypy's types of soc/ and gateware/"
	@echo "                           (pyproject.toml), clang-format's of the"
	@echo "                           C (.clang-format, Zephyr's style) and cppcheck's warnings"
	@echo "                           (.cppcheck-suppressions: what is not a defect); .ci/run runs them first"
	@echo "make format                rewrite the Python and the C to that style"
	@echo "make test                  run the test suite (pytest; builds Verilator models once), but"
	@echo "                           the tests marked slow or zephyr (pytest -m 'not slow and not zephyr';"
	@echo "                           CI's suite), a file per core at a time (TEST_JOBS=auto; 1: one process)"
	@echo "make test-slow             the tests marked slow: 8 to 64 tiles, long randomized runs (the long"
	@echo "                           Zephyr runs too where a Zephyr tree is configured)"
	@echo "make test-fast             the quick loop: the suite without the slow, bitstream and"
	@echo "                           Zephyr tests (pytest -m 'not slow and not bitstream and not zephyr')"
	@echo "make sim TILES=4 APP=hello build the SoC model and run a firmware app in Verilator"
	@echo "                           (PROGRAM_DIR=path: a PThreads program of one's own, any directory,"
	@echo "                           with exactly ARGS='...' as a shell splits them)"
	@echo "                           (BACKEND=subutai|swonly: PThreads backend of the app;"
	@echo "                           APP=x264 ARGS=\"-i test\": a benchmark program and its arguments;"
	@echo "                           DEFINES=\"NAME=VALUE ...\": C macros of the app)"
	@echo "make stress TILES=16       syncstress: random synchronization and NoC traffic from every core"
	@echo "                           for STRESS_CYCLES cycles (default 10 M), checked; a core left"
	@echo "                           waiting (lost wake-up, deadlock) ends it at the cycle limit"
	@echo "make bench                 prodcons, SW-only vs Subutai on 2, 4, 8, 16 tiles: results/prodcons.*"
	@echo "                           and rwbench (read-write locks, 10 and 50 per cent writes, 8 and 16 tiles):"
	@echo "                           results/rwlock.* (make bench-rwlock alone)"
	@echo "make bench-switch          switching threads on one core, bare metal beside Zephyr: results/switch.*"
	@echo "                           (LAYOUTS=8: layouts per image for the spread column; PERTURB=1:"
	@echo "                           the perturbed links of the library too, the link spread column;"
	@echo "                           JOBS=N: simulations at once, default the number of cores)"
	@echo "make bench-apps            benchmark programs (streamcluster, bodytrack, x264, radix), both backends"
	@echo "                           on 1, 2, 4, 8, 16 tiles: speed-up, scaling, sync events: results/apps.*"
	@echo "make bench-apps-64         the same on 32 and 64 tiles, added to results/apps.* (hours)"
	@echo "make bench-mem             memory bandwidth and refill latency, 1 to 16 tiles, shared bus vs banks"
	@echo "make simspeed              simulated cycles per second for 1 to 64 tiles (benchmark;"
	@echo "                           SIMSPEED_ARGS=--rebuild: build time and peak memory too)"
	@echo "make simprofile            where the 64-tile model's time goes, by part of a tile (needs perf;"
	@echo "                           SIMPROFILE_ARGS='--tiles 16 --app synctest' ...)"
	@echo "make figures               docs/benchmarks.md's figures table, from results/*.csv"
	@echo "make bench-noc             NoC zero-load latency, cycles per hop, saturation, SoC ping-pong"
	@echo "make bench-fsm             cycles of every Subutai-HW operation, best and worst case"
	@echo "make resources             LUT/FF/BRAM of one router and one NI from a yosys synthesis"
	@echo "make bitstream BOARD=radiona_ulx3s TILES=4"
	@echo "                           FPGA build of a board (BOARD: $(BOARDS)):"
	@echo "                           ECP5 bitstream (yosys + nextpnr through YoWASP) and its report"
	@echo "                           results/bitstream_<board>_<X>x<Y>.* + results/boards.*; Xilinx:"
	@echo "                           the Vivado project (Vivado runs it); BOARD_ARGS=\"--device ...\""
	@echo "make test-bitstream        the test that builds a 1-tile ULX3S bitstream (slow, see docs/boards.md)"
	@echo "make board-sim BOARD=radiona_ulx3s TILES=4 APP=prodcons"
	@echo "                           the board's own SoC (BIOS, SDRAM controller and L2 with a model of"
	@echo "                           its SDRAM chip) in Verilator: serial boot of APP through a"
	@echo "                           pseudo-terminal with scripts/board_run.py, exit status APP's"
	@echo "                           (BACKEND=..., ARGS=\"...\" of a program, BOARD_ARGS=\"--capture F\")"
	@echo "make zephyr-sim TILES=4 ZAPP=pthreadtest"
	@echo "                           Zephyr on every tile: build a zephyr-app application and run it in"
	@echo "                           Verilator (ZAPP=program PROGRAM=x264 ARGS=\"-i test\"; BACKEND=...;"
	@echo "                           PROGRAM_DIR=path: a PThreads program of one's own)"
	@echo "make zephyr-tree           unpack the Zephyr 4.3.0 of ZEPHYR_ARCHIVE (default ../shared/zephyr/)"
	@echo "                           into build/zephyr-ci once; the Zephyr targets use it when ZEPHYR_BASE"
	@echo "                           is not set"
	@echo "make zephyr-check          CI's Zephyr suite: every application and configuration compiled, a"
	@echo "                           representative set run (pytest -m 'zephyr and not slow'; needs a tree)"
	@echo "make zephyr-test           the whole Zephyr suite, the slow tests too (pytest -m zephyr)"
	@echo "make zephyr-twister TILES=2  Zephyr's twister over zephyr-app/apps on the simulated board"
	@echo "                           (TWISTER_ARGS=\"-s subutai.pthreadtest.swonly\" and other options)"
	@echo "make zephyr-bench          prodcons and the benchmark programs under Zephyr, both backends:"
	@echo "                           results/zephyr_prodcons.* and results/zephyr_apps.*"
	@echo "make bench-multi           several applications sharing the cores under Zephyr (TPDS'21 VII):"
	@echo "                           OAT, RR, CSA, rr-core and rr-steal, TS 1 and 10 ms, both backends,"
	@echo "                           16 tiles: results/multi_16.* (MULTI_ARGS=\"--tiles 8\": results/multi.*)"
	@echo "make bench-tidon           Tidon's time-donating barrier beside spin, block and spin-then-block,"
	@echo "                           those two also with the migrating baseline (+steal; seed 002):"
	@echo "                           streamcluster/bodytrack with ep, both backends, 8 tiles:"
	@echo "                           results/tidon.* (TIDON_ARGS=\"--workloads bodytrack\" and others)"
	@echo "make bench-chan            channels through the NoC (seed 004): latency and throughput of the"
	@echo "                           four implementations, the farm on 16 tiles: results/chan*"
	@echo "make clean                 remove build/ (models, firmware, generated headers)"

setup:
	bash scripts/setup.sh

$(PYTHON):
	@echo "error: no virtual environment: run 'make setup' first" >&2; exit 1

# The C of firmware/ and zephyr-app/ in Zephyr's style (.clang-format); tests/data holds inputs.
C_SOURCES = $(shell git ls-files '*.c' '*.h' | grep -v '^tests/data/')

lint: | $(PYTHON)
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/mypy
	@command -v clang-format >/dev/null || { echo "error: clang-format not found: install the Debian package clang-format (make setup)" >&2; exit 1; }
	@echo "clang-format --dry-run -Werror <the C of firmware/ and zephyr-app/>"
	@clang-format --dry-run -Werror $(C_SOURCES)
	@command -v cppcheck >/dev/null || { echo "error: cppcheck not found: install the Debian package cppcheck (make setup)" >&2; exit 1; }
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability --std=c11 --inline-suppr \
	  --suppressions-list=.cppcheck-suppressions --suppress=missingInclude --suppress=missingIncludeSystem --suppress=toomanyconfigs \
	  -I firmware/include -I firmware/port/baremetal -I firmware/lib/pthread -I zephyr-app/include firmware zephyr-app

# Rewrites the Python and the C in place to the house style (what make lint checks).
format: | $(PYTHON)
	.venv/bin/ruff format .
	clang-format -i $(C_SOURCES)

# CI's suite: everything but the tests marked slow (they take longer than the suite's 15 minutes
# on a 2-core machine: meshes of 8 to 64 tiles, long randomized runs); make test-slow runs those.
# Most of the suite is single-threaded simulations: its files run side by side, one per core
# (models and images are built once, under a lock, whichever worker comes first).
test: | $(PYTHON)
	$(PYTHON) -m pytest -q -rs -m "not slow and not zephyr" $(TEST_PARALLEL) $(PYTEST_ARGS)

test-slow: | $(PYTHON)
	$(PYTHON) -m pytest -q -rs -m slow $(PYTEST_ARGS)

# The edit-and-check loop: everything but the tests marked slow, bitstream or zephyr (pytest.ini).
test-fast: | $(PYTHON)
	$(PYTHON) -m pytest -q -rs -m "not slow and not bitstream and not zephyr" $(TEST_PARALLEL) $(PYTEST_ARGS)

sim: | $(PYTHON)
	$(PYTHON) boards/sim.py --tiles $(TILES) $(if $(PROGRAM_DIR),--program-dir "$(PROGRAM_DIR)",--app $(APP)) \
	  --backend $(BACKEND) --args="$$ARGS" \
	  $(foreach d,$(DEFINES),--define $(d))

stress: | $(PYTHON)
	$(PYTHON) boards/sim.py --tiles $(TILES) --app syncstress --define STRESS_CYCLES=$(STRESS_CYCLES) \
	  --max-cycles $$(( $(STRESS_CYCLES) * 4 ))

bench: | $(PYTHON)
	$(EXPERIMENT) prodcons --layouts $(LAYOUTS) $(if $(filter 1,$(PERTURB)),--perturb) $(JOBS_ARG)
	$(EXPERIMENT) rwlock $(JOBS_ARG)

# The read-write lock benchmark alone (the second half of make bench).
bench-rwlock: | $(PYTHON)
	$(EXPERIMENT) rwlock $(JOBS_ARG)

# Switching threads on one core, bare metal's user-level threads beside Zephyr's (with ZEPHYR_BASE).
bench-switch: | $(PYTHON)
	$(EXPERIMENT) switch $(JOBS_ARG)

# The memory system before banking (--mem-banks 0, results/apps_mem0.*) beside the default, and
# each program on 8 tiles across the perturbed links of the library (results/apps_links.*).
bench-apps: | $(PYTHON)
	$(EXPERIMENT) apps $(JOBS_ARG)
	$(EXPERIMENT) apps --perturb --tiles 8 $(JOBS_ARG)
	$(EXPERIMENT) apps --mem-banks 0 $(JOBS_ARG)

# The programs on the paper's 32 and 64 cores, added to results/apps.* (hours: a 64-tile model
# runs a few thousand cycles per second; each model on SIM_THREADS host cores: with the tile
# module, two threads run 32 tiles at 0.76x of one and 64 tiles at 1.15x, so one thread a model
# and a model a core finishes first).
SIM_THREADS ?= 1
bench-apps-64: | $(PYTHON)
	$(EXPERIMENT) apps --tiles 32 64 --threads $(SIM_THREADS) --append $(JOBS_ARG)

bench-mem: | $(PYTHON)
	$(EXPERIMENT) mem $(JOBS_ARG)

figures: | $(PYTHON)
	$(PYTHON) scripts/figures.py

SIMSPEED_ARGS ?=
simspeed: | $(PYTHON)
	$(EXPERIMENT) simspeed $(SIMSPEED_ARGS)

simprofile: | $(PYTHON)
	$(PYTHON) scripts/simprofile.py $(SIMPROFILE_ARGS)

bench-noc: | $(PYTHON)
	$(EXPERIMENT) noc $(JOBS_ARG)

bench-fsm: | $(PYTHON)
	$(EXPERIMENT) fsm

resources: | $(PYTHON)
	$(PYTHON) scripts/noc_resources.py

bitstream: | $(PYTHON)
	@case " $(BOARDS) " in *" $(BOARD) "*) ;; \
	  *) echo "error: unknown BOARD=$(BOARD) (boards: $(BOARDS))" >&2; exit 2;; esac
	@status=0; $(PYTHON) boards/$(BOARD).py --tiles $(TILES) --build $(BOARD_ARGS) || status=$$?; \
	  if [ $$status -eq 0 ] || [ $$status -eq 3 ]; then \
	    $(PYTHON) scripts/board_report.py --board $(BOARD) --tiles $(TILES) || status=$$?; fi; \
	  exit $$status

board-sim: | $(PYTHON)
	@case " $(BOARDS) " in *" $(BOARD) "*) ;; \
	  *) echo "error: unknown BOARD=$(BOARD) (boards: $(BOARDS))" >&2; exit 2;; esac
	$(PYTHON) boards/$(BOARD).py --tiles $(TILES) --sim --app $(APP) --backend $(BACKEND) \
	  $(if $(ARGS),--app-args="$$ARGS") $(BOARD_ARGS)

test-bitstream: | $(PYTHON)
	SUBUTAI_BITSTREAM_TEST=1 $(PYTHON) -m pytest -q -m bitstream $(PYTEST_ARGS)

ZAPP    ?= pthreadtest
PROGRAM ?=

zephyr-sim: | $(PYTHON)
	$(PYTHON) boards/zephyr.py --tiles $(TILES) --app $(if $(PROGRAM_DIR),program,$(ZAPP)) \
	  --backend $(BACKEND) $(if $(PROGRAM),--program $(PROGRAM) --args="$$ARGS") \
	  $(if $(PROGRAM_DIR),--program-dir "$(PROGRAM_DIR)" --args="$$ARGS")

# Unpacked once: a stamp names the archive it came from (a newer archive is unpacked again).
zephyr-tree:
	@test -f "$(ZEPHYR_ARCHIVE)" || { echo "error: no Zephyr archive $(ZEPHYR_ARCHIVE): set ZEPHYR_ARCHIVE, or ZEPHYR_BASE to a Zephyr tree (zephyr-app/README.md)" >&2; exit 1; }
	@stamp="$$(ls -l --time-style=+%s "$(ZEPHYR_ARCHIVE)" | awk '{print $$5, $$6}') $(notdir $(ZEPHYR_ARCHIVE))"; \
	  if [ "$$(cat $(ZEPHYR_TREE)/.unpacked 2>/dev/null)" = "$$stamp" ]; then \
	    echo "[zephyr] $(ZEPHYR_TREE)/zephyr: unpacked already"; \
	  else \
	    echo "[zephyr] unpacking $(ZEPHYR_ARCHIVE) into $(ZEPHYR_TREE)/"; \
	    rm -rf $(ZEPHYR_TREE) && mkdir -p $(ZEPHYR_TREE) && tar xJf "$(ZEPHYR_ARCHIVE)" -C $(ZEPHYR_TREE) && \
	    test -f $(ZEPHYR_TREE)/zephyr/share/zephyr-package/cmake/ZephyrConfig.cmake && \
	    echo "$$stamp" > $(ZEPHYR_TREE)/.unpacked || { echo "error: $(ZEPHYR_ARCHIVE) did not unpack to a Zephyr tree (zephyr/)" >&2; exit 1; }; \
	  fi

# The Zephyr tests refuse to be skipped here: a suite that ran nothing must not pass.
ZEPHYR_REQUIRED = @test -n "$(ZEPHYR_BASE)" || { echo "error: ZEPHYR_BASE is not set and $(ZEPHYR_TREE) holds no tree: run make zephyr-tree (or set ZEPHYR_BASE)" >&2; exit 1; }

# CI's Zephyr suite (.ci/run): every application and configuration compiled
# (tests/test_zephyr_builds.py) and a representative set run; make zephyr-test adds the rest.
zephyr-check: | $(PYTHON)
	$(ZEPHYR_REQUIRED)
	$(PYTHON) -m pytest -q -rs -m "zephyr and not slow" $(TEST_PARALLEL) $(PYTEST_ARGS)

zephyr-test: | $(PYTHON)
	$(ZEPHYR_REQUIRED)
	$(PYTHON) -m pytest -q -rs -m zephyr $(TEST_PARALLEL) $(PYTEST_ARGS)

# Zephyr's twister over zephyr-app/apps (sample.yaml, testcase.yaml) on the simulated board.
zephyr-twister: | $(PYTHON)
	$(PYTHON) scripts/zephyr_twister.py --tiles $(TILES) $(TWISTER_ARGS)

# Zephyr programs up to 8 tiles: a 16-tile Zephyr run takes minutes per program.
zephyr-bench: | $(PYTHON)
	$(EXPERIMENT) prodcons --os zephyr $(JOBS_ARG)
	$(EXPERIMENT) apps --os zephyr --tiles 1 2 4 8 16 $(JOBS_ARG)

bench-multi: | $(PYTHON)
	$(EXPERIMENT) multi $(MULTI_ARGS) $(JOBS_ARG)

bench-tidon: | $(PYTHON)
	$(EXPERIMENT) tidon $(TIDON_ARGS) $(JOBS_ARG)

# Channels through the NoC (seed 004): latency and throughput per implementation, and the farm;
# CHAN_ARGS narrows it (e.g. CHAN_ARGS="--tiles 8 --sizes 32 --types int").
bench-chan: | $(PYTHON)
	$(EXPERIMENT) chan $(CHAN_ARGS) $(JOBS_ARG)

clean:
	rm -rf build
