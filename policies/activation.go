package policies

import (
	"bytes"
	"encoding/json"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/interpreter"
)

// activation resolves the variables of one Decide call straight from the
// Input, converting each at most once, so a variable no evaluated rule reads
// costs nothing.
type activation struct {
	in      *Input
	op      string // the operation asked: in.Op, or the phase's default
	adapter types.Adapter
	vals    [12]any // by variable index, see varIndex
}

var _ interpreter.Activation = (*activation)(nil)

func (a *activation) ResolveName(name string) (any, bool) {
	i := varIndex(name)
	if i < 0 {
		return nil, false
	}
	if v := a.vals[i]; v != nil {
		return v, true
	}
	v := a.convert(i)
	a.vals[i] = v
	return v, true
}

func varIndex(name string) int {
	switch name {
	case "server":
		return 0
	case "era":
		return 1
	case "origin":
		return 2
	case "principal":
		return 3
	case "tool":
		return 4
	case "args":
		return 5
	case "result":
		return 6
	case "app":
		return 7
	case "client":
		return 8
	case "op":
		return 9
	case "resource":
		return 10
	case "prompt":
		return 11
	}
	return -1
}

func (a *activation) convert(i int) any {
	in := a.in
	switch i {
	case 0:
		return types.String(in.Server)
	case 1:
		return types.String(in.Era)
	case 2:
		return types.String(in.Origin)
	case 3:
		return a.adapter.NativeToValue(&in.Principal)
	case 4:
		return a.adapter.NativeToValue(&in.Tool)
	case 5:
		return in.args.value(in, a.adapter)
	case 6:
		if in.Result == nil {
			return types.NewErr("the input has no result")
		}
		return a.adapter.NativeToValue(in.Result)
	case 8:
		return a.adapter.NativeToValue(&in.Client)
	case 9:
		return types.String(a.op)
	case 10:
		r := in.Resource
		if r == nil {
			r = &Resource{}
		}
		return a.adapter.NativeToValue(r)
	case 11:
		p := in.Prompt
		if p == nil {
			p = &Prompt{}
		}
		return a.adapter.NativeToValue(p)
	default:
		if in.App == nil {
			return types.NewErr("the input has no app")
		}
		return a.adapter.NativeToValue(in.App)
	}
}

func (a *activation) Parent() interpreter.Activation { return nil }

// argsCache holds the arguments once converted, so every phase of one Input
// shares one decode.
type argsCache struct {
	val any
}

// value returns in.Args as it is (the interpreter reads a map[string]any
// directly), else RawArgs behind a lazy map, else an empty map. Invalid
// JSON becomes an error value: any rule reading args then denies.
func (c *argsCache) value(in *Input, adapter types.Adapter) any {
	if c.val != nil {
		return c.val
	}
	switch {
	case in.Args != nil:
		c.val = in.Args
	case len(bytes.TrimSpace(in.RawArgs)) == 0:
		c.val = map[string]any{}
	default:
		l, err := newLazyArgs(in.RawArgs, adapter)
		switch {
		case err != nil:
			c.val = types.NewErr("%v", err)
		case l != nil:
			c.val = l
		default: // valid JSON, not an object
			var v any
			if err := json.Unmarshal(in.RawArgs, &v); err != nil {
				c.val = types.NewErr("args: %v", err)
			} else if v == nil {
				c.val = map[string]any{}
			} else {
				c.val = adapter.NativeToValue(v)
			}
		}
	}
	return c.val
}
