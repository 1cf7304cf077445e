package main

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/host"
)

// TestPrompter: the terminal prompt reads each field by its type, takes a
// default for an empty line, reads a secret field through the no-echo
// reader (never echoed in the prompt), asks again when the answer does not
// fit, and maps the final choice to an action.
func TestPrompter(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","title":"Name","default":"Ada"},
		"age":{"type":"integer","minimum":0,"maximum":150},
		"admin":{"type":"boolean"},
		"colors":{"type":"array","items":{"enum":["red","green"]}},
		"pin":{"type":"string","format":"password","default":"0000"}},"required":["age"]}`)
	form := host.Elicitation{Server: "s", Tool: "t", Mode: "form", Message: "Who?", RequestedSchema: schema}
	tests := []struct {
		name    string
		q       host.Elicitation
		input   string
		secrets []string
		want    host.ElicitationAnswer
		wantErr string
	}{
		{"accept", form, "y\n42\nred, green\n\na\n", []string{"1234"},
			host.ElicitationAnswer{Action: "accept", Content: map[string]any{"name": "Ada", "age": int64(42), "admin": true, "colors": []any{"red", "green"}, "pin": "1234"}}, ""},
		{"asks again", form, "\n900\n\nBob\na\nn\n30\n\nBob\na\n", []string{"", ""},
			host.ElicitationAnswer{Action: "accept", Content: map[string]any{"name": "Bob", "age": int64(30), "admin": false, "pin": "0000"}}, ""},
		{"decline", form, "\n1\n\n\nd\n", []string{""}, host.ElicitationAnswer{Action: "decline"}, ""},
		{"end of input cancels", form, "\n1\n\n\n", []string{""}, host.ElicitationAnswer{Action: "cancel"}, ""},
		{"gives up", form, "\nx\n\n\na\n\nx\n\n\na\n\nx\n\n\na\n", []string{"", "", ""}, host.ElicitationAnswer{}, "no answer that fits after 3 tries"},
		{"url", host.Elicitation{Mode: host.ElicitURL, URL: "https://example.com/a", Message: "Open"}, "x\nc\n", nil, host.ElicitationAnswer{Action: "cancel"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			secrets := tc.secrets
			p := &prompter{in: bufio.NewReader(strings.NewReader(tc.input)), out: &out, secret: func() (string, error) {
				s := secrets[0]
				secrets = secrets[1:]
				return s, nil
			}}
			got, err := p.ask(tc.q)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("answer (-want +got):\n%s", d)
			}
			if strings.Contains(out.String(), "default 0000") {
				t.Fatalf("the secret's default is shown:\n%s", out.String())
			}
			if tc.q.Mode == host.ElicitURL && !strings.Contains(out.String(), "https://example.com/a") {
				t.Fatalf("the URL is not shown:\n%s", out.String())
			}
		})
	}
}
