# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit doctor's checks: the host (modules, /dev, devices, limits), the
# ports, the firewall rules.
rdmakit_lib_sources(
  doctor.c doctor_host.c doctor_port.c doctor_firewall.c doctor_peer.c doctor_serve.c)
