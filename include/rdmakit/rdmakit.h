/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: everything. Include this, link with -lrdmakit (pkg-config rdmakit). */
#ifndef RDMAKIT_H
#define RDMAKIT_H

#include <rdmakit/version.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/device.h>
#include <rdmakit/port.h>
#include <rdmakit/gid.h>
#include <rdmakit/mem.h>
#include <rdmakit/dm.h>
#include <rdmakit/region.h>
#include <rdmakit/cq.h>
#include <rdmakit/qp.h>
#include <rdmakit/traffic.h>
#include <rdmakit/srq.h>
#include <rdmakit/ops.h>
#include <rdmakit/status.h>
#include <rdmakit/counters.h>
#include <rdmakit/units.h>
#include <rdmakit/gate.h>
#include <rdmakit/stop.h>
#include <rdmakit/pattern.h>
#include <rdmakit/wire.h>
#include <rdmakit/ctl.h>
#include <rdmakit/tcp.h>
#include <rdmakit/ctl_qp.h>
#include <rdmakit/cm.h>
#include <rdmakit/conn.h>
#include <rdmakit/clients.h>
#include <rdmakit/bench.h>
#include <rdmakit/bench_stats.h>
#include <rdmakit/qp_states.h>
#include <rdmakit/loopback.h>
#include <rdmakit/share.h>
#include <rdmakit/stats.h>
#include <rdmakit/ping.h>
#include <rdmakit/perftest.h>
#include <rdmakit/rping.h>
#include <rdmakit/pingpong.h>
#include <rdmakit/auth.h>
#include <rdmakit/memserver.h>
#include <rdmakit/blk.h>
#include <rdmakit/ud.h>
#include <rdmakit/rcflow.h>
#include <rdmakit/mesh.h>
#include <rdmakit/mesh_link.h>
#include <rdmakit/doctor.h>

#endif
