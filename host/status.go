package host

import (
	"github.com/mcphost/mcphost/host/internal/appgate"
	"github.com/mcphost/mcphost/host/internal/generation"
	"github.com/mcphost/mcphost/host/internal/pipeline"
	"github.com/mcphost/mcphost/host/internal/questions"
	"github.com/mcphost/mcphost/host/internal/upstream"
)

// A server's state and its tools, as the doors see them: package upstream.

// The states of a server (see upstream.State).
const (
	StateConnecting = upstream.StateConnecting
	StateReady      = upstream.StateReady
	StateFailed     = upstream.StateFailed
	StateNeedsAuth  = upstream.StateNeedsAuth
	StateAuthError  = upstream.StateAuthError
)

// Era names the MCP protocol era a session speaks.
const (
	EraLegacy = upstream.EraLegacy // initialize handshake, protocol ≤ 2025-11-25
	EraModern = upstream.EraModern // stateless 2026-07-28 with server/discover
)

// ServerStatus is a snapshot of one server's state.
type ServerStatus = upstream.ServerStatus

// Tool is one tool of one server, addressed as Server.Name.
type Tool = upstream.Tool

// ToolView is the flat description of a tool that `mcphost tools -json`
// and GET /api/v1/tools print.
type ToolView = upstream.ToolView

// What a call carries to and hears from its server: package upstream.
type (
	// Progress is one progress notification of a running call.
	Progress = upstream.Progress
	// CallInput is what a gateway client relays for a server's input
	// requests.
	CallInput = upstream.CallInput
	// ClientRelay is a gateway client's way to answer its own call's
	// requests on a per-client session.
	ClientRelay = upstream.ClientRelay
	// NotReadyError is returned when a server has no live session.
	NotReadyError = upstream.NotReadyError
	// ArgumentsError refuses a call's arguments.
	ArgumentsError = upstream.ArgumentsError
)

// What a reload plans and what it did, and the error for a server the
// config does not have: package generation.
type (
	ReloadPlan         = generation.ReloadPlan
	PrincipalPlan      = generation.PrincipalPlan
	UnknownServerError = generation.UnknownServerError
)

// What the pipeline tells the doors: package pipeline.
type (
	// PolicyError is a call or operation a policy refused.
	PolicyError = pipeline.PolicyError
	// RateLimitError is a call refused by its principal's rate_limit.
	RateLimitError = pipeline.RateLimitError
)

// The App gate's answers: package appgate.
type (
	// AppDeniedError is a request of an MCP App that the App gate refused.
	AppDeniedError = appgate.DeniedError
	// AppLimitError is an App request over its App's limit.
	AppLimitError = appgate.LimitError
	// AppCapabilities says which App requests a server's switches allow.
	AppCapabilities = appgate.Capabilities
)

// A server's questions and their answers: package questions.
type (
	// Elicitation is a server's question to a call's principal.
	Elicitation = questions.Elicitation
	// ElicitationAnswer is the principal's answer.
	ElicitationAnswer = questions.ElicitationAnswer
	// ElicitationAnswerError is an answer that does not fit the question.
	ElicitationAnswerError = questions.ElicitationAnswerError
)

// Elicitation modes, actions and outcomes, and the bound on one call's
// questions (see package questions).
const (
	ElicitURL     = questions.ElicitURL
	ElicitAccept  = questions.ElicitAccept
	ElicitDecline = questions.ElicitDecline
	ElicitCancel  = questions.ElicitCancel
)

// A call paused by an `ask` rule: package questions.
type (
	// Approval is a call paused by an `ask` policy.
	Approval = questions.Approval
	// ApprovalDone says how a pending approval ended.
	ApprovalDone = questions.ApprovalDone
)

// The outcomes of an approval.
const (
	ApprovalApproved  = questions.ApprovalApproved
	ApprovalDenied    = questions.ApprovalDenied
	ApprovalCancelled = questions.ApprovalCancelled
)

// The refusals of an approval's question or answer.
var (
	ErrTooManyApprovals = questions.ErrTooManyApprovals
	ErrNotApprover      = questions.ErrNotApprover
)
