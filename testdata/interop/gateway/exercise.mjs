// The checks every gateway interop client runs (gateway/interop_test.go):
// list tools, call fx__echo, list and read fx+fixture://readme, list and get
// fx__greet, and call fx__add, which the test's policy denies. Each step's
// outcome goes into one JSON summary; a step that throws is recorded under
// errors and the next step still runs, so the Go test reports every failure
// at once.

// Names on the gateway's aggregate endpoint for the fixture server "fx".
export const ECHO = "fx__echo";
export const DENIED = "fx__add";
export const README = "fx+fixture://readme";
export const GREET = "fx__greet";

// The whole run is bounded, so a hung connection ends with a summary
// instead of the Go test's kill.
export const RUN_TIMEOUT_MS = 30_000;

function texts(content) {
  return (content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
}

function message(err) {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

// exercise runs the steps with client (connected already) and returns the
// summary. summary.errors maps a step to its error's message.
export async function exercise(client) {
  const summary = { errors: {} };
  const step = async (name, fn) => {
    try {
      await fn();
    } catch (err) {
      summary.errors[name] = message(err);
    }
  };
  await step("tools/list", async () => {
    const res = await client.listTools();
    summary.tools = res.tools.map((t) => t.name);
  });
  await step("tools/call echo", async () => {
    const res = await client.callTool({ name: ECHO, arguments: { text: "hi from node" } });
    summary.echo = { isError: res.isError === true, text: texts(res.content) };
  });
  await step("resources/list", async () => {
    const res = await client.listResources();
    summary.resources = res.resources.map((r) => r.uri);
  });
  await step("resources/read", async () => {
    const res = await client.readResource({ uri: README });
    summary.readme = res.contents.map((c) => ({ uri: c.uri, mimeType: c.mimeType, text: c.text }));
  });
  await step("prompts/list", async () => {
    const res = await client.listPrompts();
    summary.prompts = res.prompts.map((p) => p.name);
  });
  await step("prompts/get", async () => {
    const res = await client.getPrompt({ name: GREET, arguments: { name: "Ada" } });
    summary.greet = res.messages.map((m) => ({ role: m.role, text: m.content?.type === "text" ? m.content.text : null }));
  });
  await step("tools/call denied", async () => {
    const res = await client.callTool({ name: DENIED, arguments: { a: 2, b: 3 } });
    summary.denied = { isError: res.isError === true, text: texts(res.content) };
  });
  return summary;
}

// The natural request the search run makes, and the text it echoes.
export const SEARCH_QUERY = "return my text unchanged";
export const SEARCH_TEXT = "found by search";

// exerciseSearch runs the steps of a client against an endpoint in search
// mode (gateway/interop_test.go, TestInteropTypeScriptSearch): list tools
// (the meta-tools and the pinned ones), search_tools with a natural
// request, describe_tools and call_tool of the first tool found.
export async function exerciseSearch(client) {
  const summary = { errors: {}, instructions: client.getInstructions?.() ?? null };
  const step = async (name, fn) => {
    try {
      await fn();
    } catch (err) {
      summary.errors[name] = message(err);
    }
  };
  const structured = (res, name) => {
    if (res.isError) throw new Error(`${name} answered isError: ${texts(res.content)}`);
    return res.structuredContent ?? JSON.parse(texts(res.content));
  };
  await step("tools/list", async () => {
    const res = await client.listTools();
    summary.tools = res.tools.map((t) => t.name);
  });
  await step("search_tools", async () => {
    const res = await client.callTool({ name: "search_tools", arguments: { query: SEARCH_QUERY } });
    const out = structured(res, "search_tools");
    summary.found = out.tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema ?? null }));
  });
  const first = summary.found?.[0]?.name;
  await step("describe_tools", async () => {
    const res = await client.callTool({ name: "describe_tools", arguments: { names: [first] } });
    const out = structured(res, "describe_tools");
    summary.described = out.tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema ?? null }));
  });
  await step("call_tool", async () => {
    const res = await client.callTool({ name: "call_tool", arguments: { name: first, arguments: { text: SEARCH_TEXT } } });
    summary.called = { isError: res.isError === true, text: texts(res.content) };
  });
  return summary;
}

// main runs connect (which returns a connected client and a function that
// describes the connection), exercise and close, prints the summary as one
// JSON line on stdout and exits 0; only a failure to connect exits 1 (with
// the summary too).
export async function main(connect) {
  const timer = setTimeout(() => {
    process.stdout.write(JSON.stringify({ errors: { run: `no answer within ${RUN_TIMEOUT_MS} ms` } }) + "\n");
    process.exit(1);
  }, RUN_TIMEOUT_MS);
  let summary = { errors: {} };
  let conn;
  try {
    conn = await connect();
  } catch (err) {
    summary.errors.connect = message(err);
    process.stdout.write(JSON.stringify(summary) + "\n");
    process.exit(1);
  }
  // MCPHOST_EXERCISE=search runs exerciseSearch instead.
  const run = process.env.MCPHOST_EXERCISE === "search" ? exerciseSearch : exercise;
  summary = { ...conn.describe(), ...(await run(conn.client)) };
  try {
    await conn.close();
  } catch (err) {
    summary.errors.close = message(err);
  }
  clearTimeout(timer);
  process.stdout.write(JSON.stringify(summary) + "\n");
  process.exit(0);
}
