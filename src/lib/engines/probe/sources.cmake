# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Probes of one device or connection: loopback, RC steps, UD, QP states.
rdmakit_lib_sources(
  loopback.c rcflow.c ud.c qp_states.c qp_states_spec.c)
