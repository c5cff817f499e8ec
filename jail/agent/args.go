package agent

// DropRepeatedConfig removes a "-c KEY=VALUE" pair (Codex's config
// override) that repeats an earlier identical one: aisan's own switches
// and an egress backend's client settings name some of the same keys,
// and each should be passed, and shown by explain, once. A pair that
// sets a key to another value stays, as does everything else.
func DropRepeatedConfig(args []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if args[i] == "-c" && i+1 < len(args) {
			if seen[args[i+1]] {
				i++
				continue
			}
			seen[args[i+1]] = true
			out = append(out, args[i], args[i+1])
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}
