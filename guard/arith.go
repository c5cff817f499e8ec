package guard

// Constant arithmetic: $((…)), let and (( )) where the input fixes the
// operands, so that kill $((0-1)) is read as kill -1.

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxArithDepth bounds the recursion of arith.
const maxArithDepth = 64

// arith evaluates an arithmetic expression whose value the input fixes.
// ok is false when it depends on something unknown or does not evaluate.
func (c *checker) arith(fr *frame, x syntax.ArithmExpr, depth int) (int64, bool) {
	if depth > maxArithDepth || !c.step("", 1) {
		return 0, false
	}
	switch x := x.(type) {
	case *syntax.Word:
		if s, ok := staticWord(x); ok {
			s = strings.TrimSpace(s)
			if isName(s) {
				return c.varNumber(s)
			}
			return parseArithNum(s)
		}
		a := c.word(fr, x)
		if a.known {
			return parseArithNum(strings.TrimSpace(a.text))
		}
		if len(a.cands) == 1 && !a.zero {
			return parseArithNum(strings.TrimSpace(a.cands[0]))
		}
		return 0, false
	case *syntax.ParenArithm:
		return c.arith(fr, x.X, depth+1)
	case *syntax.UnaryArithm:
		v, ok := c.arith(fr, x.X, depth+1)
		if !ok {
			return 0, false
		}
		switch x.Op {
		case syntax.Minus:
			return -v, true
		case syntax.Plus:
			return v, true
		case syntax.BitNegation:
			return ^v, true
		case syntax.Not:
			return b2i(v == 0), true
		}
		return 0, false
	case *syntax.BinaryArithm:
		if x.Op == syntax.TernQuest {
			cond, ok := c.arith(fr, x.X, depth+1)
			y, isColon := x.Y.(*syntax.BinaryArithm)
			if !ok || !isColon || y.Op != syntax.TernColon {
				return 0, false
			}
			if cond != 0 {
				return c.arith(fr, y.X, depth+1)
			}
			return c.arith(fr, y.Y, depth+1)
		}
		l, ok := c.arith(fr, x.X, depth+1)
		if !ok {
			return 0, false
		}
		r, ok := c.arith(fr, x.Y, depth+1)
		if !ok {
			return 0, false
		}
		return binArith(x.Op, l, r)
	}
	return 0, false
}

func binArith(op syntax.BinAritOperator, l, r int64) (int64, bool) {
	switch op {
	case syntax.Add:
		return l + r, true
	case syntax.Sub:
		return l - r, true
	case syntax.Mul:
		return l * r, true
	case syntax.Quo, syntax.Rem:
		if r == 0 || (l == -1<<63 && r == -1) {
			return 0, false
		}
		if op == syntax.Quo {
			return l / r, true
		}
		return l % r, true
	case syntax.Pow:
		if r < 0 || r > 64 {
			return 0, false
		}
		v := int64(1)
		for ; r > 0; r-- {
			v *= l
		}
		return v, true
	case syntax.Shl:
		return l << (uint64(r) & 63), true
	case syntax.Shr:
		return l >> (uint64(r) & 63), true
	case syntax.And:
		return l & r, true
	case syntax.Or:
		return l | r, true
	case syntax.Xor:
		return l ^ r, true
	case syntax.Eql:
		return b2i(l == r), true
	case syntax.Neq:
		return b2i(l != r), true
	case syntax.Lss:
		return b2i(l < r), true
	case syntax.Leq:
		return b2i(l <= r), true
	case syntax.Gtr:
		return b2i(l > r), true
	case syntax.Geq:
		return b2i(l >= r), true
	case syntax.AndArit:
		return b2i(l != 0 && r != 0), true
	case syntax.OrArit:
		return b2i(l != 0 || r != 0), true
	case syntax.Comma:
		return r, true
	}
	return 0, false
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// varNumber is the value of a variable in arithmetic, when the input
// gives it exactly one.
func (c *checker) varNumber(name string) (int64, bool) {
	v := c.vars[name]
	if v == nil || v.unknown || v.zero || len(v.values) != 1 {
		return 0, false
	}
	return parseArithNum(strings.TrimSpace(v.values[0]))
}

// parseArithNum parses an integer constant as bash arithmetic reads it:
// decimal, 0x hex, leading-zero octal, or base#digits.
func parseArithNum(s string) (int64, bool) {
	if s == "" || strings.ContainsAny(s, "_oObB") && !strings.Contains(s, "#") {
		return 0, false
	}
	if b, digits, ok := strings.Cut(s, "#"); ok {
		base, err := strconv.Atoi(b)
		if err != nil || base < 2 || base > 36 {
			return 0, false
		}
		n, err := strconv.ParseInt(digits, base, 64)
		return n, err == nil
	}
	n, err := strconv.ParseInt(s, 0, 64)
	return n, err == nil
}

// computesNumber reports whether a command substitution runs a calculator
// (expr, bc, …) whose result may be 0 or negative.
func computesNumber(list []*syntax.Stmt) bool {
	found := false
	syntax.Walk(listNode(list), func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 {
			if s, ok := staticWord(call.Args[0]); ok {
				switch baseName(s) {
				case "expr", "bc", "dc", "seq", "numfmt", "calc", "qalc":
					found = true
				}
			}
		}
		return !found
	})
	return found
}
