package config

import (
	"testing"
	"time"
)

func TestDurationText(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{100 * time.Millisecond, "100ms"},
		{30 * time.Second, "30s"},
		{5 * time.Minute, "5m"},
		{5*time.Minute + 30*time.Second, "5m30s"},
		{10 * time.Minute, "10m"},
		{time.Hour, "1h"},
		{time.Hour + time.Second, "1h0m1s"},
		{-5 * time.Second, "-5s"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := durationText(tt.d); got != tt.want {
				t.Errorf("durationText(%v) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}

func TestCheckListen(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:7777", true},
		{"[::1]:0", true},
		{":8080", true},
		{"localhost:65535", true},
		{"localhost:65536", false},
		{"localhost:-1", false},
		{"localhost:+80", false},
		{"localhost:", false},
		{"localhost", false},
		{"::1:80", false},
		{"127.0.0.1:http", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if err := CheckListen(tt.addr); (err == nil) != tt.ok {
				t.Errorf("CheckListen(%q) = %v, want ok=%v", tt.addr, err, tt.ok)
			}
		})
	}
}

func TestCheckURL(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"https://example.com/mcp", true},
		{"HTTP://127.0.0.1:3000", true},
		{"http://[::1]:3000/sse", true},
		{"ftp://example.com", false},
		{"example.com/mcp", false},
		{"https://", false},
		{"https://:80/mcp", false},
		{"http://exa mple.com", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			if err := checkURL(tt.url); (err == nil) != tt.ok {
				t.Errorf("checkURL(%q) = %v, want ok=%v", tt.url, err, tt.ok)
			}
		})
	}
}

// TestAppGateAttributes pins the App gate switches: false (denied) when
// absent, taken as written otherwise, and a non-bool is an error.
func TestAppGateAttributes(t *testing.T) {
	tests := []struct {
		name, attrs        string
		calls, links, msgs bool
		wantErr            bool
		modes, tools       bool
	}{
		{"absent: every gate closed", "", false, false, false, false, false, false},
		{"all open", "app_tool_calls = true\napp_open_links = true\napp_messages = true\napp_display_modes = true\napp_tools = true", true, true, true, false, true, true},
		{"one open", "app_messages = true", false, false, true, false, false, false},
		{"display modes only", "app_display_modes = true", false, false, false, false, true, false},
		{"App tools only", "app_tools = true", false, false, false, false, false, true},
		{"explicitly closed", "app_tool_calls = false", false, false, false, false, false, false},
		{"not a bool", `app_open_links = "yes please"`, false, false, false, true, false, false},
		{"display modes not a bool", `app_display_modes = 1`, false, false, false, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "server \"s\" {\n  command = \"x\"\n  " + tt.attrs + "\n}\n"
			cfg, diags := Parse([]byte(src), "gates.hcl", Options{})
			if diags.HasErrors() != tt.wantErr {
				t.Fatalf("diagnostics %v, want errors=%v", diags, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			s := cfg.Server("s")
			if s == nil {
				t.Fatal("no server s")
			}
			if s.AppToolCalls != tt.calls || s.AppOpenLinks != tt.links || s.AppMessages != tt.msgs {
				t.Errorf("gates calls=%v links=%v messages=%v, want %v %v %v", s.AppToolCalls, s.AppOpenLinks, s.AppMessages, tt.calls, tt.links, tt.msgs)
			}
			if s.AppDisplayModes != tt.modes || s.AppTools != tt.tools {
				t.Errorf("display modes=%v tools=%v, want %v %v", s.AppDisplayModes, s.AppTools, tt.modes, tt.tools)
			}
		})
	}
}
