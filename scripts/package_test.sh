#!/usr/bin/env bash
# Packages a build, installs the packages on this machine, runs them from
# their installed paths and purges them, checking that nothing stays behind:
#
#   scripts/package_test.sh BUILD_DIR     (as root; after scripts/build.sh
#                                          --only node-agent controller collective-worker-gloo)
#
# Steps: cpack -G DEB in BUILD_DIR; the packages' contents (no key, the
# conffile declared); dpkg -i of clustercert-agent and clustercert-controller;
# what postinst did (user, /etc/clustercert, the unit left disabled without
# certificates); systemd-analyze verify of the installed unit; the installed
# /usr/sbin/node-agent started insecurely on 127.0.0.1 (a free port), asked
# by the installed controller for its version, inventory and a 1-node gloo
# sweep (which starts /usr/lib/clustercert/collective-worker-gloo beside
# the agent); dpkg -P of both; then every file and directory the packages
# made is gone, /etc/clustercert and systemd's state are as they were.
#
# Exits 0 with "skipped: <reason>" when not root or a tool is missing, except
# under CI=true, where that fails. The machine is left as it was found, on
# failure too (an EXIT trap stops the agent, purges the packages and removes
# the clustercert user if this run created it). Each step prints its time.
set -Eeuo pipefail
# An unexpected failure names its line instead of ending the run silently.
trap 'echo "package_test: FAIL: line $LINENO: $BASH_COMMAND exited $?" >&2' ERR

