# SPDX-License-Identifier: GPL-2.0
# Parts of `make bench` on their own: drainstat beside bpftrace (bench/peers) and
# the forced-drain storm at its highest rate (bench/scale). bench/run runs both;
# BENCH_NO_PEERS=1 or BENCH_NO_SCALE=1 leaves one out.
.PHONY: bench-peers bench-scale

bench-peers: drainstat workloads
	bench/peers

bench-scale: drainstat workloads
	bench/scale
