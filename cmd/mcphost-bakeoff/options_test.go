package main

import (
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/negotiate"
)

func TestParseOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		sides   []string
		eras    []string
		callers []int
		usage   bool
	}{
		{name: "defaults", sides: allSides, eras: []string{negotiate.LegacyVersion, negotiate.ModernVersion}, callers: []int{8, 32}},
		{name: "tbx left out", args: []string{"-tbx", ""}, sides: []string{sideDirect, sideRelay, sideMcphost},
			eras: []string{negotiate.LegacyVersion, negotiate.ModernVersion}, callers: []int{8, 32}},
		{name: "sides in table order, once", args: []string{"-sides", "mcphost,direct,mcphost", "-era", negotiate.ModernVersion, "-callers", ""},
			sides: []string{sideDirect, sideMcphost}, eras: []string{negotiate.ModernVersion}},
		{name: "unknown side", args: []string{"-sides", "direct,hub"}, usage: true},
		{name: "only tbx, left out", args: []string{"-sides", "tbx", "-tbx", ""}, usage: true},
		{name: "unknown era", args: []string{"-era", "2024-11-05"}, usage: true},
		{name: "bad callers", args: []string{"-callers", "8,0"}, usage: true},
		{name: "no rounds", args: []string{"-rounds", "0"}, usage: true},
		{name: "stray argument", args: []string{"now"}, usage: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseOptions(tc.args, io.Discard)
			if tc.usage {
				if !errors.Is(err, errUsage) {
					t.Fatalf("parseOptions(%q) = %v, want a usage error", tc.args, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.sides, o.Sides); diff != "" {
				t.Errorf("sides (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.eras, o.Eras); diff != "" {
				t.Errorf("eras (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.callers, o.Callers); diff != "" {
				t.Errorf("callers (-want +got):\n%s", diff)
			}
		})
	}
}
