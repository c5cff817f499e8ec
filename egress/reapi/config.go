package reapi

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pelletier/go-toml/v2"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/aisan-dev/aisan/egress/cred"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// Config is one gRPC backend as its TOML file describes it. Build one with
// [Parse] or [Load]; the loaders fill in the REAPI defaults, so a Config
// is always complete and a reviewer reads the whole policy from it.
type Config struct {
	// Name is "reapi" for the REAPI backend, or the NAME of grpc:NAME.
	Name string
	// Generic is true for grpc:NAME: no default methods and no instance
	// rule unless the file names one.
	Generic bool
	// File is where the configuration came from, for error messages.
	File string

	// Upstream is host:port of the real service, reached over TLS.
	Upstream string
	// Instance is the only instance the box may name.
	Instance string
	// TokenCommand and TokenFile are the two credential sources; exactly
	// one is set.
	TokenCommand string
	TokenFile    string
	// Methods is the exact :path allow-list.
	Methods []string
	// Headers are extra request headers (lowercase) forwarded from the
	// box beyond gRPC's own.
	Headers []string
	// Operations is how operation names are checked: OpsOwn or OpsPrefix.
	Operations string
	// Rules says, per method, where the first request message names the
	// instance. For reapi every method has one; a grpc:NAME backend
	// checks only the methods its file gives a rule.
	Rules []Rule
	// MaxFirstMessage bounds the first request message, which is held in
	// memory until it has been checked.
	MaxFirstMessage int
}

// Operation-name policies.
const (
	// OpsOwn lets a box wait on or read only operations that its own
	// Execute calls returned.
	OpsOwn = "own"
	// OpsPrefix also accepts names under INSTANCE/operations/, for
	// services that prefix operation names with the instance (RBE does).
	OpsPrefix = "prefix"
)

// Match is how a rule compares the named field with the instance.
type Match string

// Matches.
const (
	// MatchEqual: the field is the instance name itself.
	MatchEqual Match = "equal"
	// MatchResource: a ByteStream resource name, INSTANCE/blobs/…,
	// INSTANCE/compressed-blobs/… or INSTANCE/uploads/….
	MatchResource Match = "resource"
	// MatchOperation: an operation name, checked by [Config.Operations].
	MatchOperation Match = "operation"
	// MatchPrefix: the field is the instance or starts with INSTANCE/.
	MatchPrefix Match = "prefix"
)

// Rule names the top-level field of a method's first request message that
// carries the instance.
type Rule struct {
	Method string           `toml:"method"`
	Field  protowire.Number `toml:"field"`
	Match  Match            `toml:"match"`
}

// DefaultMaxFirstMessage is large enough for a full BatchUpdateBlobs
// request at the 4 MiB gRPC default, with room to spare.
const DefaultMaxFirstMessage = 8 << 20

const (
	pkgREv2 = "/build.bazel.remote.execution.v2."
	pkgOps  = "/google.longrunning.Operations/"
	pkgBS   = "/google.bytestream.ByteStream/"
)

// DefaultMethods is the REAPI allow-list. ActionCache/UpdateActionResult
// is left out on purpose: a box that can write the action cache can
// poison results other builds trust.
var DefaultMethods = []string{
	pkgREv2 + "Capabilities/GetCapabilities",
	pkgREv2 + "ActionCache/GetActionResult",
	pkgREv2 + "ContentAddressableStorage/FindMissingBlobs",
	pkgREv2 + "ContentAddressableStorage/BatchReadBlobs",
	pkgREv2 + "ContentAddressableStorage/BatchUpdateBlobs",
	pkgREv2 + "ContentAddressableStorage/GetTree",
	pkgREv2 + "Execution/Execute",
	pkgREv2 + "Execution/WaitExecution",
	pkgOps + "GetOperation",
	pkgOps + "WaitOperation",
	pkgBS + "Read",
	pkgBS + "Write",
}

// executeMethod is the call whose answers name the box's own operations.
const executeMethod = pkgREv2 + "Execution/Execute"

// reapiRules knows where every REAPI request names its instance, including
// methods left out of the default list, so that a file which adds one
// does not also have to say where its instance is.
var reapiRules = []Rule{
	{pkgREv2 + "Capabilities/GetCapabilities", 1, MatchEqual},
	{pkgREv2 + "ActionCache/GetActionResult", 1, MatchEqual},
	{pkgREv2 + "ActionCache/UpdateActionResult", 1, MatchEqual},
	{pkgREv2 + "ContentAddressableStorage/FindMissingBlobs", 1, MatchEqual},
	{pkgREv2 + "ContentAddressableStorage/BatchReadBlobs", 1, MatchEqual},
	{pkgREv2 + "ContentAddressableStorage/BatchUpdateBlobs", 1, MatchEqual},
	{pkgREv2 + "ContentAddressableStorage/GetTree", 1, MatchEqual},
	{pkgREv2 + "Execution/Execute", 1, MatchEqual},
	{pkgREv2 + "Execution/WaitExecution", 1, MatchOperation},
	{pkgOps + "GetOperation", 1, MatchOperation},
	{pkgOps + "WaitOperation", 1, MatchOperation},
	{pkgOps + "CancelOperation", 1, MatchOperation},
	{pkgOps + "DeleteOperation", 1, MatchOperation},
	{pkgBS + "Read", 1, MatchResource},
	{pkgBS + "Write", 1, MatchResource},
	{pkgBS + "QueryWriteStatus", 1, MatchResource},
}

