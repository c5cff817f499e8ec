package transcript

import (
	"bytes"
	"strconv"
)

// MaxDim bounds a recorded dimension: no terminal is wider or taller, and
// a larger value (a corrupt record) would make the emulator allocate
// without limit.
const MaxDim = 4096

// Size is one window size change of a transcript segment.
type Size struct {
	// Offset is the byte of the segment from which the size holds.
	Offset int64
	// Cols and Rows are the window's size in cells.
	Cols, Rows int
}

// SizesPath is where the window sizes of the transcript segment at path
// are recorded.
func SizesPath(path string) string { return path + ".win" }

func formatSize(s Size) string {
	return strconv.FormatInt(s.Offset, 10) + " " + strconv.Itoa(s.Cols) + " " + strconv.Itoa(s.Rows) + "\n"
}

// ParseSizes reads a size record. Lines that are not three numbers in
// range, or whose offset goes backwards, are skipped: a torn last line
// (the launcher died mid-write) must not cost the rendering the sizes
// before it. The result is ordered by offset.
func ParseSizes(data []byte) []Size {
	var out []Size
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			// Not yet terminated: the writer may still be writing it.
			break
		}
		f := bytes.Fields(line)
		if len(f) != 3 {
			continue
		}
		off, err1 := strconv.ParseInt(string(f[0]), 10, 64)
		cols, err2 := strconv.Atoi(string(f[1]))
		rows, err3 := strconv.Atoi(string(f[2]))
		if err1 != nil || err2 != nil || err3 != nil || off < 0 ||
			cols < 1 || rows < 1 || cols > MaxDim || rows > MaxDim {
			continue
		}
		if n := len(out); n > 0 && off < out[n-1].Offset {
			continue
		}
		out = append(out, Size{Offset: off, Cols: cols, Rows: rows})
	}
	return out
}
