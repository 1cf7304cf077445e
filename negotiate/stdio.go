package negotiate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// probeSibling runs the stdio sibling probe (§3.4): a disposable copy of the
// server answers server/discover (at most twice, for one Corrective), then
// its whole process group is reaped. It returns only after the reap, so the
// session process never overlaps the sibling (lockfiles, ports).
//
// A non-nil error means the probe could not run (the command did not start)
// or ctx ended; otherwise the Decision is Classify's.
func (n *negotiator) probeSibling(ctx context.Context, deadline time.Time, p time.Duration) (Decision, error) {
	cmd := n.spec.NewCommand()
	if cmd == nil {
		return Decision{}, errors.New("negotiate: Spec.NewCommand returned nil")
	}
	sib, err := startSibling(cmd)
	if err != nil {
		return Decision{}, fmt.Errorf("starting the probe process: %w", err)
	}
	pctx, cancel := context.WithDeadline(ctx, deadline)
	d, err := sib.probe(ctx, pctx, p)
	cancel()
	sib.reap(SiblingReapGrace)
	n.log.Debug("negotiation: probe process reaped", "pid", cmd.Process.Pid, "state", cmd.ProcessState.String())
	return d, err
}

// sibling is a started probe process with its own pipes.
type sibling struct {
	cmd    *exec.Cmd
	stdin  *os.File // our end of its stdin
	stdout *os.File // our end of its stdout

	exited chan struct{} // closed when cmd.Wait has returned

	answers    chan answer   // responses to probe ids, in order
	stop       chan struct{} // closed by reap: the reader stops sending
	readerDone chan struct{} // closed when the reader has returned
	end        Outcome       // how the stream ended; valid once readerDone is closed
}

// answer is one response to a probe id.
type answer struct {
	id      string
	outcome Outcome
}

// startSibling starts cmd with fresh pipes for stdin and stdout, keeping the
// host's Stderr, Dir, Env and SysProcAttr, but always in its own process
// group so that reaping reaches grandchildren.
func startSibling(cmd *exec.Cmd) (*sibling, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	attr := &syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		*attr = *cmd.SysProcAttr
	}
	if !attr.Setsid { // a session leader leads its own group already
		attr.Setpgid, attr.Pgid = true, 0
	}
	cmd.SysProcAttr = attr
	// A process outside the group holding stderr must not stretch the reap.
	cmd.WaitDelay = SiblingReapGrace / 2
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	s := &sibling{
		cmd:        cmd,
		stdin:      inW,
		stdout:     outR,
		exited:     make(chan struct{}),
		answers:    make(chan answer, 4),
		stop:       make(chan struct{}),
		readerDone: make(chan struct{}),
	}
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	go s.read()
	return s, nil
}

// read scans newline-delimited frames until EOF and hands responses to probe
// ids to the prober. Everything else is skipped (row 20).
func (s *sibling) read() {
	defer close(s.readerDone)
	sc := bufio.NewScanner(s.stdout)
	sc.Buffer(make([]byte, 0, 64<<10), MaxFrameBytes)
	for sc.Scan() {
		id, o, ok := parseFrame(sc.Bytes())
		if !ok {
			continue
		}
		select {
		case s.answers <- answer{id, o}:
		case <-s.stop:
			s.end = Outcome{Kind: OutcomeClosed, Transport: ProbeStdio}
			return
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		s.end = Outcome{Kind: OutcomeOversize, Transport: ProbeStdio, Err: err}
	} else {
		s.end = Outcome{Kind: OutcomeClosed, Transport: ProbeStdio, Err: err}
	}
}

// frame is the part of a JSON-RPC message the probe looks at.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *RPCError       `json:"error"`
}

// parseFrame reads one stdio line. It returns ok only for a response whose
// id is a probe id ("mcphost-probe-N"); banners and other non-JSON lines,
// notifications, server requests and responses to foreign ids are skipped.
// A response longer than MaxAnswerBytes is OutcomeOversize.
func parseFrame(line []byte) (id string, o Outcome, ok bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return "", Outcome{}, false
	}
	var f frame
	if json.Unmarshal(line, &f) != nil || f.Method != "" {
		return "", Outcome{}, false
	}
	if json.Unmarshal(f.ID, &id) != nil || !strings.HasPrefix(id, "mcphost-probe-") {
		return "", Outcome{}, false
	}
	return id, answerOutcome(f, len(line), ProbeStdio), true
}

// answerOutcome turns a response to our id into an Outcome.
func answerOutcome(f frame, size int, transport string) Outcome {
	switch {
	case size > MaxAnswerBytes:
		return Outcome{Kind: OutcomeOversize, Transport: transport}
	case f.Error != nil:
		return Outcome{Kind: OutcomeRPCError, Transport: transport, RPCError: f.Error}
	case f.Result != nil:
		return Outcome{Kind: OutcomeResult, Transport: transport, Result: f.Result}
	}
	// neither result nor error: not a valid DiscoverResult (row 3)
	return Outcome{Kind: OutcomeResult, Transport: transport, Result: json.RawMessage("null")}
}

