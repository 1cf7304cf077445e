#!/usr/bin/env bash
# The two-replica setup of compose.yaml started by hand on one machine, with
# Debian's packages: a PostgreSQL of its own (apt-get install postgresql), two
# `mcphost serve` replicas on 127.0.0.1:7781 and :7782 reading the same
# deploy/mcphost.hcl, and nginx (apt-get install nginx) as the round-robin
# load balancer on 127.0.0.1:8080. It runs in the foreground; Ctrl-C stops
# everything. State goes to $MCPHOST_CLUSTER_DIR (default /tmp/mcphost-cluster).
#
#   ALICE_TOKEN="$(openssl rand -hex 32)" bash deploy/local-cluster.sh
#
# Then open http://localhost:8080/#token=$ALICE_TOKEN, or point an MCP client
# at http://localhost:8080/mcp with "Authorization: Bearer $ALICE_TOKEN".
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${MCPHOST_CLUSTER_DIR:-/tmp/mcphost-cluster}"
: "${ALICE_TOKEN:?set ALICE_TOKEN (openssl rand -hex 32)}"
mkdir -p "$dir"
chmod 755 "$dir"

pgbin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)"
as_pg=()
if [[ "$(id -u)" == 0 ]]; then as_pg=(runuser -u postgres --); fi
if [[ ! -d "$dir/pg" ]]; then
	mkdir -p "$dir/pg" && { [[ -z "${as_pg[*]}" ]] || chown postgres "$dir/pg"; }
	"${as_pg[@]}" "$pgbin/initdb" -D "$dir/pg/data" -A trust -U mcphost >/dev/null
fi
"${as_pg[@]}" "$pgbin/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/server.log" -w start \
	-o "-c listen_addresses=127.0.0.1 -p 5433 -k $dir/pg" >/dev/null
"${as_pg[@]}" "$pgbin/createdb" -h 127.0.0.1 -p 5433 -U mcphost mcphost 2>/dev/null || true

# What the replicas share: the database, the cluster secret (hops, events,
# WebShell credentials), the sealing key.
export DATABASE_URL="postgres://mcphost@127.0.0.1:5433/mcphost?sslmode=disable"
[[ -f "$dir/cluster-secret" ]] || od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$dir/cluster-secret"
[[ -f "$dir/secret-key" ]] || head -c 32 /dev/urandom | base64 -w0 >"$dir/secret-key"
MCPHOST_CLUSTER_SECRET="$(cat "$dir/cluster-secret")"
MCPHOST_SECRET_KEY="$(cat "$dir/secret-key")"
export MCPHOST_CLUSTER_SECRET MCPHOST_SECRET_KEY ALICE_TOKEN
export MCPHOST_PUBLIC_URL=http://localhost:8080

go build -o "$dir/mcphost" "$root/cmd/mcphost"
pids=()
trap 'kill -TERM "${pids[@]}" 2>/dev/null; wait; "${as_pg[@]}" "$pgbin/pg_ctl" -D "$dir/pg/data" stop >/dev/null' EXIT
for i in 1 2; do
	MCPHOST_LISTEN="127.0.0.1:778$i" MCPHOST_DATA_DIR="$dir/data-$i" MCPHOST_ADVERTISE_URL="http://127.0.0.1:778$i" \
		"$dir/mcphost" serve -config "$root/deploy/mcphost.hcl" -replica-id "mcphost-$i" -shutdown-grace 45s \
		>"$dir/mcphost-$i.out" 2>"$dir/mcphost-$i.log" &
	pids+=($!)
done

sed -e 's/mcphost-1:7777/127.0.0.1:7781/; s/mcphost-2:7777/127.0.0.1:7782/' \
	-e 's/listen 8080;/listen 127.0.0.1:8080;/' \
	-e "s|^events {}|pid $dir/nginx.pid; error_log $dir/nginx.log; events {}|" \
	"$root/deploy/nginx.conf" >"$dir/nginx.conf"
nginx -c "$dir/nginx.conf" -g 'daemon off;' &
pids+=($!)
echo "mcphost cluster: http://localhost:8080/ (replicas on :7781 and :7782; logs in $dir)"
wait
