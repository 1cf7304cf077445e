// A client of the TypeScript SDK 2.x (@modelcontextprotocol/client, pinned in
// ../package.json) over Streamable HTTP, against the gateway, with
// versionNegotiation auto: it probes with server/discover and speaks
// 2026-07-28 when the server does, else falls back to initialize.
// gateway/interop_test.go runs it as
//
//	MCPHOST_URL=http://127.0.0.1:PORT/mcp MCPHOST_TOKEN=... node client2.mjs [auto|legacy]
//
// and reads one JSON summary line from stdout (see exercise.mjs).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { main } from "./exercise.mjs";

const mode = process.argv[2] ?? "auto";

await main(async () => {
  const client = new Client({ name: "interop-client2", version: "2.0.0" }, { versionNegotiation: { mode } });
  const transport = new StreamableHTTPClientTransport(new URL(process.env.MCPHOST_URL), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.MCPHOST_TOKEN}` } },
  });
  await client.connect(transport);
  return {
    client,
    describe: () => ({
      protocolVersion: client.getNegotiatedProtocolVersion(),
      era: client.getProtocolEra?.(),
      sessionId: transport.sessionId ?? null,
      serverInfo: client.getServerVersion(),
    }),
    close: async () => {
      if (transport.sessionId) await transport.terminateSession();
      await client.close();
    },
  };
});
