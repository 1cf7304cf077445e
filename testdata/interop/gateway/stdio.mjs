// A TypeScript SDK client over stdio, against `mcphost gateway -stdio`,
// the bridge to a running daemon's /mcp. gateway/interop_test.go runs it as
//
//	MCPHOST_TOKEN=... node stdio.mjs sdk1|client2 MCPHOST_BINARY ARGS...
//
// sdk1 is @modelcontextprotocol/sdk 1.x (it speaks 2025-11-25); client2 is
// @modelcontextprotocol/client 2.x with versionNegotiation auto, which on
// its own stdio transport probes a short-lived sibling process with
// server/discover and then spawns the one it keeps. The bridge gets the
// token through its environment; its stderr is this process's. One JSON
// summary line goes to stdout (see exercise.mjs).
import { main } from "./exercise.mjs";

const [sdk, command, ...args] = process.argv.slice(2);
const params = { command, args, env: { MCPHOST_TOKEN: process.env.MCPHOST_TOKEN }, stderr: "inherit" };

await main(async () => {
  let client;
  let transport;
  let negotiated;
  if (sdk === "sdk1") {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    client = new Client({ name: "interop-stdio-sdk1", version: "1.0.0" });
    transport = new StdioClientTransport(params);
    // The 1.x client tells a transport that wants it the negotiated
    // version (HTTP does, for its header); stdio has no getter of its own.
    transport.setProtocolVersion = (v) => {
      negotiated = v;
    };
  } else if (sdk === "client2") {
    const { Client } = await import("@modelcontextprotocol/client");
    const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
    client = new Client({ name: "interop-stdio-client2", version: "2.0.0" }, { versionNegotiation: { mode: "auto" } });
    transport = new StdioClientTransport(params);
  } else {
    throw new Error(`unknown sdk ${JSON.stringify(sdk)}: want sdk1 or client2`);
  }
  await client.connect(transport);
  return {
    client,
    describe: () => ({
      protocolVersion: negotiated ?? client.getNegotiatedProtocolVersion?.(),
      era: client.getProtocolEra?.(),
      sessionId: null,
      serverInfo: client.getServerVersion(),
    }),
    close: () => client.close(),
  };
});
