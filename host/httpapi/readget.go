package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Reading a resource and getting a prompt: what a server offers besides
// tools, for the API, the CLI through the daemon and the WebShell. Both go
// to the server (through the host cache for resources, as the server
// allows) for a caller who may see it, with the caller's origin; a ui://
// resource that links a tool's MCP App is answered as the gateway answers
// it (after the display plugins and the app phase).

type readResourceRequest struct {
	URI string `json:"uri"`
	// SessionID, when set, records the read in that session of the
	// caller's transcript.
	SessionID string `json:"sessionId"`
}

// readResource answers POST /api/v1/servers/:name/resources/read.
func (a *api) readResource(c *gin.Context) {
	var req readResourceRequest
	if !a.decode(c, &req, false) {
		return
	}
	if req.URI == "" {
		writeError(c, http.StatusBadRequest, "bad_request", `the body needs "uri", the resource to read`)
		return
	}
	res, err := a.h.ReadResource(c.Request.Context(), caller(c), req.SessionID, c.Param("name"), req.URI, nil)
	if err == nil && res.NeedsInput() {
		err = errNeedsInput
	}
	if err != nil {
		a.failRelayed(c, c.Param("name"), err)
		return
	}
	c.JSON(http.StatusOK, res)
}

type getPromptRequest struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments"`
	// SessionID, as for a read.
	SessionID string `json:"sessionId"`
}

// getPrompt answers POST /api/v1/servers/:name/prompts/get.
func (a *api) getPrompt(c *gin.Context) {
	var req getPromptRequest
	if !a.decode(c, &req, false) {
		return
	}
	if req.Name == "" {
		writeError(c, http.StatusBadRequest, "bad_request", `the body needs "name", the prompt to get`)
		return
	}
	res, err := a.h.GetPrompt(c.Request.Context(), caller(c), req.SessionID, c.Param("name"), &mcp.GetPromptParams{Name: req.Name, Arguments: req.Arguments}, nil)
	if err == nil && res.NeedsInput() {
		err = errNeedsInput
	}
	if err != nil {
		a.failRelayed(c, c.Param("name"), err)
		return
	}
	c.JSON(http.StatusOK, res)
}

// errNeedsInput is a server's input_required answer to a read or a get,
// which only an MCP client of the gateway can answer.
var errNeedsInput = errors.New("the server asks the caller for input (input_required), which only an MCP client of the gateway can give here")

// failRelayed answers the failure of a request relayed to server: the
// server's own JSON-RPC error with its code and message (404 for a
// resource the server says does not exist, 400 for parameters it refuses,
// such as an unknown prompt, 502 otherwise), a refused App as 403, a server that did not answer in
// time as 504; anything else as fail does.
func (a *api) failRelayed(c *gin.Context, server string, err error) {
	var (
		je *jsonrpc.Error
		ae *host.AppResourceError
		pe *host.PolicyError
	)
	switch {
	case errors.As(err, &pe):
		c.JSON(http.StatusForbidden, gin.H{
			"error": gin.H{"code": "denied_by_policy", "message": pe.Message, "rule": pe.Rule, "phase": pe.Phase}})
	case errors.Is(err, errNeedsInput):
		writeError(c, http.StatusConflict, "input_required", err.Error())
	case errors.As(err, &ae):
		writeError(c, http.StatusForbidden, "denied", err.Error())
	case errors.As(err, &je):
		status := http.StatusBadGateway
		switch je.Code {
		case codeResourceNotFound:
			status = http.StatusNotFound
		case jsonrpc.CodeInvalidParams: // what go-sdk answers for an unknown resource or prompt
			status = http.StatusBadRequest
		}
		c.JSON(status, gin.H{"error": gin.H{"code": "upstream_error", "jsonrpcCode": je.Code,
			"message": fmt.Sprintf("server %s: %s", server, je.Message)}})
	case errors.Is(err, context.DeadlineExceeded):
		writeError(c, http.StatusGatewayTimeout, "timeout", fmt.Sprintf("server %s did not answer within its call_timeout", server))
	default:
		a.fail(c, err)
	}
}

// codeResourceNotFound is MCP's JSON-RPC error code for a resource that
// does not exist.
const codeResourceNotFound = -32002
