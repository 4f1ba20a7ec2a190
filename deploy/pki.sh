#!/usr/bin/env bash
# Creates the cluster's mutual-TLS PKI: a CA, the controller's certificate and
# one certificate per node-agent, each valid for the addresses it serves on.
#
#   deploy/pki.sh OUT_DIR node1=192.168.100.11 node2=192.168.100.12,node2.lab ...
#
# Writes OUT_DIR/ca.pem (+ ca.key, keep it offline), controller.pem/.key and
# <node>.pem/.key. Copy ca.pem, <node>.pem and <node>.key to each node's
# /etc/clustercert/ (as agent.pem/agent.key) and ca.pem, controller.pem and
# controller.key to the controller's. Existing files are never overwritten.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 OUT_DIR [NODE=ADDR[,ADDR...]]..." >&2
  exit 2
fi
out=$1; shift
days=${CLUSTERCERT_PKI_DAYS:-825}
mkdir -p "$out"
umask 077

if [ ! -f "$out/ca.pem" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$days" \
    -keyout "$out/ca.key" -out "$out/ca.pem" -subj "/CN=clustercert cluster CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    2>/dev/null
  echo "pki: created $out/ca.pem"
fi

# issue NAME SANS: a leaf certificate signed by the CA, usable as client and server.
issue() {
  local name=$1 sans=$2
  if [ -f "$out/$name.pem" ]; then
    echo "pki: $out/$name.pem exists, kept"
    return
  fi
  local ext
  ext=$(mktemp)
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=serverAuth,clientAuth"
    echo "subjectAltName=$sans"
  } >"$ext"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$out/$name.key" -out "$out/$name.csr" -subj "/CN=$name" 2>/dev/null
  openssl x509 -req -in "$out/$name.csr" -CA "$out/ca.pem" -CAkey "$out/ca.key" \
    -CAcreateserial -days "$days" -out "$out/$name.pem" -extfile "$ext" 2>/dev/null
  rm -f "$out/$name.csr" "$ext"
  echo "pki: created $out/$name.pem ($sans)"
}

san_list() {
  local result="" item
  IFS=',' read -ra items <<<"$1"
  for item in "${items[@]}"; do
    if [[ $item =~ ^[0-9.]+$ || $item == *:* ]]; then
      result+="${result:+,}IP:$item"
    else
      result+="${result:+,}DNS:$item"
    fi
  done
  echo "$result"
}

issue controller "DNS:controller"
for spec in "$@"; do
  name=${spec%%=*}
  addrs=${spec#*=}
  [ "$name" = "$spec" ] && addrs=$name
  issue "$name" "$(san_list "$addrs"),DNS:$name"
done
