# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The remote-memory server and the rkblk user-space side.
rdmakit_lib_sources(
  memproto.c memserver.c memserver_session.c blk.c)
