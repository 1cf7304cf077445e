package policies

import (
	"bytes"
	"encoding/json"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"
)

// activation resolves the variables of one Decide call straight from the
// Input, so a variable no evaluated rule reads costs nothing.
type activation struct {
	in *Input
}

var _ interpreter.Activation = (*activation)(nil)

func (a *activation) ResolveName(name string) (any, bool) {
	in := a.in
	switch name {
	case "server":
		return types.String(in.Server), true
	case "era":
		return types.String(in.Era), true
	case "origin":
		return types.String(in.Origin), true
	case "principal":
		return &in.Principal, true
	case "tool":
		return &in.Tool, true
	case "args":
		return in.args.value(in), true
	case "result":
		if in.Result == nil {
			return types.NewErr("the input has no result"), true
		}
		return in.Result, true
	case "app":
		if in.App == nil {
			return types.NewErr("the input has no app"), true
		}
		return in.App, true
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }

// argsCache holds the arguments once converted, so every phase of one Input
// shares one decode.
type argsCache struct {
	done bool
	val  any
}

func (c *argsCache) value(in *Input) any {
	if c.done {
		return c.val
	}
	c.done = true
	switch {
	case in.Args != nil:
		c.val = in.Args
	case len(bytes.TrimSpace(in.RawArgs)) == 0:
		c.val = map[string]any{}
	default:
		var v any
		if err := json.Unmarshal(in.RawArgs, &v); err != nil {
			c.val = types.NewErr("args: %v", err)
		} else if v == nil {
			c.val = map[string]any{}
		} else {
			c.val = v
		}
	}
	return c.val
}

var _ ref.Val = types.String("")
