package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// direct is the physical limit of one load target: a go-sdk client
// connected straight to its own server of the same kind (its own stdio
// process, or its own HTTP fixture process), pinned to the version the
// daemon negotiated for that kind.
type direct struct {
	Kind    int
	cs      *mcp.ClientSession
	fixture *httpFixture // HTTP kinds
}

// openDirect connects one direct client of kind k.
func openDirect(ctx context.Context, k int, bins binaries, own *owned) (*direct, error) {
	kd := kinds[k]
	d := &direct{Kind: k}
	var t mcp.Transport
	if kd.HTTP {
		f, err := startHTTPFixture(bins.httpCommand(kd), own)
		if err != nil {
			return nil, err
		}
		d.fixture = f
		t = &mcp.StreamableClientTransport{Endpoint: f.URL}
	} else {
		bin := bins.Wellbehaved
		if kd.Modernonly {
			bin = bins.Modernonly
		}
		cmd := exec.Command(bin)
		dieWithParent(cmd)
		t = &pidTransport{CommandTransport: mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, own: own}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcphost-load-direct", Version: "load"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cs, err := client.Connect(cctx, t, &mcp.ClientSessionOptions{ProtocolVersion: kd.Version})
	if err != nil {
		d.close()
		return nil, fmt.Errorf("direct %s: connect: %w", kd.Name, err)
	}
	d.cs = cs
	if got := cs.InitializeResult().ProtocolVersion; got != kd.Version {
		d.close()
		return nil, fmt.Errorf("direct %s: negotiated %s, want %s", kd.Name, got, kd.Version)
	}
	// A modern Streamable HTTP client sends a tool's Mcp-Param headers only
	// for tools it has listed; the daemon lists every server's tools too.
	if _, err := cs.ListTools(cctx, nil); err != nil {
		d.close()
		return nil, fmt.Errorf("direct %s: tools/list: %w", kd.Name, err)
	}
	return d, nil
}

// call makes one echo call.
func (d *direct) call(ctx context.Context, args map[string]any) error {
	res, err := d.cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
	if err != nil {
		return err
	}
	if res.IsError {
		return errors.New("direct echo returned isError")
	}
	return nil
}

func (d *direct) close() {
	if d.cs != nil {
		d.cs.Close()
	}
	if d.fixture != nil {
		d.fixture.stop()
	}
}

// openDirects connects one direct client per load target, in parallel.
func openDirects(ctx context.Context, targets []serverPlan, bins binaries, own *owned) ([]*direct, error) {
	out := make([]*direct, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() { out[i], errs[i] = openDirect(ctx, t.Kind, bins, own) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeDirects(out)
		return nil, err
	}
	return out, nil
}

func closeDirects(ds []*direct) {
	var wg sync.WaitGroup
	for _, d := range ds {
		if d != nil {
			wg.Go(d.close)
		}
	}
	wg.Wait()
}

// pidTransport records the started server's pid as the tool's own, so the
// count of the daemon's children leaves it out.
type pidTransport struct {
	mcp.CommandTransport
	own *owned
}

func (t *pidTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.CommandTransport.Connect(ctx)
	if t.Command.Process != nil {
		t.own.add(t.Command.Process.Pid)
	}
	return conn, err
}
