# Builds one partition of a model cut into partitions (soc/partition.py) over the harness's
# Makefile: its variables and C++ builds, with partition.cpp as the harness, the partition's
# generated partition_ports.h (PARTITION_INCLUDE), Open MPI's flags where it is installed
# (MPI_CFLAGS, MPI_LDFLAGS) and EXIT_PARTITION, the leader's status when a partition dies.
#
#   make -f soc/sim_harness/partition.mk -C <build>/gateware/partitions<n> partition \
#        SOURCES="part1.v ..." OBJ_DIR=obj_dir_part1 PARTITION_INCLUDE=... EXIT_TIMEOUT=124 EXIT_PARTITION=125
#
# A rule of its own rather than knobs of the Makefile's `model`: the single model, which every
# result was measured on, is built by exactly the rule it was built by before the cut existed, so
# that those results stay provably the same hardware (scripts/experiments/restamp.py). Its
# Verilator options are the model rule's, without waveform, threads or profile (a cut model
# has none).

include $(dir $(lastword $(MAKEFILE_LIST)))Makefile

PARTITION_INCLUDE ?= $(error PARTITION_INCLUDE is not set: build the model through soc/simulation.py)
EXIT_PARTITION ?= $(error EXIT_PARTITION is not set: build the model through soc/simulation.py)
MPI_CFLAGS ?=
MPI_LDFLAGS ?=

.PHONY: partition
partition:
	$(VERILATOR) --cc $(SOURCES) --exe $(HARNESS_DIR)partition.cpp --top-module $(TOP) -Mdir $(OBJ_DIR) \
		$(VERILATOR_OPT) $(if $(HIER_BLOCKS),--hierarchical) \
		-Wno-fatal -Wno-WIDTH -Wno-COMBDLY -Wno-CASEINCOMPLETE -Wno-BLKANDNBLK -Wno-UNOPTFLAT \
		-Wno-MULTIDRIVEN -Wno-lint -Wno-style \
		--unroll-count 256 --output-split 20000 --output-split-cfuncs 2000 \
		-CFLAGS "-I$(PARTITION_INCLUDE) $(MPI_CFLAGS) -DSUBUTAI_EXIT_TIMEOUT=$(EXIT_TIMEOUT) -DSUBUTAI_EXIT_PARTITION=$(EXIT_PARTITION)" \
		-LDFLAGS "$(MPI_LDFLAGS)"
	$(HIER_MAKE)
	$(CXX_MAKE)
