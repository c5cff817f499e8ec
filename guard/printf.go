package guard

// What echo and printf print, worked out so that text piped into a shell
// or written to a script is checked as the shell will read it.

import (
	"strconv"
	"strings"
)

// echoTexts is what echo writes for args: the words joined by spaces,
// as bash's echo leaves them and with the escapes of echo -e (and of
// dash's echo) decoded, when that differs. Options are dropped.
func echoTexts(args []arg) []string {
	words := make([]string, 0, len(args))
	for i, a := range args {
		if i == len(words) && a.known && isEchoOption(a.text) {
			continue
		}
		words = append(words, a.text)
	}
	s := strings.Join(words, " ")
	if !strings.Contains(s, `\`) {
		return []string{s + "\n"}
	}
	return []string{s + "\n", echoEscapes(s) + "\n"}
}

// echoEscapes decodes the escapes of echo -e and printf %b: those of
// $'…', with octal written \0NNN, and \c ending the output.
func echoEscapes(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	// Rewrite to what $'…' reads: \0NNN becomes \NNN, and \c ends it.
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch e := s[i]; {
		case e == 'c':
			return ansiC(b.String())
		case e == '0' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '7':
			b.WriteByte('\\')
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return ansiC(b.String())
}

func isEchoOption(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	return strings.Trim(s[1:], "neE") == ""
}

// maxPrintf bounds the text that printfText works out: the hook input is
// at most 1 MiB, and reusing the format or padding must not make more.
const maxPrintf = 1 << 20

// printfText is what printf writes for args, the format first: escapes
// in the format decoded, %s, %b, %c, %q and the numeric conversions
// filled from the arguments, and the format reused while arguments are
// left, as bash's printf does. ok is false when the format is not known.
func printfText(args []arg) (string, bool) {
	if len(args) > 0 && args[0].known && args[0].text == "--" {
		args = args[1:]
	}
	if len(args) == 0 || !args[0].known {
		return "", false
	}
	format, rest := args[0].text, args[1:]
	var b strings.Builder
	for round := 0; round <= maxCands && b.Len() < maxPrintf; round++ {
		used := 0
		next := func() string {
			if used < len(rest) {
				used++
				return rest[used-1].text
			}
			return ""
		}
		lit := 0
		for i := 0; i < len(format) && b.Len() < maxPrintf; i++ {
			if format[i] != '%' {
				continue
			}
			b.WriteString(ansiC(format[lit:i]))
			j := i + 1
			for j < len(format) && strings.IndexByte("-+ #0", format[j]) >= 0 {
				j++
			}
			width := -1
			if j < len(format) && format[j] == '*' {
				width, _ = strconv.Atoi(next())
				j++
			} else if k := j; k < len(format) {
				for j < len(format) && format[j] >= '0' && format[j] <= '9' {
					j++
				}
				if j > k {
					width, _ = strconv.Atoi(format[k:j])
				}
			}
			prec := -1
			if j < len(format) && format[j] == '.' {
				j++
				if j < len(format) && format[j] == '*' {
					prec, _ = strconv.Atoi(next())
					j++
				} else {
					k := j
					for j < len(format) && format[j] >= '0' && format[j] <= '9' {
						j++
					}
					prec, _ = strconv.Atoi(format[k:j])
				}
			}
			if j >= len(format) {
				lit = i
				break
			}
			var out string
			switch format[j] {
			case '%':
				out = "%"
			case 's', 'q', 'Q':
				out = next()
			case 'b':
				out = echoEscapes(next())
			case 'c':
				out = next()
				out = out[:min(1, len(out))]
			case 'd', 'i', 'o', 'u', 'x', 'X', 'e', 'E', 'f', 'F', 'g', 'G', 'a', 'A':
				out = next()
			default:
				out = format[i : j+1]
			}
			if prec >= 0 && prec < len(out) && strings.IndexByte("sbqQ", format[j]) >= 0 {
				out = out[:prec]
			}
			for n := len(out); n < width && n < maxOpLen; n++ {
				out = " " + out
			}
			b.WriteString(out)
			i = j
			lit = j + 1
		}
		if lit < len(format) {
			b.WriteString(ansiC(format[lit:]))
		}
		rest = rest[used:]
		if used == 0 || len(rest) == 0 {
			break
		}
	}
	return b.String(), true
}

// joinTexts joins the words' text the way eval and ssh rebuild a command
// line from their arguments.
func joinTexts(args []arg) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.text
	}
	return strings.Join(parts, " ")
}
