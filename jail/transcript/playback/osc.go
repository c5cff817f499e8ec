package playback

// maxOSC bounds an operating system command: one never ended gives the
// output back after this many bytes rather than swallowing the rest.
const maxOSC = 64 << 10

// oscFilter drops operating system commands (ESC ] … BEL or ESC \) from
// the output before the emulator plays it. They set a window title, a
// hyperlink's target, the working directory: nothing the text shows.
// The emulator's parser ends such a command at a byte 0x9C (the 8-bit
// string terminator), which in UTF-8 is a continuation byte: a title
// such as "✳ Claude Code" would spill its tail onto the screen as text,
// wherever the cursor was. The state carries over from one write to the
// next, so where the output is cut changes nothing.
type oscFilter struct {
	state oscState
	n     int
}

type oscState uint8

const (
	oscGround oscState = iota
	oscEsc             // ESC seen outside a command
	oscIn              // inside a command
	oscInEsc           // ESC seen inside a command
)

// filter returns p without the commands in it, in a new slice.
func (f *oscFilter) filter(p []byte) []byte {
	out := make([]byte, 0, len(p))
	for _, b := range p {
		switch f.state {
		case oscGround:
			if b == 0x1b {
				f.state = oscEsc
				continue
			}
			out = append(out, b)
		case oscEsc:
			out = f.afterEsc(out, b)
		case oscIn:
			f.n++
			switch {
			case b == 0x07 || b == 0x18 || b == 0x1a || f.n > maxOSC:
				// BEL ends it; CAN and SUB cancel it.
				f.state = oscGround
			case b == 0x1b:
				f.state = oscInEsc
			}
		case oscInEsc:
			if b == '\\' {
				f.state = oscGround
				continue
			}
			// Any other escape cancels the command and begins anew.
			out = f.afterEsc(out, b)
		}
	}
	return out
}

// afterEsc takes b following an ESC: the start of a command, or the ESC
// and b for the emulator.
func (f *oscFilter) afterEsc(out []byte, b byte) []byte {
	switch b {
	case ']':
		f.state, f.n = oscIn, 0
		return out
	case 0x1b:
		f.state = oscEsc
		return append(out, 0x1b)
	}
	f.state = oscGround
	return append(out, 0x1b, b)
}