// probe asks server/discover and classifies the answer; a Corrective
// decision earns one more question on the same process, a second one is a
// Fail. ctx is the window, pctx the probe deadline.
func (s *sibling) probe(ctx, pctx context.Context, p time.Duration) (Decision, error) {
	version := ModernVersion
	for attempt := 1; ; attempt++ {
		o := s.ask(pctx, probeID(attempt), version, p)
		if err := ctx.Err(); err != nil {
			return Decision{}, err
		}
		d := Classify(o)
		if d.Kind != Corrective {
			return d, nil
		}
		if attempt == 2 {
			return fail(d.Label, 0, "the server refused the probe's version twice ("+d.Evidence+")", nil), nil
		}
		version = d.Version
	}
}

// ask writes one server/discover line and waits for the response with that
// id, the end of the stream, or the probe deadline.
func (s *sibling) ask(pctx context.Context, id, version string, p time.Duration) Outcome {
	timedOut := Outcome{Kind: OutcomeTimedOut, Transport: ProbeStdio, After: p}
	if dl, ok := pctx.Deadline(); ok {
		_ = s.stdin.SetWriteDeadline(dl)
	}
	if _, err := s.stdin.Write(append(discoverRequest(id, version), '\n')); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return timedOut
		}
		return Outcome{Kind: OutcomeClosed, Transport: ProbeStdio, Err: err}
	}
	for {
		select {
		case a := <-s.answers:
			if a.id == id {
				return a.outcome
			}
		case <-s.readerDone:
			// The stream ended; an answer may still be queued before it.
			for {
				select {
				case a := <-s.answers:
					if a.id == id {
						return a.outcome
					}
				default:
					return s.end
				}
			}
		case <-pctx.Done():
			return timedOut
		}
	}
}

// reap ends the sibling's whole process group: close stdin, wait ≤ g/2,
// SIGTERM the group, wait ≤ g/2, SIGKILL the group (always, for stragglers
// that outlived the leader), then wait for the leader and for EOF on stdout
// (≤ g/2 more; a process outside the group may hold it). It never sends
// notifications/cancelled.
func (s *sibling) reap(g time.Duration) {
	close(s.stop)
	_ = s.stdin.Close()
	pgid := s.cmd.Process.Pid
	if !waitFor(s.exited, g/2) {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		waitFor(s.exited, g/2)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-s.exited // bounded: the leader is dead, and cmd.WaitDelay bounds its I/O
	// EOF on stdout means every process holding it (grandchildren included)
	// is gone, and with it whatever lock or port it held.
	waitFor(s.readerDone, g/2)
	_ = s.stdout.Close()
	<-s.readerDone
}

// waitFor reports whether ch closed within d.
func waitFor(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// inPlace runs the opt-in in-place probe (§3.4): one process, go-sdk's
// Connect at ModernVersion with a sending middleware capping only
// server/discover at the probe deadline, so that silence and errors fall
// back to initialize inside the SDK on the same process. A process that
// exits during the probe is respawned once, pinned legacy (never stored).
//
// Documented limits: -32020, -32021 and incompatible -32022 cannot be
// surfaced (the SDK falls back on them), and the probe's background
// notifications/cancelled may reach the server before or after initialize.
func (n *negotiator) inPlace(ctx context.Context, deadline time.Time, p time.Duration) (*Result, error) {
	var (
		mu      sync.Mutex
		discErr error
	)
	mw := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "server/discover" {
				return next(ctx, method, req)
			}
			pctx, cancel := context.WithDeadline(ctx, deadline)
			defer cancel()
			res, err := next(pctx, method, req)
			if err != nil && pctx.Err() != nil && ctx.Err() == nil {
				err = fmt.Errorf("no answer within %s: %w", p, err)
			}
			mu.Lock()
			discErr = err
			mu.Unlock()
			return res, err
		}
	}
	cs, cmd, err := n.dial(ctx, ModernVersion, mw)
	mu.Lock()
	derr := discErr
	mu.Unlock()
	if err == nil {
		negotiated := cs.InitializeResult().ProtocolVersion
		v := Verdict{Era: EraModern, ProtocolVersion: negotiated, Label: "inplace:sdk", ObservedAt: n.now(),
			Evidence: "modern: server/discover offered " + negotiated + " (in place)"}
		if !isModern(negotiated) {
			v.Era = EraLegacy
			v.Evidence = fmt.Sprintf("legacy: in-place server/discover failed (%v); initialize negotiated %s", derr, negotiated)
		}
		n.put(ctx, v)
		n.log.Info("negotiation: connected", "era", v.Era, "protocol_version", v.ProtocolVersion, "evidence", v.Evidence, "label", v.Label)
		return &Result{Session: cs, Verdict: v, Cmd: cmd}, nil
	}
	if ctx.Err() != nil {
		return nil, err
	}
	if closedErr(derr) || closedErr(err) {
		cause := derr
		if !closedErr(cause) {
			cause = err
		}
		n.log.Info("negotiation: the server went away during the in-place probe; respawning once, pinned legacy", "err", cause)
		v := n.legacyVerdict("inplace:respawn", fmt.Sprintf("the server exited on server/discover (%v); respawned once", cause))
		return n.session(ctx, v, sessionOpts{})
	}
	if refusesLegacy(err) {
		return n.reprobeModern(ctx, n.legacyVerdict("inplace:sdk", "in-place probe fell back to initialize"), err)
	}
	return nil, fmt.Errorf("in-place probe: %w", err)
}

// closedErr reports whether err says the connection or process went away.
func closedErr(err error) bool {
	return err != nil && (errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed))
}
