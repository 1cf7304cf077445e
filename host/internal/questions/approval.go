package questions

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// defaultApprovalTimeout is how long a call paused by an `ask` rule waits
// for an answer before it is denied.
const DefaultApprovalTimeout = 2 * time.Minute

// maxPendingApprovals bounds the pending approvals of one principal, so a
// client cannot pile up paused calls: across every replica of a cluster.
const MaxPendingApprovals = 32

// Approval is a call paused by an `ask` policy, waiting for its principal
// (or the rule's approvers) to approve it once or deny it.
type Approval struct {
	ID string `json:"id"`
	// Op is the operation that waits: empty for a tool call; for another
	// (resources/read, prompts/get, …) Tool is what it is about, the
	// resource's URI or the prompt's name.
	Op        string          `json:"op,omitempty"`
	SessionID string          `json:"sessionId"`
	CallID    string          `json:"callId"`
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// Origin is where the call came from: "user" (the WebShell), "app"
	// (an MCP App in it), "api" (the CLI or another API client) or
	// "gateway" (an MCP client of the gateway, named by Client).
	Origin string `json:"origin"`
	// Client is the name the gateway client gave (its clientInfo), for
	// Origin "gateway"; empty otherwise.
	Client  string    `json:"client,omitempty"`
	Rule    string    `json:"rule"`
	Message string    `json:"message"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
	// Principal is whose call waits.
	Principal string `json:"principal"`
	// Approvers name who may answer: the rule's approvers, principal or
	// group names; empty means Principal.
	Approvers []string `json:"approvers,omitempty"`
	// CanAnswer says whether the caller that lists the approval, or hears
	// of it, may answer it (it may see it as its principal or an admin).
	CanAnswer bool `json:"canAnswer"`
}

// ApprovalDone says how a pending approval ended: "approved", "denied",
// "expired" or "cancelled".
type ApprovalDone struct {
	ID        string `json:"id"`
	SessionID string `json:"sessionId"`
	CallID    string `json:"callId"`
	Outcome   string `json:"outcome"`
	// Principal and Approvers are the approval's: who hears of its end.
	Principal string   `json:"principal"`
	Approvers []string `json:"approvers,omitempty"`
}

// Outcomes of an approval.
const (
	ApprovalApproved  = "approved"
	ApprovalDenied    = "denied"
	ApprovalExpired   = "expired"
	ApprovalCancelled = "cancelled"
)

// ErrTooManyApprovals is returned when a principal already has
// maxPendingApprovals calls waiting.
var ErrTooManyApprovals = errors.New("too many calls are waiting for approval")

// ErrNotApprover is the answer to someone who may see an approval but
// not answer it: the principal whose call waits, when the rule names
// other approvers, or an admin who is not one of them (the API answers
// 403).
var ErrNotApprover = errors.New("only the approvers the policy names may answer this approval")

// ApprovalText says how an approval that was not given ended.
func ApprovalText(outcome string, timeout time.Duration) string {
	switch outcome {
	case ApprovalDenied:
		return "you denied it"
	case ApprovalExpired:
		return fmt.Sprintf("the approval expired (no answer within %s)", timeout)
	default:
		return "the call was cancelled while it waited for approval"
	}
}
