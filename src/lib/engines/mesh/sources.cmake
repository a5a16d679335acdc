# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit-mesh's engine: schedules, verdicts, measured links.
rdmakit_lib_sources(
  mesh.c mesh_verdict.c mesh_link.c)
