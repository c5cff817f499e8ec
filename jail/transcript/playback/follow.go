package playback

import (
	"bytes"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail/transcript"
)

// A followed transcript ('aisan logs -f') is printed while the agent
// runs, and an agent's interface mostly redraws rows in place rather than
// scrolling: a full-screen one never scrolls at all. So each time the
// follower has caught up with the transcript it looks at the emulated
// screen, and prints each row once it has settled, that is, stayed the
// same for a few looks (a spinner or a clock never does; a line being
// typed, the cursor's row, must stay longer). A row keeps its state
// while the interface moves it (the screens of two looks are aligned by
// their longest common sequence of rows), so no row is printed twice;
// lines that leave the screen by scrolling are finished and printed at
// once. On the alternate screen, where an interface redraws its chrome
// (input box, status line) again and again, a line whose text was
// printed lately is not printed again.

const (
	// settleLooks is how many looks in a row a row must be seen
	// unchanged before it is printed; editLooks for the cursor's row.
	// Print looks every poll (200ms) when it has caught up.
	settleLooks = 4
	editLooks   = 15
	// maxAlign bounds the rows×rows work of aligning two looks; larger
	// screens are aligned on their unique rows alone.
	maxAlign = 256 * 256
)

// settleRow is a screen row as the follower knows it.
type settleRow struct {
	text    string
	looks   int
	printed bool
}

// following is a Renderer's state for a followed transcript: the rows of
// each screen as last seen.
type following struct {
	main, alt []settleRow
	// looked says whether the screen has been looked at yet: the first
	// look, after reading what the transcript held already, prints all
	// of the screen at once.
	looked bool
}

// Follow makes r print for a followed transcript: Flush prints the rows
// that have settled since the last Flush, and Close what was never
// printed.
func (r *Renderer) Follow() { r.follow = &following{} }

// screenRows is the emulated screen, one string per row, trailing blanks
// trimmed.
func (r *Renderer) screenRows() []string {
	rows := strings.Split(r.emu.String(), "\n")
	for i := range rows {
		rows[i] = strings.TrimRight(rows[i], " ")
	}
	return rows
}

// look prints the rows that have settled (all unprinted rows with all).
func (f *following) look(r *Renderer, all bool) {
	r.flushScrollback()
	alt := r.emu.IsAltScreen()
	snap := &f.main
	if alt {
		snap = &f.alt
	}
	cur := r.screenRows()
	next := carry(*snap, cur)
	*snap = next
	// The first look (not one at a change of screens) comes after what
	// the transcript held already: that has settled.
	first := !f.looked && !all
	f.looked = f.looked || !all
	last := -1
	for i, row := range next {
		if row.text != "" {
			last = i
		}
	}
	cursor := r.emu.CursorPosition().Y
	var b bytes.Buffer
	for i := 0; i <= last; i++ {
		row := &next[i]
		need := settleLooks
		if first {
			need = 1
		}
		if i == cursor {
			need = editLooks
		}
		if row.printed || !all && row.looks < need {
			continue
		}
		if alt && (row.text == "" || slices.Contains(r.altSeen, row.text)) {
			// Layout, or chrome shown again.
			row.printed = row.text != ""
			continue
		}
		row.printed = true
		if alt {
			r.seen(row.text)
		}
		b.WriteString(row.text)
		b.WriteByte('\n')
	}
	r.write(b.Bytes())
}

// scrolled is told of a line that left the top of the main screen, and
// reports whether it was printed already: when it is the top row of the
// last look (blank rows above it may have been erased), which it then
// forgets. A line the last look did not see there is not printed yet.
func (f *following) scrolled(line string) bool {
	for k, row := range f.main {
		if row.text == line {
			f.main = f.main[k+1:]
			return row.printed
		}
		if row.text != "" {
			break
		}
	}
	return false
}

// carry aligns the rows of the last look with the screen now: a row
// that is still there (moved or not) keeps its state and counts one look
// more; any other row is new.
func carry(prev []settleRow, cur []string) []settleRow {
	next := make([]settleRow, len(cur))
	for i, text := range cur {
		next[i] = settleRow{text: text, looks: 1}
	}
	for i, j := range align(prev, cur) {
		if j >= 0 {
			next[i].looks = prev[j].looks + 1
			next[i].printed = prev[j].printed
		}
	}
	return next
}

// align matches the rows of cur to those of prev with the same text, in
// order, as many as it can (a longest common subsequence): match[i] is
// the row of prev that row i of cur was, or -1.
func align(prev []settleRow, cur []string) []int {
	match := make([]int, len(cur))
	for i := range match {
		match[i] = -1
	}
	// The same first and last rows (a fixed header, a status line) need
	// no table.
	lo := 0
	for lo < len(prev) && lo < len(cur) && prev[lo].text == cur[lo] {
		match[lo] = lo
		lo++
	}
	hiP, hiC := len(prev), len(cur)
	for hiP > lo && hiC > lo && prev[hiP-1].text == cur[hiC-1] {
		hiP--
		hiC--
		match[hiC] = hiP
	}
	p, c := prev[lo:hiP], cur[lo:hiC]
	if len(p) == 0 || len(c) == 0 {
		return match
	}
	if len(p)*len(c) > maxAlign {
		// Rows whose text occurs once on each side, in order.
		inP, inC, at := map[string]int{}, map[string]int{}, map[string]int{}
		for j, row := range p {
			inP[row.text]++
			at[row.text] = j
		}
		for _, text := range c {
			inC[text]++
		}
		next := 0
		for i, text := range c {
			if j := at[text]; inP[text] == 1 && inC[text] == 1 && j >= next {
				match[lo+i] = lo + j
				next = j + 1
			}
		}
		return match
	}
	// lcs[i][j] is the longest common subsequence of p[i:] and c[j:].
	w := len(c) + 1
	lcs := make([]int, (len(p)+1)*w)
	for i := len(p) - 1; i >= 0; i-- {
		for j := len(c) - 1; j >= 0; j-- {
			if p[i].text == c[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	for i, j := 0, 0; i < len(p) && j < len(c); {
		switch {
		case p[i].text == c[j]:
			match[lo+j] = lo + i
			i++
			j++
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			i++
		default:
			j++
		}
	}
	return match
}

// seen remembers a line printed from the alternate screen.
func (r *Renderer) seen(line string) {
	r.altSeen = append(r.altSeen, line)
	if len(r.altSeen) > 2*transcript.MaxDim {
		r.altSeen = r.altSeen[len(r.altSeen)-transcript.MaxDim:]
	}
}
