package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The test binary doubles as the program the tests run inside jails: with
// AISAN_TEST_HELPER set it performs one probe and exits, printing what it
// saw. Probing with real syscalls lets a test assert errno values (EROFS,
// ESRCH) instead of parsing a shell's messages.
func init() {
	h := os.Getenv("AISAN_TEST_HELPER")
	if h == "" {
		return
	}
	os.Exit(runHelper(h, os.Args[1:]))
}

func runHelper(name string, args []string) int {
	switch name {
	case "argv":
		// Writes the argv it got (without argv[0]) as JSON to the file
		// named by AISAN_TEST_OUT, as bytes (base64), so that arguments
		// that are not UTF-8 survive the report too.
		raw := make([][]byte, len(args))
		for i, a := range args {
			raw[i] = []byte(a)
		}
		data, _ := json.Marshal(raw)
		if err := os.WriteFile(os.Getenv("AISAN_TEST_OUT"), data, 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 99
		}
		return 0
	case "write":
		// write FILE DATA: prints "ok" or the errno name.
		f, err := os.OpenFile(args[0], os.O_WRONLY, 0)
		if err == nil {
			_, err = f.Write([]byte(args[1]))
			f.Close()
		}
		fmt.Println(errnoName(err))
		return 0
	case "no-run-user":
		return execWithoutRunUser(args)
	case "mkdir":
		fmt.Println(errnoName(os.Mkdir(args[0], 0o755)))
		return 0
	case "signal":
		// signal PID SIG: prints "ok" or the errno name.
		pid, _ := strconv.Atoi(args[0])
		sig, _ := strconv.Atoi(args[1])
		fmt.Println(errnoName(syscall.Kill(pid, syscall.Signal(sig))))
		return 0
	case "connect":
		// connect PATH: prints the first line the server sends.
		c, err := net.DialTimeout("unix", args[0], 2*time.Second)
		if err != nil {
			fmt.Println("error:", errnoName(err))
			return 0
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 256)
		n, _ := c.Read(buf)
		fmt.Println(strings.TrimSpace(string(buf[:n])))
		return 0
	case "cmdlines":
		// Prints, as JSON, every /proc/PID/cmdline except our own.
		self := os.Getpid()
		out := map[string]string{}
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self {
				continue
			}
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err == nil {
				out[e.Name()] = string(b)
			}
		}
		json.NewEncoder(os.Stdout).Encode(out)
		return 0
	case "attack-state":
		// attack-state HOME RUNDIR SLOT: tries, from inside a jail, what an
		// agent "cleaning up" (or worse) could do to aisan's own state,
		// and prints one "attack: result" line each ("ok" means it
		// worked).
		return attackState(args[0], args[1], args[2])
	case "fds":
		// Prints the descriptors this process has open, one per line.
		ents, _ := os.ReadDir("/proc/self/fd")
		for _, e := range ents {
			target, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
			fmt.Printf("%s %s\n", e.Name(), target)
		}
		return 0
	case "tiocsti":
		// Pushes "X" into the input of the terminal on descriptor 1 and
		// prints "ok" or the errno name; then the tty_nr of our stat.
		b := byte('X')
		_, _, en := syscall.Syscall(syscall.SYS_IOCTL, 1, syscall.TIOCSTI, uintptr(unsafe.Pointer(&b)))
		var err error
		if en != 0 {
			err = en
		}
		fmt.Println("tiocsti:", errnoName(err))
		stat, _ := os.ReadFile("/proc/self/stat")
		if i := bytes.LastIndexByte(stat, ')'); i > 0 {
			f := strings.Fields(string(stat[i+1:]))
			if len(f) > 4 {
				fmt.Println("tty_nr:", f[4])
			}
		}
		_, err = os.OpenFile("/dev/tty", os.O_RDWR, 0)
		fmt.Println("devtty:", errnoName(err))
		return 0
	case "steal-pty":
		return stealPTY(args)
	case "lock-slots":
		return lockSlots(args...)
	case "exit":
		code, _ := strconv.Atoi(args[0])
		return code
	case "tui":
		return tuiHelper()
	case "tty":
		// An interactive agent: reports the terminal size at start and on
		// every SIGWINCH, echoes each line it reads, exits on "quit".
		return ttyHelper()
	case "trap":
		// Prints "ready", then exits 100+N on the first signal N.
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		fmt.Println("ready")
		select {
		case s := <-c:
			fmt.Println("got", s)
			return 100 + int(s.(syscall.Signal))
		case <-time.After(30 * time.Second):
			return 97
		}
	}
	if code, ok := grpcHelper(name, args); ok {
		return code
	}
	if code, ok := strictHelper(name, args); ok {
		return code
	}
	if code, ok := protocolHelper(name, args); ok {
		return code
	}
	fmt.Fprintln(os.Stderr, "unknown helper", name)
	return 96
}

