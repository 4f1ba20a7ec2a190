#!/usr/bin/env bash
# The demo: installs what is missing, builds only what it runs (the agent,
# the controller and the gloo worker: not the tests, which scripts/test.sh
# builds), starts 4 node-agents on loopback (this host's real /sys and
# /proc), runs `controller run plans/local.yaml`, stops the agents and prints
# where the certificate is.
#
#   scripts/demo.sh --lab   instead boots the soft-RoCE lab (4 qemu VMs with
#                           rdma_rxe, root only; docs/lab.md), certifies it
#                           with real verbs (plans/lab-softroce.yaml) and
#                           tears it down: about 10 minutes more.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  "" | --lab) ;;
  *)
    echo "demo: unknown argument '$1'; use no argument (loopback agents) or --lab (the soft-RoCE lab)" >&2
    exit 2
    ;;
esac

start=$SECONDS
bash scripts/build.sh --only node-agent controller collective-worker-gloo
echo "demo: built in $((SECONDS - start)) s"

if [ "${1:-}" = --lab ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "demo: --lab boots VMs in a network namespace and needs root; rerun with sudo" >&2
    exit 2
  fi
  set +e
  bash deploy/lab/softroce-lab.sh run -- build/bin/controller run plans/lab-softroce.yaml --out certs
  rc=$?
  set -e
  latest=$(ls -td certs/softroce-lab-*/ 2>/dev/null | head -1)
  [ -n "$latest" ] && echo "demo: certificate written to ${latest}certificate.json (exit $rc)"
  exit $rc
fi

run_dir=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$run_dir"
}
trap cleanup EXIT

for i in 1 2 3 4; do
  port=$((17070 + i))
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "demo: 127.0.0.1:$port is already in use; stop whatever listens there (ss -ltnp | grep $port) and rerun" >&2
    exit 3
  fi
  build/bin/node-agent --listen "127.0.0.1:$port" --node-name "local$i" --insecure \
    --port-file "$run_dir/local$i.port" 2>"$run_dir/local$i.log" &
  pids+=($!)
done
for i in 1 2 3 4; do
  for _ in $(seq 100); do [ -s "$run_dir/local$i.port" ] && break; sleep 0.05; done
  if [ ! -s "$run_dir/local$i.port" ]; then
    echo "demo: agent local$i did not start:" >&2
    cat "$run_dir/local$i.log" >&2
    exit 3
  fi
done
echo "demo: 4 agents listening on 127.0.0.1:17071-17074"

# plans/local.yaml signs with certs/demo-signing.key: made once, kept.
if [ ! -f certs/demo-signing.key ]; then
  mkdir -p certs
  build/bin/controller keygen --out certs/demo-signing.key >/dev/null
  echo "demo: made the signing key certs/demo-signing.key (public key certs/demo-signing.key.pub)"
fi

set +e
build/bin/controller run plans/local.yaml --out certs
rc=$?
set -e
latest=$(ls -td certs/*/ 2>/dev/null | head -1)
if [ -n "$latest" ]; then
  echo "demo: certificate written to ${latest}certificate.json (exit $rc)"
  echo "demo: reports ${latest}report.html, ${latest}report.md, ${latest}junit.xml"
  echo "demo: check it with: build/bin/controller verify ${latest}certificate.json --pubkey certs/demo-signing.key.pub"
fi
exit $rc
