package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// readFunc reads the file named by the argument of file(). It returns the
// path it resolved the argument to, for messages.
type readFunc func(name string) (resolved string, data []byte, err error)

// evalContext returns the functions a configuration may call: env(), file()
// and executable(). There are no variables.
func (l *loader) evalContext() *hcl.EvalContext {
	return &hcl.EvalContext{
		Functions: map[string]function.Function{
			"env":        l.envFunc(),
			"file":       l.fileFunc(),
			"executable": l.executableFunc(),
		},
	}
}

// envNotSetError is returned by env() for an unset variable without default.
type envNotSetError struct{ name string }

func (e *envNotSetError) Error() string {
	return fmt.Sprintf("environment variable %q is not set", e.name)
}

// fileError is returned by file() when it cannot read the file.
type fileError struct {
	arg      string // as written in the call
	resolved string // the path that was read; "" when file() is unavailable
	err      error
}

func (e *fileError) Error() string {
	if e.resolved == "" {
		return fmt.Sprintf("cannot read %q: %v", e.arg, e.err)
	}
	return fmt.Sprintf("cannot read %q: %v", e.resolved, e.err)
}

func (e *fileError) Unwrap() error { return e.err }

// errNoDirectory is the cause of a fileError when the source was not loaded
// from a file system.
var errNoDirectory = errors.New("no directory to read from")

// errNotText is the cause of a fileError for a file that is not UTF-8.
var errNotText = errors.New("not valid UTF-8 text")

// errFunctionBudget is returned by the call of env(), file() or
// executable() whose value takes what they returned in one load past
// MaxFunctionBytes. The calls after it return an unknown value without
// reading anything, which eval takes for an error already reported.
var errFunctionBudget = errors.New("the functions returned too much")

// spend counts n more bytes returned by a function. It returns
// errFunctionBudget when they take the total past MaxFunctionBytes; the
// total then stays past it.
func (l *loader) spend(n int) error {
	l.spent += n
	if l.spent > MaxFunctionBytes {
		l.spent = MaxFunctionBytes + 1
		return errFunctionBudget
	}
	return nil
}

// executableError is returned by executable() when the binary's path is
// unknown.
type executableError struct{ err error }

func (e *executableError) Error() string {
	return fmt.Sprintf("cannot find the path of the mcphost binary: %v", e.err)
}

// envFunc is env(NAME) and env(NAME, DEFAULT).
func (l *loader) envFunc() function.Function {
	return function.New(&function.Spec{
		Description: "Returns the value of an environment variable of the mcphost process, or the default when it is not set.",
		Params: []function.Parameter{
			{Name: "name", Type: cty.String, Description: "The variable's name."},
		},
		VarParam: &function.Parameter{Name: "default", Type: cty.String, Description: "The value to use when the variable is not set."},
		Type:     function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if len(args) > 2 {
				return cty.NilVal, function.NewArgErrorf(2, "env takes a variable name and at most one default")
			}
			name := args[0].AsString()
			if name == "" {
				return cty.NilVal, function.NewArgErrorf(0, "the variable name must not be empty")
			}
			if l.spent > MaxFunctionBytes {
				return cty.UnknownVal(cty.String), nil
			}
			if v, ok := l.lookupEnv(name); ok {
				if err := l.spend(len(v)); err != nil {
					return cty.UnknownVal(cty.String), err
				}
				l.returned = append(l.returned, v)
				return cty.StringVal(v), nil
			}
			if len(args) == 2 {
				return args[1], nil
			}
			if l.opts.UnsetEnvUnknown {
				l.unsetNow = append(l.unsetNow, name)
				return cty.UnknownVal(cty.String), nil
			}
			return cty.NilVal, &envNotSetError{name: name}
		},
	})
}

// fileFunc is file(PATH).
func (l *loader) fileFunc() function.Function {
	return function.New(&function.Spec{
		Description: "Returns the contents of a regular UTF-8 text file of at most 1 MiB (MaxFileSize), read relative to the configuration file's directory. Directories, devices, named pipes and sockets are refused.",
		Params: []function.Parameter{
			{Name: "path", Type: cty.String, Description: "The file's path."},
		},
		Type: function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			arg := args[0].AsString()
			if l.spent > MaxFunctionBytes {
				return cty.UnknownVal(cty.String), nil
			}
			if l.readFile == nil {
				return cty.NilVal, &fileError{arg: arg, err: errNoDirectory}
			}
			resolved, data, err := l.readFile(arg)
			if err != nil {
				return cty.NilVal, &fileError{arg: arg, resolved: resolved, err: err}
			}
			if !utf8.Valid(data) {
				return cty.NilVal, &fileError{arg: arg, resolved: resolved, err: errNotText}
			}
			if err := l.spend(len(data)); err != nil {
				return cty.UnknownVal(cty.String), err
			}
			l.recordSource(arg, resolved)
			l.returned = append(l.returned, string(data))
			return cty.StringVal(string(data)), nil
		},
	})
}

