# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The share engine: several processes on one device.
rdmakit_lib_sources(
  share.c share_proc.c share_ways.c)