func errnoName(err error) string {
	if err == nil {
		return "ok"
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		switch en {
		case syscall.EROFS:
			return "EROFS"
		case syscall.EACCES:
			return "EACCES"
		case syscall.EPERM:
			return "EPERM"
		case syscall.ESRCH:
			return "ESRCH"
		case syscall.ENOENT:
			return "ENOENT"
		case syscall.ECONNREFUSED:
			return "ECONNREFUSED"
		case syscall.EBUSY:
			return "EBUSY"
		case syscall.ENXIO:
			return "ENXIO"
		case syscall.EINVAL:
			return "EINVAL"
		}
		return "errno " + strconv.Itoa(int(en))
	}
	return err.Error()
}

// helperEnv is the environment that makes the test binary run helper h.
func helperEnv(h string) []string { return []string{"AISAN_TEST_HELPER=" + h} }

// self is the test binary, run as a helper inside jails.
func self() string {
	p, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return p
}

func ttyHelper() int {
	size := func() {
		ws, err := unix.IoctlGetWinsize(0, unix.TIOCGWINSZ)
		if err != nil {
			fmt.Println("size error", err)
			return
		}
		fmt.Printf("size %d %d\n", ws.Row, ws.Col)
	}
	winch := make(chan os.Signal, 4)
	signal.Notify(winch, syscall.SIGWINCH)
	size()
	lines := stdinLines()
	for {
		select {
		case <-winch:
			size()
		case l, ok := <-lines:
			if !ok || l == "quit" {
				return 0
			}
			fmt.Printf("echo %s\n", l)
		}
	}
}

// stdinLines delivers the lines of stdin, closing at its end.
func stdinLines() <-chan string {
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return lines
}

// tuiHelper behaves like an agent's terminal interface: a status line at
// the bottom that it redraws in place (with the window's width, on every
// resize), each exchange printed above it, a line wider than the window
// that the terminal wraps, and on "quit" a frame on the alternate screen.
func tuiHelper() int {
	cols := func() int {
		ws, err := unix.IoctlGetWinsize(0, unix.TIOCGWINSZ)
		if err != nil {
			return 0
		}
		return int(ws.Col)
	}
	// The status line is redrawn in place; the line feed and cursor-up
	// after it only let a line-reading test see each redraw.
	status := func() { fmt.Printf("\r\x1b[2K\x1b[7m[status cols=%d]\x1b[0m\r\n\x1b[1A", cols()) }
	winch := make(chan os.Signal, 4)
	signal.Notify(winch, syscall.SIGWINCH)
	fmt.Printf("%s\r\n", strings.Repeat("x", 2*cols()))
	status()
	lines := stdinLines()
	for {
		select {
		case <-winch:
			status()
		case l, ok := <-lines:
			if !ok {
				return 0
			}
			if l == "quit" {
				fmt.Print("\x1b[?1049h\x1b[H\x1b[2Jfull screen frame\x1b[?1049l")
				return 0
			}
			// The terminal echoed the line under the status: redraw.
			fmt.Printf("\x1b[1A\r\x1b[2Kyou: %s\r\n\x1b[2K\x1b[1magent: %s\x1b[0m\r\n", l, strings.ToUpper(l))
			status()
		}
	}
}

