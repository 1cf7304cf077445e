// A client of the TypeScript SDK 1.x (@modelcontextprotocol/sdk, pinned in
// ../package.json) over Streamable HTTP, against the gateway: it speaks the
// 2025-11-25 era (initialize, Mcp-Session-Id). gateway/interop_test.go runs
// it as
//
//	MCPHOST_URL=http://127.0.0.1:PORT/mcp MCPHOST_TOKEN=... node sdk1.mjs
//
// and reads one JSON summary line from stdout (see exercise.mjs).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { main } from "./exercise.mjs";

await main(async () => {
  const client = new Client({ name: "interop-sdk1", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(process.env.MCPHOST_URL), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.MCPHOST_TOKEN}` } },
  });
  await client.connect(transport);
  return {
    client,
    describe: () => ({
      protocolVersion: transport.protocolVersion,
      sessionId: transport.sessionId ?? null,
      serverInfo: client.getServerVersion(),
    }),
    close: async () => {
      await transport.terminateSession(); // DELETE: the session ends now, not at its idle timeout
      await client.close();
    },
  };
});
