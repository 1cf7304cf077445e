// Package resultjson encodes a tool's result (mcp.CallToolResult) as
// encoding/json does, byte for byte, without reflection for the common
// result: text content only, nothing else but isError. Every call's
// result is encoded once for its transcript entry (and that encoding is
// the gateway's answer), and go-sdk's encoding of it runs encoding/json
// three times over (the result, each content item, and a validating pass
// over each one's output). Any other result is encoded by encoding/json.
package resultjson
