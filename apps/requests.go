package apps

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits on what an App may ask the host for (apps.md §12).
const (
	// MaxLinkBytes bounds the URL of a ui/open-link request.
	MaxLinkBytes = 2048
	// MaxMessageBytes bounds the text of one ui/message, all blocks together.
	MaxMessageBytes = 16 << 10
	// MaxMessageBlocks bounds the content blocks of one ui/message.
	MaxMessageBlocks = 16
)

// ToolVisibility reads tool._meta.ui.visibility (§3), whether or not the tool
// links an App: model reports whether a model may be offered and call the
// tool, app whether an App may call it. Absent (or not a list) means both;
// unknown values are ignored, so [] means neither.
func ToolVisibility(tool *mcp.Tool) (model, app bool) {
	if tool == nil || tool.Meta == nil {
		return true, true
	}
	ui, _ := asObject(tool.Meta["ui"])
	vis, ok := asArray(ui["visibility"])
	if !ok {
		return true, true
	}
	for _, v := range vis {
		switch v {
		case "model":
			model = true
		case "app":
			app = true
		}
	}
	return model, app
}

// CheckLink checks the url of a ui/open-link request (§12): an absolute
// http or https URL with a host, no userinfo (user@host reads as another
// host to a person), at most [MaxLinkBytes] bytes, printable ASCII only (a
// browser sends international names as punycode anyway). It returns the URL
// as Go's url package serialises it, or an error that never quotes it.
func CheckLink(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("the link is empty")
	}
	if len(raw) > MaxLinkBytes {
		return "", fmt.Errorf("the link is longer than %d bytes", MaxLinkBytes)
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= 0x20 || c >= 0x7f {
			return "", fmt.Errorf("byte %d of the link is not printable ASCII", i)
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", errors.New("the link is not a URL")
	}
	switch u.Scheme {
	case "http", "https":
	default:
		return "", errors.New("only http and https links may be opened")
	}
	switch {
	case u.Opaque != "":
		return "", errors.New("the link is not an absolute URL")
	case u.User != nil:
		return "", errors.New("links with user information (user@host) are not opened")
	case u.Hostname() == "":
		return "", errors.New("the link has no host")
	}
	return u.String(), nil
}

// Message is the content of a ui/message that the host accepted: text
// blocks only (§12).
type Message struct {
	Content []mcp.TextContent
}

// Text joins the message's text blocks with blank lines.
func (m Message) Text() string {
	parts := make([]string, len(m.Content))
	for i, c := range m.Content {
		parts[i] = c.Text
	}
	return strings.Join(parts, "\n\n")
}

// messageParams is ui/message's params: {role: "user", content: ContentBlock[]}.
type messageParams struct {
	Role    *string           `json:"role"`
	Content []json.RawMessage `json:"content"`
}

// CheckMessage checks the params of a ui/message request (§12): role, when
// present, is "user" (the spec's only value; the host still never presents
// the message as the user's); content is 1 to [MaxMessageBlocks] blocks, each
// {"type": "text", "text": string}, with valid UTF-8 and at most
// [MaxMessageBytes] bytes of text together. Other keys of a block
// (annotations, _meta) are dropped. The error never quotes the text.
func CheckMessage(params json.RawMessage) (Message, error) {
	var p messageParams
	if err := json.Unmarshal(params, &p); err != nil {
		return Message{}, errors.New("the message is not an object with a content list")
	}
	if p.Role != nil && *p.Role != "user" {
		return Message{}, errors.New(`the message role must be "user"`)
	}
	switch {
	case len(p.Content) == 0:
		return Message{}, errors.New("the message has no content")
	case len(p.Content) > MaxMessageBlocks:
		return Message{}, fmt.Errorf("the message has more than %d content blocks", MaxMessageBlocks)
	}
	var m Message
	total := 0
	for i, raw := range p.Content {
		var b struct {
			Type *string `json:"type"`
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(raw, &b); err != nil || b.Type == nil {
			return Message{}, fmt.Errorf("content block %d is not an object with a type", i)
		}
		if *b.Type != "text" || b.Text == nil {
			return Message{}, fmt.Errorf("content block %d is not text: only text blocks are accepted", i)
		}
		if !utf8.ValidString(*b.Text) {
			return Message{}, fmt.Errorf("content block %d is not valid UTF-8", i)
		}
		total += len(*b.Text)
		if total > MaxMessageBytes {
			return Message{}, fmt.Errorf("the message text is longer than %d bytes", MaxMessageBytes)
		}
		m.Content = append(m.Content, mcp.TextContent{Text: *b.Text})
	}
	if strings.TrimSpace(m.Text()) == "" {
		return Message{}, errors.New("the message text is empty")
	}
	return m, nil
}
