package main

// commandHelp is what `mcphost help COMMAND` and `COMMAND -h` print after
// the flags: how to use the command, with examples.
var commandHelp = map[string]string{
	"call": `Arguments, after SERVER.TOOL:
  '{"quarter":"Q3"}'   one JSON object
  -                    the JSON object on standard input
  quarter=Q3           KEY=VALUE: the value typed by the tool's schema (a
                       number, a boolean, a string), so quarter=3 is 3 only
                       where the schema says the parameter is a number
  tags:='["a","b"]'    KEY:=JSON: the value as JSON, whatever the schema says
Exit status: 0 the tool answered, 1 it answered with an error result (its
text is printed) or the call failed, 2 a usage, naming or argument error,
3 a policy refused the call.

A tool with an MCP App: stderr says "App: ui://... (open in the WebShell:
URL, session, entry)", or why the App is not shown (its text fallback);
-json adds "app" after the result. A server that answers -32042 (URL
elicitation required) names the URLs to visit: on a terminal, press Enter
to retry once you have; otherwise open them and run the command again.

Examples:
  mcphost call revenue.show_revenue_dashboard quarter=Q3
  mcphost call -as alice files.write_file path=notes.txt content=hi
  echo '{"text":"hi"}' | mcphost call fx.echo -
`,
	"tools": `Each tool is listed with its parameters: a required one is marked *, and
a short enum shows its values (quarter*: Q1|Q2|Q3|Q4). SERVER.TOOL prints
one tool whole, its input and output schema included.

-search QUERY ranks the tools against a request in words with the ranker
of the WebShell's search and of the gateway's search_tools, and prints
the best 20, best first (of SERVER only, when one is named); stderr says
when more matched, or when none did.

Examples:
  mcphost tools
  mcphost tools revenue
  mcphost tools -json revenue.show_revenue_dashboard
  mcphost tools -search "revenue by quarter"
  mcphost tools -search "add two numbers" -json fx
`,
	"servers": `Examples:
  mcphost servers
  mcphost servers -json
  mcphost servers -local -v    connect in-process and say which config
`,
	"serve": `Without -config the daemon uses ./mcphost.hcl, else
~/.config/mcphost/mcphost.hcl, else the embedded default (a demo). SIGHUP
reloads the config file; SIGTERM drains running calls first.

Examples:
  mcphost serve
  mcphost serve -config team.hcl -listen 127.0.0.1:7780
  MCPHOST_LISTEN=0.0.0.0:7777 mcphost serve -config team.hcl
`,
	"logs": `Needs a running daemon, and an admin's credential.

Examples:
  mcphost logs revenue
  mcphost logs -f revenue    go on printing new lines until Ctrl-C
`,
	"restart": `Needs a running daemon, and an admin's credential. A ready server's
session is closed (its running calls fail as at any disconnect) and a new
one started; a server waiting to restart starts again at once.

Example:
  mcphost restart revenue
`,
	"fmt": `Examples:
  mcphost fmt mcphost.hcl
  mcphost fmt -check .        list the files of . that need it (exit 1)
  mcphost fmt -diff team.hcl  show what would change
  mcphost fmt - < team.hcl    standard input to standard output
`,
	"validate": `A variable that env() reads and that is not set is a warning, not an
error: validate checks everything else without its value, and says what
needs it (serve refuses the file until it is set). -strict makes each an
error, as serve sees it. A stdio server's command that is not on PATH
here is a warning too; nothing is started.

Examples:
  mcphost validate mcphost.hcl
  mcphost validate -json examples/hcl/*.hcl
  mcphost import -o servers.hcl && mcphost validate servers.hcl
  mcphost validate -strict team.hcl    in CI, with the secrets set
`,
	"import": `Without FILE it looks for the configs of the MCP clients it knows
(Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Codex).

Examples:
  mcphost import                       print what it found as HCL
  mcphost import -o servers.hcl        write it
  mcphost import -from cursor team.json
`,
	"reload": `A dry run plans even when the daemon lacks variables the file reads
with env(): it lists them under the plan. A reload refuses the file until
they are set.

Examples:
  mcphost reload -dry-run    what a reload would change
  mcphost reload
`,
	"gateway": `gateway config prints one principal's snippet: -as NAME takes that
principal's token from the config; without -as it is $MCPHOST_TOKEN, else
the owner token (a config without principals). HTTP snippets keep the token
in the header the client stores (VS Code asks for it instead, with a
password prompt); stdio snippets (-stdio, and always for Claude Desktop)
run the bridge with -url and -token-file: gateway config writes the token
alone, mode 0600, to the user's config directory
(~/.config/mcphost/tokens/NAME@HOST_PORT.token on Linux) and says where.
The bridge then needs neither the config nor an environment variable.

Where each snippet goes:
  claude       Claude Desktop's claude_desktop_config.json, mcpServers
  claude-code  a command line to run (claude mcp add …)
  cursor       ~/.cursor/mcp.json, mcpServers
  vscode       .vscode/mcp.json (inputs and servers)
  qwen         ~/.qwen/settings.json, mcpServers (httpUrl: url is SSE there)
  gemini       ~/.gemini/settings.json, mcpServers (httpUrl)
  codex        ~/.codex/config.toml ([mcp_servers.mcphost])
  inspector    a file for the Inspector's --config FILE --server mcphost
  windsurf     ~/.codeium/windsurf/mcp_config.json, mcpServers (serverUrl)
  zed          Zed's settings.json, context_servers

Examples:
  mcphost gateway config cursor
  mcphost gateway config claude -as alice
  mcphost gateway config qwen -as alice -url https://mcphost.example.com
  MCPHOST_TOKEN=… mcphost gateway config gemini -stdio -url http://10.0.0.5:7777
  mcphost gateway -stdio -url http://127.0.0.1:7777 -token-file ~/.config/mcphost/tokens/alice@127.0.0.1_7777.token
`,
}
