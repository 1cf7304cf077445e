//go:build wasip1

// Command hostileplugin is a test fixture for package wasmserver: an Extism
// plugin with hyper-mcp's v2 ABI whose tools misbehave, and which imports
// every host function of hyper-mcp's "extism:host/user" namespace.
//
// Tools: spin (never returns), crash (panics), elicit (calls
// create_elicitation, which mcphost refuses), notify (sends a log message,
// a progress notification and a tool-list change, then answers "notified"),
// garbage (returns output that is not JSON), roots (calls list_roots),
// sample (calls create_message).
//
// Tool "context" returns its whole input, for the host's tests of the ABI.
// The plugin also has a prompt ("greet"), a resource ("mem://notes/1"), a
// resource template ("mem://notes/{id}") and completions (the reference's
// type and the argument's value, joined by ":").
//
// Config key "mode": "failstart" makes list_tools fail; "badschema" lists a
// tool whose input schema is not an object.
//
// Build (from wasmserver/testdata/wasm; the tests do this with
// internal/testbin):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o hostileplugin.wasm ./hostileplugin
package main

import (
	"encoding/json"
	"errors"

	"github.com/extism/go-pdk"
)

func main() {}

var sink uint64

//go:wasmimport extism:host/user create_elicitation
func createElicitation(uint64) uint64

//go:wasmimport extism:host/user create_message
func createMessage(uint64) uint64

//go:wasmimport extism:host/user list_roots
func listRoots() uint64

//go:wasmimport extism:host/user notify_logging_message
func notifyLoggingMessage(uint64)

//go:wasmimport extism:host/user notify_progress
func notifyProgress(uint64)

//go:wasmimport extism:host/user notify_prompt_list_changed
func notifyPromptListChanged()

//go:wasmimport extism:host/user notify_resource_list_changed
func notifyResourceListChanged()

//go:wasmimport extism:host/user notify_resource_updated
func notifyResourceUpdated(uint64)

//go:wasmimport extism:host/user notify_tool_list_changed
func notifyToolListChanged()

//go:wasmexport list_tools
func listToolsExport() int32 {
	mode, _ := pdk.GetConfig("mode")
	switch mode {
	case "failstart":
		pdk.SetError(errors.New("deliberate list_tools failure"))
		return 1
	case "badschema":
		pdk.OutputString(`{"tools":[{"name":"bad","inputSchema":{"type":"string"}}]}`)
		return 0
	}
	var tools []map[string]any
	for _, name := range []string{"spin", "crash", "elicit", "notify", "garbage", "roots", "sample", "context"} {
		tools = append(tools, map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}})
	}
	pdk.OutputJSON(map[string]any{"tools": tools})
	return 0
}

type callInput struct {
	Request struct {
		Name string `json:"name"`
	} `json:"request"`
	Context struct {
		Meta map[string]any `json:"_meta"`
	} `json:"context"`
}

//go:wasmexport call_tool
func callToolExport() int32 {
	var in callInput
	if err := pdk.InputJSON(&in); err != nil {
		pdk.SetError(err)
		return 1
	}
	switch in.Request.Name {
	case "spin":
		for {
			sink++
		}
	case "crash":
		panic("deliberate crash")
	case "elicit":
		createElicitation(alloc(`{"message":"?","requestedSchema":{"type":"object"}}`))
	case "roots":
		listRoots()
	case "sample":
		createMessage(alloc(`{"messages":[],"maxTokens":1}`))
	case "notify":
		notifyLoggingMessage(alloc(`{"level":"warning","logger":"hostile","data":"a log line"}`))
		token, _ := in.Context.Meta["progressToken"].(string)
		p, _ := json.Marshal(map[string]any{"progressToken": token, "progress": 1, "total": 2, "message": "half"})
		notifyProgress(alloc(string(p)))
		notifyToolListChanged()
		notifyPromptListChanged()
		notifyResourceListChanged()
		notifyResourceUpdated(alloc(`{"uri":"file:///x"}`))
		pdk.OutputString(`{"content":[{"type":"text","text":"notified"}]}`)
		return 0
	case "context":
		out, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(pdk.Input())}}})
		pdk.Output(out)
		return 0
	case "garbage":
		pdk.OutputString(`{"content":[{"type":"text","text":`)
		return 0
	}
	pdk.SetError(errors.New("unknown tool " + in.Request.Name))
	return 1
}

// alloc copies s into memory the host can read and returns its offset.
func alloc(s string) uint64 {
	m := pdk.AllocateString(s)
	return m.Offset()
}

//go:wasmexport list_prompts
func listPrompts() int32 {
	pdk.OutputString(`{"prompts":[{"name":"greet","description":"Greets someone.","arguments":[{"name":"who","required":true}]}]}`)
	return 0
}

//go:wasmexport get_prompt
func getPrompt() int32 {
	var in struct {
		Request struct {
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
		} `json:"request"`
	}
	if err := pdk.InputJSON(&in); err != nil {
		pdk.SetError(err)
		return 1
	}
	pdk.OutputJSON(map[string]any{"messages": []any{map[string]any{
		"role":    "user",
		"content": map[string]any{"type": "text", "text": "Hello, " + in.Request.Arguments["who"]},
	}}})
	return 0
}

//go:wasmexport list_resources
func listResources() int32 {
	pdk.OutputString(`{"resources":[{"uri":"mem://notes/1","name":"note1","mimeType":"text/plain"}]}`)
	return 0
}

//go:wasmexport list_resource_templates
func listResourceTemplates() int32 {
	pdk.OutputString(`{"resourceTemplates":[{"uriTemplate":"mem://notes/{id}","name":"note"}]}`)
	return 0
}

//go:wasmexport read_resource
func readResource() int32 {
	var in struct {
		Request struct {
			URI string `json:"uri"`
		} `json:"request"`
	}
	if err := pdk.InputJSON(&in); err != nil {
		pdk.SetError(err)
		return 1
	}
	pdk.OutputJSON(map[string]any{"contents": []any{map[string]any{"uri": in.Request.URI, "mimeType": "text/plain", "text": "note at " + in.Request.URI}}})
	return 0
}

//go:wasmexport complete
func complete() int32 {
	var in struct {
		Request struct {
			Ref struct {
				Type string `json:"type"`
			} `json:"ref"`
			Argument struct {
				Value string `json:"value"`
			} `json:"argument"`
		} `json:"request"`
	}
	if err := pdk.InputJSON(&in); err != nil {
		pdk.SetError(err)
		return 1
	}
	pdk.OutputJSON(map[string]any{"completion": map[string]any{"values": []string{in.Request.Ref.Type + ":" + in.Request.Argument.Value}}})
	return 0
}