// REAPI calls by shape. The server streams its answers to these, so each
// message is flushed as it comes; the others answer once, and their
// answer leaves with its trailers.
var reapiServerStreams = []string{
	pkgREv2 + "ContentAddressableStorage/GetTree",
	pkgREv2 + "Execution/Execute",
	pkgREv2 + "Execution/WaitExecution",
	pkgBS + "Read",
}

// reapiClientStreams are the calls whose request is more than one
// message; every other REAPI request is read whole before it is sent.
var reapiClientStreams = []string{pkgBS + "Write"}

// serverStreams reports whether method may answer with several messages;
// a grpc:NAME backend does not know, so every call is treated as one.
func (c *Config) serverStreams(method string) bool {
	return c.Generic || slices.Contains(reapiServerStreams, method)
}

// clientStreams is serverStreams for the request side.
func (c *Config) clientStreams(method string) bool {
	return c.Generic || slices.Contains(reapiClientStreams, method)
}

// grpcHeaders are the request headers of gRPC itself, always forwarded.
var grpcHeaders = []string{"content-type", "te", "grpc-timeout", "grpc-encoding", "grpc-accept-encoding", "user-agent"}

// neverForward are headers a file may not name: the credential is ours to
// set, and the rest belong to the connection, not the request.
var neverForward = []string{"authorization", "proxy-authorization", "cookie", "host", "connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", schemeHeader}

type fileConfig struct {
	Upstream        string   `toml:"upstream"`
	Instance        string   `toml:"instance"`
	TokenCommand    string   `toml:"token_command"`
	TokenFile       string   `toml:"token_file"`
	Methods         []string `toml:"methods"`
	Headers         []string `toml:"headers"`
	Operations      string   `toml:"operations"`
	Rules           []Rule   `toml:"rule"`
	MaxFirstMessage int      `toml:"max_first_message"`
}

