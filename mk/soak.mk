# make soak: drainstat's Prometheus export at a 1 s interval for SOAK_SECONDS
# (default an hour) under a continuous drain workload, checked every second
# (tests/soak/run; root). Not part of make check, which runs a 2-minute version.
SOAK_SECONDS ?= 3600

.PHONY: soak
soak: drainstat workloads
	tests/soak/run -t $(SOAK_SECONDS)
