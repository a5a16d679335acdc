# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# conn: two processes' exchange (wire, control channel, TCP, RDMA CM).
rdmakit_lib_sources(
  wire.c ctl.c tcp.c ctl_qp.c cm.c cm_self.c conn.c clients.c auth.c)