var (
	nameRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`) })
	methodRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^/[A-Za-z_][A-Za-z0-9_.]*/[A-Za-z_][A-Za-z0-9_]*$`) })
	headerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`) })
)

// maxConfig bounds the file: a policy is a few lines.
const maxConfig = 1 << 20

// Load reads the configuration of backend name ("reapi", or NAME of
// grpc:NAME with generic set) from path, refusing a symlink or anything
// but a regular file.
func Load(name string, generic bool, path string) (*Config, error) {
	data, err := regfile.Read(path, maxConfig)
	if err != nil {
		return nil, fmt.Errorf("egress %s: %w", name, err)
	}
	return Parse(name, generic, path, data)
}

// Parse is [Load] on bytes already read; file names them in errors.
func Parse(name string, generic bool, file string, data []byte) (*Config, error) {
	if !nameRE().MatchString(name) {
		return nil, fmt.Errorf("egress backend name %q: use 1 to 32 of a-z, 0-9, '-' and '_', starting with a letter", name)
	}
	if !generic && name != "reapi" {
		return nil, fmt.Errorf("egress backend %q: only \"reapi\" has built-in rules; use grpc:%s=FILE for another service", name, name)
	}
	var fc fileConfig
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&fc); err != nil {
		return nil, tomlError(file, err)
	}
	c := &Config{
		Name: name, Generic: generic, File: file,
		Upstream: fc.Upstream, Instance: fc.Instance,
		TokenCommand: fc.TokenCommand, TokenFile: fc.TokenFile,
		Methods: fc.Methods, Headers: fc.Headers, Operations: fc.Operations,
		Rules: fc.Rules, MaxFirstMessage: fc.MaxFirstMessage,
	}
	if err := c.complete(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return c, nil
}

func tomlError(file string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		var b strings.Builder
		for i, e := range strict.Errors {
			if i > 0 {
				b.WriteString("; ")
			}
			row, col := e.Position()
			fmt.Fprintf(&b, "%s:%d:%d: unknown key %q", file, row, col, strings.Join(e.Key(), "."))
		}
		return errors.New(b.String() + " (known keys: upstream, instance, token_command, token_file, methods, headers, operations, max_first_message, [[rule]] method/field/match)")
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		return fmt.Errorf("%s:%d:%d: %w", file, row, col, err)
	}
	return fmt.Errorf("%s: %w", file, err)
}

// complete fills in defaults and checks the result: one named check after
// another, each error naming the key it is about.
func (c *Config) complete() error {
	host, port, err := net.SplitHostPort(c.Upstream)
	switch {
	case c.Upstream == "":
		return errors.New(`upstream is required (host:port of the service, for example "remotebuildexecution.googleapis.com:443")`)
	case err != nil || host == "" || port == "":
		return fmt.Errorf("upstream %q: want host:port", c.Upstream)
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return fmt.Errorf("upstream %q: bad port", c.Upstream)
	}
	if strings.ContainsAny(c.Upstream, "/ @?#") {
		return fmt.Errorf("upstream %q: want host:port without a scheme or path", c.Upstream)
	}
	if (c.TokenCommand == "") == (c.TokenFile == "") {
		return errors.New("set exactly one of token_command and token_file")
	}
	if !c.Generic && c.Instance == "" {
		return errors.New(`instance is required for reapi (for example "projects/P/instances/default_instance")`)
	}
	if strings.ContainsFunc(c.Instance, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Errorf("instance %q: control characters", c.Instance)
	}
	if len(c.Methods) == 0 {
		if c.Generic {
			return errors.New("methods is required for a grpc:NAME backend (exact paths such as \"/pkg.Service/Method\")")
		}
		c.Methods = slices.Clone(DefaultMethods)
	}
	for _, m := range c.Methods {
		if !methodRE().MatchString(m) {
			return fmt.Errorf("methods: %q is not a gRPC path like \"/pkg.Service/Method\"", m)
		}
	}
	c.Methods = sortUniq(c.Methods)
	for i, h := range c.Headers {
		h = strings.ToLower(h)
		if !headerRE().MatchString(h) {
			return fmt.Errorf("headers: %q is not a header name", c.Headers[i])
		}
		if slices.Contains(neverForward, h) || strings.HasPrefix(h, "grpc-") && !slices.Contains(grpcHeaders, h) {
			return fmt.Errorf("headers: %q is never forwarded from the box", h)
		}
		c.Headers[i] = h
	}
	c.Headers = sortUniq(c.Headers)
	switch c.Operations {
	case "":
		c.Operations = OpsOwn
	case OpsOwn, OpsPrefix:
	default:
		return fmt.Errorf("operations %q: want %q or %q", c.Operations, OpsOwn, OpsPrefix)
	}
	if c.MaxFirstMessage == 0 {
		c.MaxFirstMessage = DefaultMaxFirstMessage
	}
	if c.MaxFirstMessage < 1<<10 || c.MaxFirstMessage > 64<<20 {
		return fmt.Errorf("max_first_message %d: want 1024 to 67108864 bytes", c.MaxFirstMessage)
	}
	return c.completeRules()
}

func (c *Config) completeRules() error {
	for _, r := range c.Rules {
		if !slices.Contains(c.Methods, r.Method) {
			return fmt.Errorf("rule for %q: not in methods", r.Method)
		}
		if r.Field < 1 || r.Field > protowire.MaxValidNumber {
			return fmt.Errorf("rule for %q: field %d is not a protobuf field number", r.Method, r.Field)
		}
		switch r.Match {
		case MatchEqual, MatchResource, MatchOperation, MatchPrefix:
		default:
			return fmt.Errorf("rule for %q: match %q: want equal, prefix, resource or operation", r.Method, r.Match)
		}
		if n := countRules(c.Rules, r.Method); n > 1 {
			return fmt.Errorf("rule for %q: given %d times", r.Method, n)
		}
		if c.Instance == "" {
			return fmt.Errorf("rule for %q: a rule needs instance", r.Method)
		}
	}
	if c.Instance == "" {
		return nil
	}
	if !c.Generic {
		for _, r := range reapiRules {
			if slices.Contains(c.Methods, r.Method) && countRules(c.Rules, r.Method) == 0 {
				c.Rules = append(c.Rules, r)
			}
		}
	}
	for _, m := range c.Methods {
		if !c.Generic && countRules(c.Rules, m) == 0 {
			return fmt.Errorf("methods: %q has no instance rule; add [[rule]] method = %q, field = N, match = \"equal\"", m, m)
		}
	}
	slices.SortFunc(c.Rules, func(a, b Rule) int { return strings.Compare(a.Method, b.Method) })
	return nil
}

func countRules(rules []Rule, method string) int {
	n := 0
	for _, r := range rules {
		if r.Method == method {
			n++
		}
	}
	return n
}

func sortUniq(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// rule returns the instance rule of method, if there is one.
func (c *Config) rule(method string) (Rule, bool) {
	i, ok := slices.BinarySearchFunc(c.Rules, method, func(r Rule, m string) int { return strings.Compare(r.Method, m) })
	if !ok {
		return Rule{}, false
	}
	return c.Rules[i], true
}

// Source builds the credential source the file names: the file, read on
// every stream, or the command, whose token is renewed ahead of its end.
func (c *Config) Source() (cred.Source, error) {
	if c.TokenFile != "" {
		return cred.File{Path: c.TokenFile}, nil
	}
	cmd, err := cred.NewCommand("token_command in "+c.File, c.TokenCommand)
	if err != nil {
		return nil, err
	}
	// Not in the launch's directory, the repository a box writes: a
	// program there (python -m, npx, a .npmrc) would run or read the
	// box's files.
	cmd.Dir = "/"
	return cred.Ahead{C: cmd, Margin: renewMargin}, nil
}

// renewMargin is how long before its end a token is renewed in the
// background, so streams keep going while the helper runs.
const renewMargin = 2 * time.Minute
