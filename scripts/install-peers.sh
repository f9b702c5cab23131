#!/usr/bin/env bash
# Installs the reference tools the tests compare lossless against (and chromium, the headless
# browser the HTML report's structure test opens it in). Needs root. Idempotent.
set -euo pipefail
need=()
for pair in tshark:tshark tcpdump:tcpdump lldpad:lldpad lldpd:lldpd ip:iproute2 python3:python3 tcpreplay:tcpreplay chromium:chromium; do
  cmd=${pair%%:*}; pkg=${pair#*:}
  command -v "$cmd" >/dev/null 2>&1 || need+=("$pkg")
done
# the kernel's UAPI headers, which the dcbnl/ethtool constants are checked against
[ -f /usr/include/linux/dcbnl.h ] || need+=(linux-libc-dev)
# `lossless sim --mpi` (cargo feature `mpi`): OpenMPI, and libclang-dev for the mpi crate's bindgen
# (its libclang.so and the clang headers; libclang1 alone, a runtime library, is not enough)
command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
command -v mpicc >/dev/null 2>&1 || need+=(libopenmpi-dev)
ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1 || need+=(libclang-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "== installing ${need[*]}"
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if ! python3 -c "import scapy" 2>/dev/null; then
  echo "== installing scapy"
  python3 -m pip install -q scapy || python3 -m pip install -q --break-system-packages scapy
fi
echo "== peers: $(tshark --version | head -1); scapy $(python3 -c 'import scapy; print(scapy.VERSION)'); $(mpirun --version 2>&1 | head -1)"
