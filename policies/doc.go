// Package policies owns the CEL permission policies: it compiles the
// `policy` blocks of the configuration once at load into a [Set], and
// decides, for one tool and one principal, whether a tool may be listed,
// called, its result shown, or its App rendered. It knows nothing of HCL,
// HTTP or sessions: the host reads the blocks into [Rule] values, turns
// each [CompileError] into a diagnostic, builds an [Input] per call and acts
// on the [Decision]. It must never import the host package or another leaf.
//
// # Rules and phases
//
// A rule has a phase, an effect and a condition (`when`, a CEL expression
// of type bool). Within a phase the rules run in file order; the first
// whose condition is true decides; when none does, the set's default effect
// ("allow" unless the configuration says "deny") decides. The default
// applies to every phase, so with default = "deny" a tool is listed only if
// a list rule allows it and called only if a call rule allows it too.
//
//	phase   runs                      variables                         a deny means
//	list    when tools are listed     server era origin principal       the tool is hidden
//	                                  client tool
//	call    before the upstream call  ... and args                      the call is refused
//	result  after result plugins      ... and args, result              the result is withheld
//	app     before an App renders     ... and app (no args)             fallback text, no App
//
// The variables:
//
//	server     string, the upstream server's name
//	era        string, "modern" or "legacy"
//	origin     string, "user", "app" (a call made by an App), "api" or
//	           "gateway" (an MCP client through mcphost's gateway)
//	principal  name string, groups list(string)
//	client     name string, version string: the MCP client's clientInfo
//	           through the gateway (what it says of itself, not proven);
//	           empty for the other origins
//	tool       name string, title string, annotations: readOnlyHint,
//	           destructiveHint, idempotentHint, openWorldHint (bool)
//	args       the arguments object, dyn (decoded JSON: numbers are double)
//	result     isError bool, text string (the text content and the text of
//	           embedded resources, joined with "\n"), structured dyn
//	           (structuredContent, or null), structuredText string (the
//	           same as JSON, "" without it)
//	app        resourceUri string, csp: connectDomains, resourceDomains,
//	           frameDomains, baseUriDomains (list(string)),
//	           permissions list(string), htmlSize int
//
// principal, tool, result and app are typed objects, so a misspelt field is
// a load error; args and result.structured are dyn, so a condition on them
// must compare explicitly (`args.enabled == true`, not `args.enabled`).
// Each phase has its own environment: a variable the phase lacks (args in a
// list rule) is a load error naming the phase to use, never a rule that
// silently fails at run time. The effect "ask" is allowed only in the call
// phase; the host pauses the call for approval and treats no answer in time
// as a deny. An ask rule may name its approvers (principal or group names);
// the decision carries them, and the host lets only those answer (without
// them, the caller answers). The names mean nothing here: the config
// loader checks them against the principals.
//
// The functions are CEL's standard library (including the exists, all,
// exists_one, map and filter macros and has()) plus lowerAscii, upperAscii
// and trim. The other functions of the strings extension are refused at
// load, and matches() takes only a literal pattern: CEL charges a call's
// cost after it returns, so a single call whose work grows faster than its
// input could run away inside the cost limit.
//
// # Load: Compile
//
// [Compile] checks every rule and returns all problems at once, each a
// [CompileError] naming the rule, the field ("when", "phase", "effect",
// "name" or "default") and, for a condition, the byte offset inside the
// decoded `when` string (CEL reports line and column in code points; Offset
// is already converted). The host adds the offset to the start of the
// string's value in the file, and points at the whole value when Offset is
// -1. It returns no Set when there is any error.
//
// # Requests: Decide
//
// Decisions are fail-closed. Any evaluation error — a missing key
// (`args.path` when the call has no path: write `has(args.path) && ...`), a
// type mismatch, the cost limit, a cancelled context — denies, whatever the
// rule's effect, with Decision.Error set and the rule and CEL's error in
// Decision.Reason. So do an unknown phase, a nil Input and a context already
// done. Decide never panics.
//
// Each rule's evaluation is bounded: at most [CostLimit] CEL cost units
// (about 3 ms of work at worst), and the request's context is checked every
// 100 comprehension steps. Rules whose worst case stays under the limit for
// ordinary identities (names up to 1 KiB, up to 256 groups) run without
// per-step cost tracking, which costs most of an evaluation; larger inputs
// take the tracked path and decide the same way.
//
// How the host uses it:
//
//   - Build one [Input] per call and reuse it for every phase of that call
//     (never for two calls at once). Fill Server, Era, Origin, Principal and
//     Tool; convert the tool with [ToolFromMCP] so absent annotation hints
//     take the MCP defaults (destructive and open-world true, read-only and
//     idempotent false). Note that MCP gives destructiveHint meaning only
//     when readOnlyHint is false: an approval rule should say
//     `tool.annotations.destructiveHint && !tool.annotations.readOnlyHint`.
//   - Arguments: set Args to the map[string]any the schema validation
//     already decoded (the fast path), or else RawArgs to the raw JSON. Raw
//     arguments are decoded only if an evaluated rule reads args, once per
//     Input, and then only the members it reads. [Set.Uses] says whether any
//     rule of a phase reads a variable. A key given twice reads as its last
//     value (as in encoding/json) and keys are matched exactly: refuse
//     arguments with duplicate keys, or keys that differ only in case,
//     before deciding on arguments a server will read with another parser
//     (the host does, with internal/jsonkeys).
//   - List: call Decide(ctx, PhaseList, in) per tool; hide the denied ones.
//   - Call: call Decide(ctx, PhaseCall, in) once. It applies the list rules
//     first, because a client can name a hidden tool: a list deny comes back
//     with Phase PhaseList, and the host must answer it exactly as it
//     answers an unknown tool, so a hidden tool's existence does not leak.
//     A call deny is refused with Decision.Message (API: 403 with the
//     message and rule); EffectAsk pauses for approval.
//   - Result: set Result (see [ResultFromMCP]) after the result plugins and
//     call Decide(ctx, PhaseResult, in); a deny withholds the result.
//   - App: set App and call Decide(ctx, PhaseApp, in); a deny renders the
//     fallback text instead. App-initiated calls use Origin OriginApp.
//   - Record every Decision (phase, rule, effect, reason, duration) in the
//     transcript and the audit log. A nil *Set (no policies) allows
//     everything.
//
// A Set is immutable and safe for concurrent use; a reload compiles a new
// one and swaps it in atomically. [DecodeInput] reads the JSON input file
// of `mcphost policy eval` into the same Input the host builds.
package policies
