package tests

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

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
	case "exit":
		code, _ := strconv.Atoi(args[0])
		return code
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
	if code, ok := strictHelper(name, args); ok {
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
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
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
