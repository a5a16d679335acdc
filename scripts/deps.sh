# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Sourced by demo.sh and test.sh: install the Debian packages rdmakit needs to
# build and test, only those missing, with one apt-get update first. man-db,
# groff-base and bash-completion: the docs test reads the generated man pages
# with man -l and loads the completion as bash-completion does. python3-jsonschema:
# cli_json_failures validates the --json documents (and the mesh tests theirs).

RDMAKIT_BUILD_PACKAGES="cmake gcc make pkg-config libibverbs-dev librdmacm-dev libjson-c-dev
libcmocka-dev libssl-dev rdma-core ibverbs-providers ibverbs-utils rdmacm-utils iproute2 python3
python3-jsonschema man-db groff-base bash-completion"

# Only for the checks beyond the build: fuzzing (clang, libFuzzer), valgrind,
# systemd-analyze (systemd: the units of systemd/, test systemd_units) and
# udevadm (udev: their rule, in kernel_cli's guest, which runs the host's).
RDMAKIT_FUZZ_PACKAGES="clang libclang-rt-14-dev"
RDMAKIT_CHECK_PACKAGES="valgrind systemd udev $RDMAKIT_FUZZ_PACKAGES"

# Only for the kernel tests (tests/kernel): fio drives and verifies the rkblk
# disks in the guests (the guests run the host's binaries); linux-source holds
# the kernel's scripts/checkpatch.pl (kernel_style); sparse checks the module
# in kernel_build.
RDMAKIT_KERNEL_PACKAGES="fio linux-source sparse"

# Only for bench/vs-perftest.sh: the anchors (perftest, ucx_perftest) and the plots.
RDMAKIT_BENCH_PACKAGES="perftest ucx-utils gnuplot-nox python3"
# Only for bench/vs-perftest-cost.sh: the counting tools (instructions, system calls).
RDMAKIT_COST_PACKAGES="valgrind strace"

# Only for the mesh test bed (scripts/softroce mesh, tests/softroce/mesh.sh)
# and rdmakit-mesh: Open MPI, whose mpirun starts ranks across the guests.
RDMAKIT_MESH_PACKAGES="openmpi-bin libopenmpi-dev"

# Only for the Debian packages (debian/, tests/debian): dpkg-buildpackage,
# debhelper with DKMS, lintian; the rest of debian/control's Build-Depends is
# in RDMAKIT_BUILD_PACKAGES and RDMAKIT_MESH_PACKAGES.
RDMAKIT_DEB_PACKAGES="build-essential dpkg-dev debhelper dh-dkms dkms lintian"

# rk_install_packages PKG...: apt-get install those not installed yet.
rk_install_packages() {
	local missing=() p sudo=
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "installing: ${missing[*]}" >&2
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null
}

# rk_has_rdma_device: true when this host's kernel has a usable RDMA device,
# so everything can run natively instead of in the Soft-RoCE guest.
rk_has_rdma_device() {
	[ "${RDMAKIT_FORCE_SOFTROCE:-0}" = 1 ] && return 1
	compgen -G "/sys/class/infiniband/*" >/dev/null || return 1
	ibv_devices 2>/dev/null | awk 'NR > 2 { found = 1 } END { exit !found }'
}

# rk_build SRC BUILD [CMAKE ARGS...]: configure and build with warnings as errors.
rk_build() {
	cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRDMAKIT_WERROR=ON "${@:3}" >/dev/null
	cmake --build "$2" -j"$(nproc)"
}
