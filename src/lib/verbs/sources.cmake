# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# verbs: libibverbs objects and their names; calls base only.
rdmakit_lib_sources(
  device.c link.c port.c gid.c mem.c dm.c region.c cq.c qp.c srq.c ops.c traffic.c
  counters.c counters_watch.c status.c)
