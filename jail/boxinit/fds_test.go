package boxinit

import (
	"os"
	"strconv"
	"testing"
)

// TestAtFDs: each file lands at its number; a gap is refused.
func TestAtFDs(t *testing.T) {
	a, b := os.NewFile(100, "a"), os.NewFile(101, "b")
	got, err := AtFDs(map[int]*os.File{4: b, 3: a})
	if err != nil || len(got) != 2 || got[0] != a || got[1] != b {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := AtFDs(map[int]*os.File{3: a, 5: b}); err == nil {
		t.Fatal("a gap at 4 was taken")
	}
}

// TestDescriptorOrder: the wrapper hands bwrap its descriptors below the
// pins at their own numbers, contiguous from 3, and the pins right after
// them.
func TestDescriptorOrder(t *testing.T) {
	fixed := []int{FDArgs, FDInit, FDPayload, FDInfo, FDReady}
	for i, fd := range fixed {
		if fd != 3+i {
			t.Errorf("descriptor %d is not at %d", fd, 3+i)
		}
	}
	if FDFirstPin != FDReady+1 {
		t.Errorf("pins at %d, after ready at %d", FDFirstPin, FDReady)
	}
}

func TestInitArgv0(t *testing.T) {
	if want := "/proc/self/fd/" + strconv.Itoa(FDInit); InitArgv0 != want {
		t.Errorf("InitArgv0 is %q, want %q", InitArgv0, want)
	}
}
