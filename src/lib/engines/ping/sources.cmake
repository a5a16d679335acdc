# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The ping engines: native ping, rping and the ibv_*_pingpong protocols.
rdmakit_lib_sources(
  ping.c rping.c pingpong.c pingpong_srq.c)
