#!/usr/bin/env bash
# Installs the Debian packages clustercert builds and tests with, or the
# packages named as arguments (deploy/lab/softroce-lab.sh passes its own).
# Idempotent: packages already present are left alone, and apt is only
# consulted when something is missing.
set -euo pipefail

build_packages=(
  build-essential cmake ninja-build pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libyaml-dev libspdlog-dev libfmt-dev libgloo-dev
  libibverbs-dev librdmacm-dev ibverbs-providers
  libssl-dev openssl
  # The uplink test's HTTP target (parallel range GETs); nginx serves as the
  # storage target in its tests.
  libcurl4-openssl-dev nginx
  libgtest-dev libgmock-dev libbenchmark-dev
  # The flood test builds its gzip bomb with zlib (libcurl's -dev pulls it in too).
  zlib1g-dev
  # The sanitizer builds (build-asan, build-tsan) are clang builds: libFuzzer
  # and the sanitizer runtimes come with libclang-rt-14-dev, llvm puts
  # llvm-symbolizer on PATH so reports name files and lines, lld links them.
  clang libclang-rt-14-dev llvm lld
  # scripts/check_format.sh, the first stage of scripts/test.sh, and
  # scripts/check_tidy.sh (clang-tidy on the lines a change adds).
  clang-format clang-tidy
  iproute2 procps
  # bench/scale.sh reads the controller's wall time and peak RSS from GNU time.
  time
  # deploy/check_unit_security.sh rates the shipped unit with
  # systemd-analyze security --offline (systemd 252).
  systemd
  # The report test opens report.html in headless Chromium; the certificate
  # schema test validates certificates with python3-jsonschema.
  chromium fonts-liberation python3-jsonschema
  # promtool checks clustercert.prom and the alert rules (docs/prometheus.md).
  prometheus
  # cpack -G DEB's dependency scan (dpkg-shlibdeps) reads the binaries' type
  # with file(1); scripts/package_test.sh installs what it makes.
  file
  # tests/integration/frr_lab_test.sh runs zebra and bgpd (FRR 8.4) in
  # network namespaces: two hosts and a leaf peering BGP unnumbered.
  frr
  # tests/integration/slurm_test.sh starts a real slurmctld and slurmd
  # (Slurm 22.05) authenticated by its own munged; the controller's
  # --slurm-nodes / --slurm-drain call scontrol (docs/slurm.md).
  slurm-wlm munge
  # tests/integration/netns_uplink_test.cc runs one agent under libfaketime,
  # its clock really 500 ms ahead, for clock.offset's fail path.
  faketime
  # tests/integration/cabling_lab_test.sh runs lldpd (1.0.16) on each leaf
  # switch namespace; the agents there receive its LLDP frames.
  lldpd
  # tests/integration/mpirun_launcher_test.cc launches collectives.launcher:
  # mpirun's ranks through Debian's OpenMPI mpirun (4.1) on localhost.
  openmpi-bin
)
if [ $# -gt 0 ]; then packages=("$@"); else packages=("${build_packages[@]}"); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
# The package starts its own lldpd where systemd runs, which would announce
# this host on its real NICs: the tests run theirs inside namespaces only.
if [[ " ${missing[*]} " == *" lldpd "* ]] && command -v systemctl >/dev/null &&
  systemctl is-active --quiet lldpd 2>/dev/null; then
  $SUDO systemctl disable --now lldpd >/dev/null 2>&1 || true
fi
