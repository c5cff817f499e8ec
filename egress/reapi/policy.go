package reapi

// The rules, in the order a stream meets them. All of them run before the
// credential is fetched; any failure is a PERMISSION_DENIED refusal.
//
//  1. :method is POST and :scheme is http (prior-knowledge h2c).
//  2. :authority is exactly the in-box endpoint the client dialled.
//  3. :path is an exact member of the allow-list: no prefix, suffix or
//     query string passes.
//  4. content-type is gRPC's; a first message compressed with anything
//     but gzip cannot be read and is refused.
//  5. When an instance is configured, the first request message names it
//     in the field the method's rule gives, once, as a well-formed string;
//     every top-level field must parse, so the upstream cannot read the
//     message differently from us.
//  6. Each later message of a streaming request (ByteStream Write, a
//     grpc:NAME stream) is read as it passes: its top-level fields must
//     parse, and the rule's field, where a later message sets it, must
//     pass rule 5 again. A refused message never reaches the upstream
//     whole (see later.go).
//  7. Only gRPC's own request headers and those the file names are
//     forwarded; the box's authorization never is.

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// Denied is a policy refusal; its text goes to the box as grpc-message.
type Denied struct{ Reason string }

func (d *Denied) Error() string { return d.Reason }

func deny(format string, args ...any) error {
	return &Denied{Reason: fmt.Sprintf(format, args...)}
}

// schemeHeader carries the stream's :scheme from the frame reader (see
// schemeConn) to the handler; net/http has no field for it.
const schemeHeader = "aisan-h2-scheme"

// checkHeaders applies rules 1 to 4 to a request as net/http shows it.
func checkHeaders(c *Config, authority string, r *http.Request) error {
	if r.Method != http.MethodPost {
		return deny(":method %s not permitted (gRPC uses POST)", r.Method)
	}
	if s := r.Header.Values(schemeHeader); len(s) != 1 || s[0] != "http" {
		return deny(":scheme not permitted (want http)")
	}
	if r.Host != authority {
		return deny(":authority %q not permitted (dial %s)", r.Host, authority)
	}
	if !slices.Contains(c.Methods, r.RequestURI) {
		return deny("method not permitted: %s", r.RequestURI)
	}
	ct := r.Header.Values("Content-Type")
	if len(ct) != 1 || !isGRPCContentType(ct[0]) {
		return deny("content-type %q is not gRPC with protobuf (application/grpc or application/grpc+proto)", clip(strings.Join(ct, ", ")))
	}
	if len(r.Header.Values("Grpc-Encoding")) > 1 {
		return deny("more than one grpc-encoding")
	}
	return nil
}

// isGRPCContentType accepts gRPC with the protobuf codec only: the
// policy reads the first message as protobuf, and a body in another
// codec (application/grpc+json) would be read by the server as something
// other than what was checked.
func isGRPCContentType(v string) bool {
	return strings.EqualFold(v, "application/grpc") || strings.EqualFold(v, "application/grpc+proto")
}

// forwardHeaders builds the upstream request's headers from the box's:
// only allowed names survive, so the box's authorization (and anything
// else it might use to speak for the host) is dropped before ours is set.
func forwardHeaders(c *Config, in http.Header, token string) http.Header {
	out := make(http.Header, len(grpcHeaders)+len(c.Headers)+1)
	for k, v := range in {
		lk := strings.ToLower(k)
		if lk == "te" {
			continue
		}
		if slices.Contains(grpcHeaders, lk) || slices.Contains(c.Headers, lk) {
			out[k] = slices.Clone(v)
		}
	}
	out.Set("Te", "trailers")
	out.Set("Authorization", "Bearer "+token)
	return out
}

// opsChecker answers whether an operation name came from this box's own
// Execute calls.
type opsChecker interface {
	Own(name string) bool
}

// checkFirstMessage applies rule 5 to the decoded first message.
func checkFirstMessage(c *Config, method string, msg []byte, ops opsChecker) error {
	if err := wellFormed(msg); err != nil {
		return deny("first request message of %s: %v", method, err)
	}
	rule, ok := c.rule(method)
	if !ok {
		return nil
	}
	v, err := stringField(msg, rule.Field)
	if err != nil {
		return deny("first request message of %s: field %d: %v", method, rule.Field, err)
	}
	return c.permits(rule, method, v, ops)
}

// permits applies a method's rule to the value v of its field, in the
// first request message or a later one (see laterCheck).
func (c *Config) permits(rule Rule, method, v string, ops opsChecker) error {
	inst := c.Instance
	switch rule.Match {
	case MatchEqual:
		if v == inst {
			return nil
		}
	case MatchPrefix:
		if rest, ok := strings.CutPrefix(v, inst+"/"); v == inst || ok && cleanPath(rest) {
			return nil
		}
	case MatchResource:
		if rest, ok := strings.CutPrefix(v, inst+"/"); ok && cleanPath(rest) {
			seg, _, _ := strings.Cut(rest, "/")
			if seg == "blobs" || seg == "compressed-blobs" || seg == "uploads" {
				return nil
			}
		}
	case MatchOperation:
		if ops != nil && ops.Own(v) {
			return nil
		}
		if rest, ok := strings.CutPrefix(v, inst+"/operations/"); c.Operations == OpsPrefix && ok && cleanPath(rest) {
			return nil
		}
		return deny("operation %q not permitted: not under instance %q and not one this box started", clip(v), inst)
	}
	return deny("instance not permitted: %s names %q (only %q)", method, clip(v), inst)
}

// cleanPath refuses empty, "." and ".." segments, which a server that
// normalises names could resolve outside the instance.
func cleanPath(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

func clip(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// wellFormed checks that every top-level field of a protobuf message
// parses. Nested messages stay opaque: they cannot name the instance.
func wellFormed(msg []byte) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return errors.New("malformed protobuf")
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[n:])
		if m < 0 {
			return fmt.Errorf("malformed protobuf field %d", num)
		}
		msg = msg[n+m:]
	}
	return nil
}

// stringField returns the top-level string field num. An absent field is
// "" (proto3 leaves empty strings out); a repeated occurrence is refused,
// because a parser that keeps the last one would see another value than
// a check that stops at the first.
func stringField(msg []byte, num protowire.Number) (string, error) {
	var v string
	seen := false
	for len(msg) > 0 {
		n, typ, tn := protowire.ConsumeTag(msg)
		if tn < 0 {
			return "", errors.New("malformed protobuf")
		}
		msg = msg[tn:]
		if n != num {
			m := protowire.ConsumeFieldValue(n, typ, msg)
			if m < 0 {
				return "", errors.New("malformed protobuf")
			}
			msg = msg[m:]
			continue
		}
		if typ != protowire.BytesType {
			return "", errors.New("not a string")
		}
		b, m := protowire.ConsumeBytes(msg)
		if m < 0 {
			return "", errors.New("malformed protobuf")
		}
		if seen {
			return "", errors.New("given more than once")
		}
		if !utf8.Valid(b) {
			return "", errors.New("not UTF-8")
		}
		v, seen = string(b), true
		msg = msg[m:]
	}
	return v, nil
}
