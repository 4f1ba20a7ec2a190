#!/usr/bin/env bash
# Creates the cluster's mutual-TLS PKI: a CA, the controller's certificate and
# one certificate per node-agent, each valid for the addresses it serves on.
#
#   deploy/pki.sh OUT_DIR [--controller NAME]... [NODE=ADDR[,ADDR...]]...
#   deploy/pki.sh pki node1=192.168.100.11 node2=192.168.100.12,node2.lab
#   deploy/pki.sh pki --controller controller-2027     # rotation: a second controller
#
# Writes OUT_DIR/ca.pem (+ ca.key, keep it offline), controller.pem/.key (or
# one NAME.pem/.key per --controller NAME) and <node>.pem/.key. Copy ca.pem,
# <node>.pem and <node>.key to each node's /etc/clustercert/ (as
# agent.pem/agent.key) and ca.pem and the controller's pair to the controller.
# Existing files are never overwritten.
#
# Every certificate names its role in a URI SAN, urn:clustercert:role:<role>,
# and can do only that role's half of the handshake: the controller's is a
# client certificate (EKU clientAuth), a node's is a server certificate (EKU
# serverAuth). An agent admits only callers whose role it was told to admit
# (node-agent --allow-roles, default controller), so a node's key, stolen or
# not, cannot drive another node's agent.
set -euo pipefail

usage() {
  echo "usage: $0 OUT_DIR [--controller NAME]... [NODE=ADDR[,ADDR...]]..." >&2
  exit 2
}
die() {
  echo "pki: $*" >&2
  exit 1
}

[ $# -ge 1 ] || usage
out=$1
shift
[[ $out == -* ]] && usage
days=${CLUSTERCERT_PKI_DAYS:-825}
role_prefix=urn:clustercert:role:

controllers=()
nodes=()
while [ $# -gt 0 ]; do
  case $1 in
    --controller)
      [ $# -ge 2 ] || die "--controller needs a NAME, e.g. --controller controller-2027"
      controllers+=("$2")
      shift 2
      ;;
    --controller=*)
      controllers+=("${1#--controller=}")
      shift
      ;;
    -*) usage ;;
    *)
      nodes+=("$1")
      shift
      ;;
  esac
done
# The first run makes the controller's certificate; asking for named ones
# (rotation) makes only those, so a retired controller.pem is not re-made.
[ ${#controllers[@]} -gt 0 ] || controllers=(controller)

# Names become file names and the certificate's CN, addresses become SANs in
# an openssl extension file: a ',' or a newline there would add a SAN (a role
# URI) nobody asked for, so only plain names and addresses get through.
check_name() {
  local what=$1 name=$2
  [[ $name =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$ && $name != ca ]] ||
    die "the $what name '$name' is not usable: use letters, digits, '.', '_' and '-' (not 'ca'), as the plan names it"
}
for name in "${controllers[@]}"; do check_name controller "$name"; done
for spec in "${nodes[@]}"; do
  name=${spec%%=*}
  check_name node "$name"
  for controller in "${controllers[@]}"; do
    [ "$name" != "$controller" ] || die "'$name' is asked for as both a node and a controller: give them different names"
  done
  if [ "$name" != "$spec" ]; then
    IFS=',' read -ra items <<<"${spec#*=}"
    [ ${#items[@]} -gt 0 ] || die "node $name: no address after '=': give e.g. $name=192.168.100.11"
    for item in "${items[@]}"; do
      [[ $item =~ ^([0-9.]+|[0-9A-Fa-f:]+|[A-Za-z0-9][A-Za-z0-9.-]*)$ ]] ||
        die "node $name: '$item' is neither an IP address nor a DNS name: write NODE=ADDR[,ADDR...], e.g. $name=192.168.100.11,$name.lab"
    done
  fi
done

mkdir -p "$out"
umask 077

if [ ! -f "$out/ca.pem" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$days" \
    -keyout "$out/ca.key" -out "$out/ca.pem" -subj "/CN=clustercert cluster CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    2>/dev/null
  echo "pki: created $out/ca.pem"
fi
[ -f "$out/ca.key" ] || die "$out/ca.pem exists but $out/ca.key does not: put the CA key back (it was meant to be kept offline) to issue certificates"

# role_of FILE: the role in the certificate's URI SAN, or nothing.
role_of() {
  openssl x509 -in "$1" -noout -ext subjectAltName 2>/dev/null |
    grep -o "URI:${role_prefix}[a-z0-9-]*" | head -n1 | sed "s/^URI:$role_prefix//" || true
}

# issue NAME ROLE EKU SANS: a leaf certificate signed by the CA for one role.
issue() {
  local name=$1 role=$2 eku=$3 sans=$4
  if [ -f "$out/$name.pem" ]; then
    local had
    had=$(role_of "$out/$name.pem")
    if [ -z "$had" ]; then
      echo "pki: $out/$name.pem exists, kept; it names no role (an older pki.sh made it) and agents refuse it as a client:" \
        "move $name.pem and $name.key aside and run this again to re-issue it" >&2
    elif [ "$had" != "$role" ]; then
      die "$out/$name.pem exists with role $had, not $role: choose another name"
    else
      echo "pki: $out/$name.pem exists, kept"
    fi
    return
  fi
  local ext
  ext=$(mktemp)
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature"
    echo "extendedKeyUsage=$eku"
    echo "subjectAltName=$sans"
  } >"$ext"
  local log
  log=$(mktemp)
  if ! openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$out/$name.key" -out "$out/$name.csr" -subj "/CN=$name" 2>"$log" ||
    ! openssl x509 -req -in "$out/$name.csr" -CA "$out/ca.pem" -CAkey "$out/ca.key" \
      -CAcreateserial -days "$days" -out "$out/$name.pem" -extfile "$ext" 2>>"$log"; then
    # No half-made pair is left behind for a later run to keep.
    rm -f "$out/$name.key" "$out/$name.csr" "$out/$name.pem" "$ext"
    cat "$log" >&2
    rm -f "$log"
    die "openssl could not issue $out/$name.pem (its output is above): check that $out/ca.key matches $out/ca.pem"
  fi
  rm -f "$out/$name.csr" "$ext" "$log"
  echo "pki: created $out/$name.pem (role $role, $eku, $sans)"
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

for name in "${controllers[@]}"; do
  issue "$name" controller clientAuth "URI:${role_prefix}controller"
done
for spec in "${nodes[@]}"; do
  name=${spec%%=*}
  addrs=${spec#*=}
  [ "$name" = "$spec" ] && addrs=$name
  issue "$name" node serverAuth "$(san_list "$addrs"),DNS:$name,URI:${role_prefix}node"
done