// executableFunc is executable(): the path of the running mcphost binary.
func (l *loader) executableFunc() function.Function {
	return function.New(&function.Spec{
		Description: "Returns the path of the running mcphost binary.",
		Type:        function.StaticReturnType(cty.String),
		Impl: func([]cty.Value, cty.Type) (cty.Value, error) {
			if l.spent > MaxFunctionBytes {
				return cty.UnknownVal(cty.String), nil
			}
			p := l.opts.Executable
			if p == "" {
				var err error
				if p, err = os.Executable(); err != nil {
					return cty.NilVal, &executableError{err: err}
				}
			}
			if err := l.spend(len(p)); err != nil {
				return cty.UnknownVal(cty.String), err
			}
			return cty.StringVal(p), nil
		},
	})
}

// rewriteFunctionDiags turns the generic "Error in function call"
// diagnostics of our own functions into ones that say what to do. The
// subject becomes the whole call.
func rewriteFunctionDiags(diags hcl.Diagnostics) {
	for _, d := range diags {
		extra, ok := hcl.DiagnosticExtra[hclsyntax.FunctionCallDiagExtra](d)
		if !ok || extra.FunctionCallError() == nil {
			continue
		}
		err := extra.FunctionCallError()
		var (
			envErr  *envNotSetError
			fileErr *fileError
			exeErr  *executableError
		)
		// The argument may itself be read with env() or file(): then the
		// name or path is a value that must not be printed either.
		from := ""
		if call, ok := d.Expression.(*hclsyntax.FunctionCallExpr); ok && len(call.Args) > 0 {
			from = sourcesPhrase(call.Args[0])
		}
		switch {
		case errors.As(err, &envErr):
			d.Summary = "Environment variable not set"
			if from != "" {
				d.Detail = fmt.Sprintf("The environment variable whose name is read from %s (not shown) is not set. Set it, or give env() a default as its second argument.", from)
				break
			}
			d.Detail = fmt.Sprintf("The environment variable %q is not set. Set it, or give a default: env(%q, \"default\").", envErr.name, envErr.name)
		case errors.As(err, &fileErr):
			d.Summary, d.Detail = fileDiag(fileErr, from)
		case errors.Is(err, errFunctionBudget):
			d.Summary = "Functions return too much"
			d.Detail = fmt.Sprintf("env(), file() and executable() may return at most %d bytes (16 MiB) in one configuration, all calls together, and this call passes that. Each call counts, also one that reads the same file or variable again. Pass a large file's path to the server instead (in args or env) and let it read the file.", MaxFunctionBytes)
		case errors.As(err, &exeErr):
			d.Summary = "Executable path unknown"
			d.Detail = fmt.Sprintf("executable() returns the path of the running mcphost binary, but it could not be found: %v. Write the path of mcphost instead.", exeErr.err)
		default:
			continue
		}
		if d.Context != nil {
			d.Subject = d.Context
			d.Context = nil
		}
	}
}

// fileDiag is the summary and detail of a file() call that failed; from,
// when not "", is where its path was read (the path is then not shown).
func fileDiag(fileErr *fileError, from string) (summary, detail string) {
	var (
		tooLarge   *tooLargeError
		notRegular *notRegularError
	)
	// call is the call as written, target the file it reads.
	call := fmt.Sprintf("file(%q)", fileErr.arg)
	target, arg := strconv.Quote(fileErr.resolved), strconv.Quote(fileErr.arg)
	cause := fileErr.err
	if from != "" {
		call = "file(...)"
		target = "the path read from " + from + " (not shown)"
		arg = target
		var pathErr *fs.PathError
		if errors.As(cause, &pathErr) {
			cause = pathErr.Err // without the path
		}
	}
	switch {
	case errors.Is(fileErr.err, errNoDirectory):
		summary = "File not available"
		detail = fmt.Sprintf("%s cannot be used here: this configuration was not loaded from a file, so there is no directory to read %s from. Write the value into the configuration instead.", call, arg)
	case errors.Is(fileErr.err, fs.ErrNotExist):
		summary = "File not found"
		detail = fmt.Sprintf("%s reads %s (paths are relative to the configuration file's directory), and that file does not exist. Check the path.", call, target)
		if from != "" {
			detail = fmt.Sprintf("%s reads %s, and that file does not exist. Check the path; it is relative to the configuration file's directory.", call, target)
		}
	case errors.As(fileErr.err, &tooLarge):
		summary = "File too large"
		size := fmt.Sprintf("has %d bytes", tooLarge.size)
		if tooLarge.size < 0 {
			size = "grew past the limit while it was read"
		}
		detail = fmt.Sprintf("%s reads %s, which %s; file() reads at most %d bytes (1 MiB). Pass the file's path to the server instead (in args or env) and let it read the file.", call, target, size, MaxFileSize)
	case errors.As(fileErr.err, &notRegular):
		summary = "Not a regular file"
		detail = fmt.Sprintf("%s reads %s, which is %s. file() reads only regular files, so that loading the configuration cannot wait on a pipe or read without end; point it at a regular file.", call, target, fileKind(notRegular.mode))
	case errors.Is(fileErr.err, errNotText):
		summary = "File is not text"
		detail = fmt.Sprintf("%s reads %s, which is not valid UTF-8 text. file() returns a string, so it can only read text files.", call, target)
	default:
		summary = "Cannot read file"
		detail = fmt.Sprintf("%s could not read %s: %v. Check the path and its permissions.", call, target, cause)
	}
	return summary, detail
}
