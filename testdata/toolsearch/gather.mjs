// gather.mjs lists the tools of real MCP servers from npm and writes
// corpus.json, the evaluation corpus of toolsearch/eval_test.go.
//
// Run it from a scratch directory outside the repository where the
// packages of README.md are installed (it resolves them from the working
// directory's node_modules):
//
//	node /path/to/mcphost/testdata/toolsearch/gather.mjs > corpus.json
//
// Each server is started over stdio with dummy credentials, asked for
// tools/list (every page), and stopped. A server that fails is reported on
// stderr and left out; the output keeps the servers in the order below and
// each server's tools in the order the server listed them.
import { mkdtempSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

// The SDK comes from the working directory, not from beside this script.
const require = createRequire(resolve("package.json"));
const sdk = (path) => import(pathToFileURL(require.resolve(path)).href);
const { Client } = await sdk("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await sdk("@modelcontextprotocol/sdk/client/stdio.js");

const scratch = mkdtempSync(join(tmpdir(), "toolsearch-"));
const bin = (name) => resolve("node_modules/.bin", name);
const dummy = "dummy-token-for-listing-tools";

// name: the server's name in the corpus; pkg: its npm package; cmd/args/env: how to start it.
const servers = [
  { name: "filesystem", pkg: "@modelcontextprotocol/server-filesystem", cmd: bin("mcp-server-filesystem"), args: [scratch] },
  { name: "memory", pkg: "@modelcontextprotocol/server-memory", cmd: bin("mcp-server-memory"), env: { MEMORY_FILE_PATH: join(scratch, "memory.json") } },
  { name: "everything", pkg: "@modelcontextprotocol/server-everything", cmd: bin("mcp-server-everything"), args: ["stdio"] },
  { name: "sequential-thinking", pkg: "@modelcontextprotocol/server-sequential-thinking", cmd: bin("mcp-server-sequential-thinking") },
  { name: "github", pkg: "@modelcontextprotocol/server-github", cmd: bin("mcp-server-github"), env: { GITHUB_PERSONAL_ACCESS_TOKEN: dummy } },
  { name: "gitlab", pkg: "@modelcontextprotocol/server-gitlab", cmd: bin("mcp-server-gitlab"), env: { GITLAB_PERSONAL_ACCESS_TOKEN: dummy } },
  { name: "slack", pkg: "@modelcontextprotocol/server-slack", cmd: bin("mcp-server-slack"), env: { SLACK_BOT_TOKEN: dummy, SLACK_TEAM_ID: "T0000000" } },
  { name: "brave-search", pkg: "@modelcontextprotocol/server-brave-search", cmd: bin("mcp-server-brave-search"), env: { BRAVE_API_KEY: dummy } },
  { name: "google-maps", pkg: "@modelcontextprotocol/server-google-maps", cmd: bin("mcp-server-google-maps"), env: { GOOGLE_MAPS_API_KEY: dummy } },
  { name: "postgres", pkg: "@modelcontextprotocol/server-postgres", cmd: bin("mcp-server-postgres"), args: ["postgresql://127.0.0.1:1/none"] },
  { name: "puppeteer", pkg: "@modelcontextprotocol/server-puppeteer", cmd: bin("mcp-server-puppeteer") },
  { name: "playwright", pkg: "@playwright/mcp", cmd: bin("playwright-mcp"), args: ["--headless"] },
  { name: "chrome-devtools", pkg: "chrome-devtools-mcp", cmd: bin("chrome-devtools-mcp"), args: ["--headless"] },
  { name: "notion", pkg: "@notionhq/notion-mcp-server", cmd: bin("notion-mcp-server"), env: { NOTION_TOKEN: dummy } },
  { name: "kubernetes", pkg: "mcp-server-kubernetes", cmd: bin("mcp-server-kubernetes") },
  { name: "firecrawl", pkg: "firecrawl-mcp", cmd: bin("firecrawl-mcp"), env: { FIRECRAWL_API_KEY: "fc-" + dummy } },
  { name: "tavily", pkg: "tavily-mcp", cmd: bin("tavily-mcp"), env: { TAVILY_API_KEY: "tvly-" + dummy } },
  { name: "desktop-commander", pkg: "@wonderwhy-er/desktop-commander", cmd: bin("desktop-commander"), env: { MCP_DXT: "1" } },
  { name: "context7", pkg: "@upstash/context7-mcp", cmd: bin("context7-mcp") },
];

async function list(s) {
  const transport = new StdioClientTransport({
    command: s.cmd,
    args: s.args ?? [],
    env: { PATH: process.env.PATH, HOME: scratch, ...(s.env ?? {}) },
    stderr: "ignore",
    cwd: scratch,
  });
  const client = new Client({ name: "mcphost-toolsearch-gather", version: "1" });
  await client.connect(transport, { timeout: 60000 });
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {}, { timeout: 60000 });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  await client.close();
  return tools;
}

const out = { servers: [] };
for (const s of servers) {
  const version = JSON.parse(readFileSync(resolve("node_modules", s.pkg, "package.json"), "utf8")).version;
  try {
    const tools = await list(s);
    out.servers.push({
      name: s.name,
      package: `${s.pkg}@${version}`,
      tools: tools.map((t) => ({
        name: t.name,
        ...(t.title ? { title: t.title } : {}),
        description: t.description ?? "",
        inputSchema: t.inputSchema,
        ...(t.annotations ? { annotations: t.annotations } : {}),
      })),
    });
    console.error(`${s.name} (${s.pkg}@${version}): ${tools.length} tools`);
  } catch (err) {
    console.error(`${s.name} (${s.pkg}@${version}): left out: ${err.message}`);
  }
}
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
process.exit(0);
