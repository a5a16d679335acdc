# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# base: libc only, no verbs or CM headers (docs/architecture.md).
rdmakit_lib_sources(
  error.c log.c version.c units.c stats.c pattern.c stop.c gate.c hint.c)
