# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The benchmark engine (rdmakit bench).
rdmakit_lib_sources(
  bench.c bench_setup.c bench_post.c bench_bw.c bench_lat.c bench_check.c bench_stats.c
  bench_soak.c bench_clients.c bench_plan.c perftest.c)