// attackState is the body of the attack-state helper.
func attackState(home, rundir, victim string) int {
	slots := filepath.Join(home, "slots")
	rec := filepath.Join(slots, victim+".json")
	try := func(name string, err error) { fmt.Printf("%s: %s\n", name, errnoName(err)) }
	// Forge the victim's record the way an atomic writer would.
	tmp := filepath.Join(slots, ".forge.tmp")
	err := os.WriteFile(tmp, []byte(`{"slot":"`+victim+`","kind":"run","wrapper_pid":1,"init_pid":1,"pidns_inode":1,"start":"2020-01-01T00:00:00Z","transcript":""}`), 0o600)
	if err == nil {
		err = os.Rename(tmp, rec)
	}
	try("forge-record", err)
	f, err := os.OpenFile(rec, os.O_WRONLY|os.O_TRUNC, 0)
	if err == nil {
		f.Close()
	}
	try("truncate-record", err)
	// Where an older aisan kept the slots' locks, and where they are now
	// (the run dir, empty in a jail).
	locks, _ := filepath.Glob(filepath.Join(slots, "*.lock"))
	now, _ := filepath.Glob(filepath.Join(rundir, "locks", "*", "*.lock"))
	locks = append(locks, now...)
	err = os.ErrNotExist
	for _, l := range locks {
		if err = os.Remove(l); err == nil {
			break
		}
	}
	try("remove-lock", err)
	try("mkdir-in-state", os.Mkdir(filepath.Join(slots, "x"), 0o700))
	try("rename-state-dir", os.Rename(home, home+".moved"))
	hist, _ := filepath.Glob(filepath.Join(home, "history", "*", "*"))
	err = os.ErrNotExist
	for _, h := range hist {
		os.Remove(h + ".x")
		if err = os.Symlink("/proc/self/fd/1", h+".x"); err == nil {
			err = os.Rename(h+".x", h)
			break
		}
	}
	try("swap-history-copy", err)
	try("mkdir-in-rundir", os.Mkdir(filepath.Join(rundir, "x"), 0o700))
	dirs, _ := filepath.Glob(filepath.Join(rundir, "*"))
	err = os.ErrNotExist
	for _, d := range dirs {
		if fi, serr := os.Lstat(d); serr != nil || !fi.IsDir() {
			// Not a slot's directory (aisan's bwrap version cache).
			continue
		}
		if err = os.Rename(d, d+".moved"); err == nil {
			break
		}
		if err = os.Symlink(d, filepath.Join(rundir, "evil")); err == nil {
			break
		}
		// Swap a neighbour's proxy socket for a link to the real bus.
		if err = os.Remove(filepath.Join(d, "bus")); err == nil {
			break
		}
	}
	try("swap-proxy-socket", err)
	// A new user and mount namespace of our own: may we remount the
	// state read-write there, or unmount the read-only bind?
	script := `mount -o remount,bind,rw "$1" 2>/dev/null && : > "$1/pwned" && echo remount-ok; umount "$1" 2>/dev/null && ls "$1"/slots >/dev/null 2>&1 && : > "$1/slots/pwned" && echo umount-ok; true`
	out, err := exec.Command("unshare", "-rm", "sh", "-c", script, "sh", home).CombinedOutput()
	switch {
	case err != nil:
		fmt.Printf("remount-state: unshare failed (%v)\n", err)
	case strings.Contains(string(out), "-ok"):
		fmt.Printf("remount-state: ok (%s)\n", strings.TrimSpace(string(out)))
	default:
		fmt.Println("remount-state: refused")
	}
	return 0
}