usage() {
  echo "usage: $0 BUILD_DIR (a configured and built build directory, e.g. build)" >&2
  exit 2
}
[ $# -eq 1 ] || usage
build_dir=$(cd "$1" 2>/dev/null && pwd) || {
  echo "package_test: no build directory '$1': configure and build it first (bash scripts/build.sh --only node-agent controller collective-worker-gloo)" >&2
  exit 2
}

# skip_or_fail KEY REASON: skipped here (exit 0: a stage of scripts/test.sh,
# not a ctest entry), a failure in CI, which must run it (docs/testing.md).
source "$(dirname "$0")/../tests/support/skip.sh"
SKIP_TEST_NAME=package_test
SKIP_EXIT_CODE=0
[ "$(id -u)" -eq 0 ] ||
  skip_or_fail root "not root (dpkg -i and -P need root): run it as root on a disposable machine"
for tool in dpkg dpkg-deb dpkg-shlibdeps cpack file systemd-analyze adduser; do
  command -v "$tool" >/dev/null 2>&1 ||
    skip_or_fail packaging-tools "$tool is missing: apt-get install dpkg-dev cmake file systemd adduser"
done

fail() {
  echo "package_test: FAIL: $*" >&2
  exit 1
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
script_start=$(now_ms)
# step NAME COMMAND...: runs one step and prints its wall time.
step() {
  local name=$1 start
  shift
  start=$(now_ms)
  echo "package_test: step '$name'"
  "$@"
  local ms=$(($(now_ms) - start))
  printf 'package_test: step %s took %d.%03d s\n' "'$name'" $((ms / 1000)) $((ms % 1000))
}

packages=(clustercert-agent clustercert-controller)
bin="$build_dir/bin"
[ -f "$build_dir/CPackConfig.cmake" ] ||
  fail "$build_dir has no CPackConfig.cmake: it was configured before cmake/packaging.cmake existed; run cmake -S . -B $build_dir (scripts/build.sh does)"
for built in node-agent controller collective-worker-gloo; do
  [ -x "$bin/$built" ] ||
    fail "$bin/$built is not built: bash scripts/build.sh --only node-agent controller collective-worker-gloo"
done
for package in "${packages[@]}"; do
  if status=$(dpkg-query -W -f='${Status} ${Version}' "$package" 2>/dev/null) &&
    [[ $status != *not-installed* ]]; then
    fail "$package is already on this machine ($status): this test installs and purges its own build, so it would remove it; purge it first (dpkg -P $package) or run the test on another machine"
  fi
done

work=$(mktemp -d /tmp/package_test.XXXXXX)
agent_pid=""
user_existed=0
getent passwd clustercert >/dev/null && user_existed=1
group_existed=0
getent group clustercert >/dev/null && group_existed=1

# What the packages or their unit may touch outside their own files.
snapshot() {
  {
    echo "## /etc/clustercert"
    if [ -e /etc/clustercert ]; then
      stat -c '%n %U:%G %a' /etc/clustercert
      find /etc/clustercert -mindepth 1 -printf '%P %u:%g %m %s\n' | sort
    else
      echo absent
    fi
    echo "## systemd"
    find /etc/systemd/system /var/lib/systemd/deb-systemd-helper-enabled \
      /var/lib/systemd/deb-systemd-helper-masked -name '*clustercert*' 2>/dev/null | sort || true
    echo "## cache"
    ls -d /var/cache/clustercert /var/cache/private/clustercert 2>/dev/null || true
    echo "## users"
    getent passwd clustercert || true
    getent group clustercert || true
  } >"$1"
}
snapshot "$work/before.state"

cleanup() {
  local status=$?
  trap - EXIT
  set +e
  if [ -n "$agent_pid" ] && kill -0 "$agent_pid" 2>/dev/null; then
    kill -TERM "$agent_pid"
    wait "$agent_pid" 2>/dev/null
  fi
  local package
  for package in "${packages[@]}"; do
    if dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -qv not-installed; then
      echo "package_test: cleanup: purging $package"
      dpkg_locked -P "$package" >/dev/null
    fi
  done
  if [ "$user_existed" = 0 ] && getent passwd clustercert >/dev/null; then
    echo "package_test: cleanup: removing the clustercert user this run's install created"
    userdel clustercert
  fi
  if [ "$group_existed" = 0 ] && getent group clustercert >/dev/null; then
    groupdel clustercert
  fi
  rm -rf "$work"
  if [ "$status" -eq 0 ]; then
    local ms=$(($(now_ms) - script_start))
    printf 'package_test: ok (%d.%03d s)\n' $((ms / 1000)) $((ms % 1000))
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# dpkg ARGS...: dpkg, waiting up to 2 minutes for another apt or dpkg
# (another job's install-deps.sh) to release its lock.
dpkg_locked() {
  for _ in $(seq 60); do
    if dpkg "$@" 2>"$work/dpkg.err"; then
      cat "$work/dpkg.err" >&2
      return 0
    fi
    grep -q 'lock' "$work/dpkg.err" || break
    sleep 2
  done
  cat "$work/dpkg.err" >&2
  return 1
}

make_packages() {
  rm -f "$build_dir"/packages/clustercert-*.deb
  (cd "$build_dir" && cpack -G DEB) >"$work/cpack.log" 2>&1 ||
    { cat "$work/cpack.log" >&2; fail "cpack -G DEB in $build_dir failed (its output is above)"; }
  local package
  for package in "${packages[@]}"; do
    debs=("$build_dir"/packages/"$package"_*.deb)
    [ -f "${debs[0]}" ] || fail "cpack made no $build_dir/packages/${package}_*.deb: cmake/packaging.cmake's component for it is missing"
    printf '  %-60s %8d bytes\n' "${debs[0]#"$build_dir"/}" "$(stat -c %s "${debs[0]}")"
  done
}

check_contents() {
  agent_deb=$(echo "$build_dir"/packages/clustercert-agent_*.deb)
  controller_deb=$(echo "$build_dir"/packages/clustercert-controller_*.deb)
  version=$(dpkg-deb -f "$agent_deb" Version)
  local deb
  for deb in "$agent_deb" "$controller_deb"; do
    dpkg-deb -c "$deb" | awk '{print $6}' >"$work/contents"
    if grep -Eq '\.(key|pem)$' "$work/contents"; then
      fail "$deb ships a key or certificate ($(grep -E '\.(key|pem)$' "$work/contents" | tr '\n' ' ')): keys are the site's, made by deploy/pki.sh; drop them from cmake/packaging.cmake"
    fi
    # A file the install would silently overwrite, and the purge then
    # delete; directories that exist now are shared with the system
    # (/usr/bin, /etc/default) and stay after the purge.
    local path
    while read -r path; do
      path=${path#.}
      path=${path%/}
      [ -n "$path" ] || continue
      if [ -d "$path" ]; then
        echo "$path" >>"$work/preexisting.dirs"
      elif [ -e "$path" ] || [ -L "$path" ]; then
        fail "$path is already on this machine and $(basename "$deb") would replace it: remove it (a hand install?) or run the test elsewhere"
      fi
    done <"$work/contents"
  done
  dpkg-deb --ctrl-tarfile "$agent_deb" | tar -xO ./conffiles >"$work/conffiles"
  grep -qx /etc/default/clustercert-agent "$work/conffiles" ||
    fail "$agent_deb does not declare /etc/default/clustercert-agent a conffile: check deploy/debian/agent/conffiles"
  echo "  version $version; agent workers: $(dpkg-deb -c "$agent_deb" | grep -o 'collective-worker-[a-z]*' | tr '\n' ' ')"
}

install_packages() {
  dpkg_locked -i "$agent_deb" "$controller_deb" >"$work/install.log" ||
    { cat "$work/install.log" >&2; fail "dpkg -i of both packages failed (above): a missing dependency is installed with apt-get install ./$(basename "$agent_deb")"; }
  sed 's/^/  dpkg: /' "$work/install.log" | grep -i 'clustercert-agent:' || true
  dpkg-query -L "${packages[@]}" | sort -u >"$work/installed.list"
  # Only what did not exist before the install must go with the purge.
  touch "$work/preexisting.dirs"
  while read -r path; do
    if [ -d "$path" ]; then
      grep -qx -- "$path" "$work/preexisting.dirs" || echo "$path"
    else
      echo "$path"
    fi
  done <"$work/installed.list" >"$work/owned.list"
  echo "  $(wc -l <"$work/installed.list") paths installed, $(wc -l <"$work/owned.list") of them the packages' own"
}

check_postinst() {
  getent passwd clustercert >/dev/null ||
    fail "postinst made no clustercert user, which the unit's User= names: check deploy/debian/agent/postinst"
  local mode
  mode=$(stat -c '%U:%G %a' /etc/clustercert)
  [ "$mode" = "root:clustercert 750" ] ||
    fail "/etc/clustercert is $mode after the install, expected root:clustercert 750 (deploy/debian/agent/postinst)"
  # No certificate here: the unit must not be enabled (it would fail to start).
  if [ ! -f /etc/clustercert/agent.pem ] &&
    [ -e /etc/systemd/system/multi-user.target.wants/clustercert-agent.service ]; then
    fail "postinst enabled clustercert-agent.service on a node without /etc/clustercert/agent.pem: it must wait for the certificate"
  fi
  echo "  user clustercert, /etc/clustercert $mode, unit not enabled (no certificate)"
}

verify_unit() {
  local unit=/lib/systemd/system/clustercert-agent.service
  [ -f "$unit" ] || fail "the agent package installed no $unit"
  grep -q '^ExecStart=/usr/sbin/node-agent ' "$unit" ||
    fail "$unit's ExecStart is not the installed /usr/sbin/node-agent: fix deploy/clustercert-agent.service"
  systemd-analyze verify --man=no "$unit" >"$work/verify" 2>&1 || true
  if [ -s "$work/verify" ]; then
    cat "$work/verify" >&2
    fail "systemd-analyze verify $unit warns (above): systemd would ignore or refuse those lines"
  fi
  echo "  systemd-analyze verify $unit: silent"
}

run_installed() {
  [ -L /usr/sbin/node-agent ] || fail "/usr/sbin/node-agent is not the package's symlink"
  /usr/sbin/node-agent --listen 127.0.0.1:0 --insecure --node-name pkgtest --log-level warn \
    --port-file "$work/agent.port" 2>"$work/agent.log" &
  agent_pid=$!
  for _ in $(seq 200); do
    [ -s "$work/agent.port" ] && break
    kill -0 "$agent_pid" 2>/dev/null || break
    sleep 0.05
  done
  [ -s "$work/agent.port" ] ||
    { cat "$work/agent.log" >&2; fail "the installed /usr/sbin/node-agent did not start on 127.0.0.1 within 10 s (its log is above)"; }
  local exe
  exe=$(readlink "/proc/$agent_pid/exe")
  [ "$exe" = /usr/lib/clustercert/node-agent ] ||
    fail "the agent runs from $exe, not /usr/lib/clustercert/node-agent: the workers are looked for beside it"
  local port
  port=$(cat "$work/agent.port")
  echo "  /usr/sbin/node-agent -> $exe, serving 127.0.0.1:$port"

  local said
  said=$(/usr/bin/controller version)
  [[ $said == "clustercert controller $version "* ]] ||
    fail "/usr/bin/controller version says '$said', expected version $version (the package's)"
  echo "  $said"

  # One node, this agent; a 1-node gloo sweep of two ranks, small sizes.
  cat >"$work/plan.yaml" <<EOF
cluster: package-test
fabric: {type: ethernet, link_rate_gbps: 1, min_netdev_mtu: 1500}
nodes:
  - {name: pkgtest, agent: "127.0.0.1:$port", data_ip: 127.0.0.1, gpus: 0}
expect: {nvidia_peermem: false, ntp_synced: false, ofed: false, clock_offset_ms: 5, management_separate: false}
agents: {insecure: true, connect_timeout_s: 5, call_timeout_s: 30, retries: 1}
collectives:
  backend: gloo
  transport: tcp
  ranks_per_node: 2
  scopes: [1-node]
  sizes: {min: 8, max: 64K, factor: 16}
  warmup_iters: 1
  iters: 2
  min_busbw_gbytes: 0.0001
  timeout_s: 60
certificate: {out: $work/certs}
EOF
  /usr/bin/controller inventory "$work/plan.yaml" >"$work/inventory.out" 2>"$work/inventory.err" ||
    { cat "$work/inventory.out" "$work/inventory.err" >&2; fail "controller inventory against the installed agent failed (above)"; }
  grep -q pkgtest "$work/inventory.out" ||
    { cat "$work/inventory.out" >&2; fail "controller inventory printed no row for node pkgtest (above)"; }
  echo "  controller inventory: node pkgtest answered"

  local rc=0
  /usr/bin/controller run "$work/plan.yaml" --out "$work/certs" --verbose >"$work/run.out" 2>"$work/run.err" ||
    rc=$?
  local certificate
  certificate=$(find "$work/certs" -name certificate.json | head -n1)
  [ -n "$certificate" ] ||
    { cat "$work/run.out" "$work/run.err" >&2; fail "controller run (exit $rc) wrote no certificate.json (its output is above)"; }
  # The sweep ran: the workers were found beside the installed agent.
  if grep -q 'collective-worker' "$work/run.out" "$work/run.err" "$certificate"; then
    grep -h 'collective-worker' "$work/run.out" "$work/run.err" "$certificate" | head -n 5 >&2
    fail "the 1-node gloo sweep could not start its workers (above): the package must put collective-worker-gloo beside /usr/lib/clustercert/node-agent"
  fi
  [ "$rc" -eq 0 ] ||
    { cat "$work/run.out" "$work/run.err" >&2; fail "controller run of the 1-node gloo plan exited $rc, expected 0 (certified); its output is above"; }
  local ran
  ran=$(grep -E '^ *collectives\.run +1-node +PASS' "$work/run.out") ||
    { cat "$work/run.out" >&2; fail "controller run certified without a passing collectives.run row for the 1-node sweep (its tables are above)"; }
  echo "  controller run: certified; ${ran#"${ran%%[! ]*}"}"

  kill -TERM "$agent_pid"
  wait "$agent_pid" || fail "the installed agent exited non-zero on SIGTERM (its log: $(tail -n 3 "$work/agent.log"))"
  agent_pid=""
}

purge_packages() {
  dpkg_locked -P "${packages[@]}" >"$work/purge.log" ||
    { cat "$work/purge.log" >&2; fail "dpkg -P ${packages[*]} failed (above)"; }
}

check_purged() {
  local left=()
  while read -r path; do
    if [ -e "$path" ] || [ -L "$path" ]; then left+=("$path"); fi
  done <"$work/owned.list"
  [ ${#left[@]} -eq 0 ] ||
    fail "after dpkg -P these paths the packages made remain: ${left[*]}; the postrm (deploy/debian/agent/postrm) or the install rules leave them"
  # The package keeps its user on purge (Debian's practice); this run
  # removes it in its cleanup when it made it, so compare without users.
  snapshot "$work/after.state"
  if ! diff <(sed '/^## users/,$d' "$work/before.state") <(sed '/^## users/,$d' "$work/after.state") \
    >"$work/state.diff"; then
    cat "$work/state.diff" >&2
    fail "after dpkg -P, /etc/clustercert, systemd's unit state or the agent's cache differ from before the install (diff above, < before, > after)"
  fi
  echo "  $(wc -l <"$work/owned.list") paths gone; /etc/clustercert, systemd state and cache as before"
}

step cpack make_packages
step contents check_contents
step "dpkg -i" install_packages
step postinst check_postinst
step "systemd-analyze verify" verify_unit
step "run installed" run_installed
step "dpkg -P" purge_packages
step "nothing left" check_purged
