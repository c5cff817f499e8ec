package reapi

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// TestRecordFit checks that a DATA frame made of a shortened read fills
// whole TLS records, and that reads that fit one record are left alone.
func TestRecordFit(t *testing.T) {
	for _, n := range []int{1, 100, tlsRecord - frameHeader, tlsRecord - frameHeader + 1, tlsRecord, 20000, 2 * tlsRecord, 512 << 10} {
		got := len(recordFit(make([]byte, n)))
		frame := got + frameHeader
		switch {
		case n+frameHeader <= tlsRecord && got != n:
			t.Errorf("recordFit(%d) = %d, want it whole", n, got)
		case n+frameHeader > tlsRecord && (frame%tlsRecord != 0 || got > n || got < n-tlsRecord):
			t.Errorf("recordFit(%d) = %d: a frame of %d bytes, not whole records", n, got, frame)
		}
	}
}

// TestUpBodyDetach checks that once the handler has ended, a view reads
// what was kept for a retry and then an error, never the box's stream
// (whose buffer is back in its pool).
func TestUpBodyDetach(t *testing.T) {
	rest := &countingReader{r: bytes.NewReader(bytes.Repeat([]byte("x"), 100))}
	b := newUpBody([]byte("first"), rest)
	v := b.view()
	p := make([]byte, 8)
	if n, err := v.Read(p); err != nil || string(p[:n]) != "first" {
		t.Fatalf("first read = %q, %v", p[:n], err)
	}
	if n, err := v.Read(p); err != nil || n != 8 {
		t.Fatalf("second read = %d, %v", n, err)
	}
	b.detach()
	before := rest.reads
	retry, err := b.getBody()
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(retry)
	if !errors.Is(err, errDetached) || string(got) != "firstxxxxxxxx" {
		t.Fatalf("a retry after detach read %q, %v; want what was kept and errDetached", got, err)
	}
	if rest.reads != before {
		t.Errorf("a view read the box's stream after detach")
	}
}

type countingReader struct {
	r     io.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}
