package tests

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The toolchain tests build and test real projects in strict boxes with
// nothing but the shipped bind specs (--binds go, node, python), as the
// unprivileged test user: Go at /usr/local/go, the system's node and
// python3. Packages come from a loopback registry stand-in reached
// through --allow-host (names mapped to 127.0.0.1 by AISAN_RESOLVE) or
// from the host's module cache: no packet leaves the machine.

// toolPATH is a host PATH with the machine's toolchains, and aisan.
func toolPATH(extra ...string) string {
	return strings.Join(append(extra, filepath.Dir(aisanBin), "/usr/local/go/bin", "/usr/local/bin", "/usr/bin", "/bin"), ":")
}

// needTool skips (or fails) without a toolchain the test builds with.
func needTool(t *testing.T, path string) {
	t.Helper()
	_, err := os.Stat(path)
	need(t, path, err)
}

// strictLong is strict with a longer deadline: a box's first Go build
// compiles the standard library into its own, empty cache.
func strictLong(t *testing.T, dir string, env []string, d time.Duration, opts []string, argv ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	args := append(append([]string{"run", "--strict"}, opts...), "--")
	cmd := exec.CommandContext(ctx, aisanBin, append(args, argv...)...)
	cmd.Env = append(append(os.Environ(), env...), "AISAN_NO_SCOPE=1")
	cmd.Dir = dir
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	isolate(cmd)
	err := cmd.Run()
	r := result{stdout: so.String(), stderr: se.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("aisan %q: %v", args, err)
	}
	return r
}

// TestStrictGoModule: a Go module that depends on a module in the host's
// module cache builds and tests in a strict box with --binds go alone:
// the module comes from the host's cache read-only, the box's build and
// module caches are its own and persist per repository (the second run is
// cached), and the host's caches are neither used writable nor changed.
// go is found on the box's PATH, also when the host's PATH lacks it.
func TestStrictGoModule(t *testing.T) {
	needTool(t, "/usr/local/go/bin/go")
	repo, home, env := strictRepo(t)
	// go makes its module cache read-only; the host's (~/go/pkg/mod) must
	// go when the test ends.
	t.Cleanup(func() { chmodTree(home) })
	env = append(env, "PATH="+toolPATH(), "GOFLAGS=", "GOPROXY=", "GOMODCACHE=", "GOCACHE=", "GOPATH=", "GOROOT=", "CGO_ENABLED=0")

	// A module proxy in a directory, and the host's own go fetching from
	// it into the host's module cache (~/go/pkg/mod), as a user's go did.
	proxy := filepath.Join(t.TempDir(), "proxy")
	writeGoModule(t, proxy, "example.test/strutil", "v1.0.0", map[string]string{
		"go.mod": "module example.test/strutil\n\ngo 1.22\n",
		"s.go":   "package strutil\n\n// Up shouts.\nfunc Up(s string) string { return s + \"!\" }\n",
	})
	files := map[string]string{
		"go.mod":       "module gohello\n\ngo 1.22\n\nrequire example.test/strutil v1.0.0\n",
		"main.go":      "package main\n\nimport \"example.test/strutil\"\n\nfunc main() { println(strutil.Up(\"hi\")) }\n",
		"main_test.go": "package main\n\nimport (\n\t\"testing\"\n\n\t\"example.test/strutil\"\n)\n\nfunc TestUp(t *testing.T) {\n\tif strutil.Up(\"a\") != \"a!\" {\n\t\tt.Fatal(\"no\")\n\t}\n}\n",
	}
	for name, body := range files {
		os.WriteFile(filepath.Join(repo, name), []byte(body), 0o644)
	}
	hostEnv := append(env, "GOPROXY=file://"+proxy, "GOSUMDB=off", "GOFLAGS=-mod=mod")
	if r := runCmd(t, repo, hostEnv, "", "go", "mod", "tidy"); r.code != 0 {
		t.Fatalf("host go mod tidy: %s", r.stderr)
	}
	hostCache := filepath.Join(home, "go", "pkg", "mod", "cache", "download", "example.test", "strutil", "@v", "v1.0.0.zip")
	if _, err := os.Stat(hostCache); err != nil {
		t.Fatalf("the host's module cache: %v", err)
	}
	os.RemoveAll(proxy) // from now on the host's module cache is the only source
	// The host's go made its build cache; the box must leave it as it is.
	hostBuild := filepath.Join(home, ".cache", "go-build")
	before := treeListing(t, hostBuild)

	start := time.Now()
	r := strictLong(t, repo, env, 8*time.Minute, []string{"--binds", "go"}, "go", "test", "./...")
	if r.code != 0 || !strings.Contains(r.stdout, "ok  \tgohello") {
		t.Fatalf("go test in the box: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	t.Logf("first go test in a box (empty caches): %v", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	r = strictLong(t, repo, env, 2*time.Minute, []string{"--binds", "go"}, "go", "test", "./...")
	if r.code != 0 || !strings.Contains(r.stdout, "(cached)") {
		t.Fatalf("the second go test is not cached (the box's cache did not persist): exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	t.Logf("second go test in a box: %v", time.Since(start).Round(time.Millisecond))

	// The host's caches: the module cache is read-only in the box, the
	// build cache is not the box's.
	r = strict(t, repo, env, []string{"--binds", "go"}, "sh", "-c",
		`touch "$1" 2>/dev/null && echo HOST-MODCACHE-WRITABLE; echo "gocache=$GOCACHE gomodcache=$GOMODCACHE"`, "sh", hostCache)
	if r.code != 0 || strings.Contains(r.stdout, "WRITABLE") || !strings.Contains(r.stdout, "gocache="+home+"/.cache/go-build gomodcache="+home+"/.cache/go-mod") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if after := treeListing(t, hostBuild); after != before {
		t.Errorf("the box changed the host's build cache %s:\nbefore:\n%s\nafter:\n%s", hostBuild, before, after)
	}
	caches, _ := filepath.Glob(filepath.Join(home, ".aisan", "cache", "*", ".cache", "go-build"))
	if len(caches) != 1 {
		t.Errorf("the box's own build cache in aisan's state: %q", caches)
	}

	// go through the box's PATH when the host's lacks it: GOROOT names it.
	r = strict(t, repo, append(env, "PATH="+filepath.Dir(aisanBin)+":/usr/bin:/bin", "GOROOT=/usr/local/go"), []string{"--binds", "go"}, "go", "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "go version ") {
		t.Errorf("go from the spec's path, not on the host's PATH: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// chmodTree makes every directory under dir writable, so that it can be
// removed.
func chmodTree(dir string) {
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
}

// treeListing lists the files under dir with their sizes and times, to
// see whether anything there changed; "" when dir does not exist.
func treeListing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		}
		return nil
	})
	return b.String()
}

// writeGoModule lays out one module version as a GOPROXY directory.
func writeGoModule(t *testing.T, proxy, path, version string, files map[string]string) {
	t.Helper()
	dir := filepath.Join(proxy, path, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, _ := zw.Create(path + "@" + version + "/" + name)
		w.Write([]byte(body))
	}
	zw.Close()
	os.WriteFile(filepath.Join(dir, version+".zip"), buf.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, version+".mod"), []byte(files["go.mod"]), 0o644)
	os.WriteFile(filepath.Join(dir, version+".info"), []byte(`{"Version":"`+version+`"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "list"), []byte(version+"\n"), 0o644)
}

// registryStandIn serves, over HTTPS with the test's CA on loopback, one
// npm package (packument and tarball) and one Python wheel (a simple
// index page and the file). It returns the port; stop ends it.
func registryStandIn(t *testing.T, ca testCA) (port string, stop func()) {
	t.Helper()
	tgz := npmTarball(t, map[string]string{
		"package/package.json": `{"name":"leftpad-ux","version":"1.0.0","main":"index.js"}`,
		"package/index.js":     "module.exports = (s, n) => ' '.repeat(Math.max(0, n - s.length)) + s;\n",
	})
	whl := wheel(t, "uxhello", "1.0", map[string]string{"uxhello/__init__.py": "def hello():\n    return 'hello from the wheel'\n"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port = strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	base := "https://registry.test:" + port
	sha1sum, sha512sum, whlsum := sha1.Sum(tgz), sha512.Sum512(tgz), sha256.Sum256(whl)
	packument, _ := json.Marshal(map[string]any{
		"name": "leftpad-ux", "dist-tags": map[string]string{"latest": "1.0.0"},
		"versions": map[string]any{"1.0.0": map[string]any{
			"name": "leftpad-ux", "version": "1.0.0", "main": "index.js",
			"dist": map[string]string{
				"tarball":   base + "/leftpad-ux/-/leftpad-ux-1.0.0.tgz",
				"shasum":    hex.EncodeToString(sha1sum[:]),
				"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sha512sum[:]),
			},
		}},
	})
	mux := http.NewServeMux()
	mux.HandleFunc("/leftpad-ux", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(packument)
	})
	mux.HandleFunc("/leftpad-ux/-/leftpad-ux-1.0.0.tgz", func(w http.ResponseWriter, r *http.Request) { w.Write(tgz) })
	mux.HandleFunc("/simple/uxhello/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<!DOCTYPE html><html><body><a href=\"%s/files/uxhello-1.0-py3-none-any.whl#sha256=%s\">uxhello-1.0-py3-none-any.whl</a></body></html>\n", base, hex.EncodeToString(whlsum[:]))
	})
	mux.HandleFunc("/files/uxhello-1.0-py3-none-any.whl", func(w http.ResponseWriter, r *http.Request) {
		// As the real index serves its files: pip caches what may be.
		w.Header().Set("Cache-Control", "max-age=31536000, public, immutable")
		w.Write(whl)
	})
	srv := &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{ca.server}}}
	go srv.ServeTLS(ln, "", "")
	stop = func() { srv.Close() }
	t.Cleanup(stop)
	return port, stop
}

// npmTarball is a package tarball as npm publishes one.
func npmTarball(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: time.Unix(1e9, 0)})
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// wheel is a pure-Python wheel with its metadata and RECORD.
func wheel(t *testing.T, name, version string, files map[string]string) []byte {
	info := name + "-" + version + ".dist-info/"
	files[info+"METADATA"] = "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n"
	files[info+"WHEEL"] = "Wheel-Version: 1.0\nGenerator: aisan-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
	var record strings.Builder
	for p, body := range files {
		sum := sha256.Sum256([]byte(body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", p, base64.RawURLEncoding.EncodeToString(sum[:]), len(body))
	}
	record.WriteString(info + "RECORD,,\n")
	files[info+"RECORD"] = record.String()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for p, body := range files {
		w, _ := zw.Create(p)
		w.Write([]byte(body))
	}
	zw.Close()
	return buf.Bytes()
}

// TestStrictNodeProject: a Node project installs its dependency from a
// registry (the loopback stand-in, through --allow-host) and runs its
// tests in a strict box with --binds node; npm's cache is the box's own
// and persists, so a later install works offline; the host's ~/.npm is
// untouched.
func TestStrictNodeProject(t *testing.T) {
	needTool(t, "/usr/bin/node")
	needTool(t, "/usr/bin/npm")
	repo, home, env := strictRepo(t)
	ca := newTestCA(t, repo, "registry.test")
	port, stop := registryStandIn(t, ca)
	env = append(env, "PATH="+toolPATH(), "AISAN_RESOLVE=registry.test=127.0.0.1")
	os.WriteFile(filepath.Join(repo, "package.json"), []byte(`{"name":"nodeapp","version":"1.0.0","private":true,"scripts":{"test":"node --test"},"dependencies":{"leftpad-ux":"1.0.0"}}`), 0o644)
	os.MkdirAll(filepath.Join(repo, "test"), 0o755)
	os.WriteFile(filepath.Join(repo, "test", "pad.test.js"), []byte("const test = require('node:test');\nconst assert = require('node:assert');\nconst pad = require('leftpad-ux');\ntest('pads', () => assert.strictEqual(pad('a', 3), '  a'));\n"), 0o644)
	opts := []string{"--binds", "node", "--allow-host", "registry.test:" + port,
		"--env", "npm_config_registry=https://registry.test:" + port + "/", "--env", "npm_config_cafile=" + ca.pemPath,
		"--env", "npm_config_audit=false", "--env", "npm_config_fund=false", "--env", "npm_config_update_notifier=false"}
	r := strictLong(t, repo, env, 3*time.Minute, opts, "sh", "-c", "npm install && npm test")
	if r.code != 0 || !strings.Contains(r.stdout, "pass 1") {
		t.Fatalf("npm install && npm test in the box: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	// The registry is gone; the box's own npm cache still has the package.
	stop()
	os.RemoveAll(filepath.Join(repo, "node_modules"))
	r = strictLong(t, repo, env, 3*time.Minute, opts, "sh", "-c", "npm install --offline && npm test")
	if r.code != 0 || !strings.Contains(r.stdout, "pass 1") {
		t.Fatalf("an offline install from the box's npm cache: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(home, ".npm")); err == nil {
		t.Errorf("the box wrote the host's npm cache %s", filepath.Join(home, ".npm"))
	}
}

// TestStrictPythonVenv: a Python project with a .venv made on the host
// installs a wheel from the loopback index stand-in (through --allow-host)
// into its venv and runs its tests, in a strict box with --binds python,
// with the venv's python named relatively (.venv/bin/python) and through
// ./run.sh. The venv stays writable (nothing is bound over it), and pip's
// cache is the box's own.
func TestStrictPythonVenv(t *testing.T) {
	needTool(t, "/usr/bin/python3")
	repo, home, env := strictRepo(t)
	env = append(env, "PATH="+toolPATH(), "AISAN_RESOLVE=registry.test=127.0.0.1", "PYTHONDONTWRITEBYTECODE=1")
	if r := runCmd(t, repo, env, "", "/usr/bin/python3", "-m", "venv", ".venv"); r.code != 0 {
		need(t, "python3 -m venv", fmt.Errorf("%s", r.stderr))
	}
	ca := newTestCA(t, repo, "registry.test")
	port, _ := registryStandIn(t, ca)
	os.WriteFile(filepath.Join(repo, "test_hello.py"), []byte("import unittest\nimport uxhello\n\nclass T(unittest.TestCase):\n    def test_hello(self):\n        self.assertEqual(uxhello.hello(), 'hello from the wheel')\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte("#!/bin/sh\nexec .venv/bin/python -m unittest -v\n"), 0o755)
	opts := []string{"--binds", "python", "--allow-host", "registry.test:" + port,
		"--env", "PIP_INDEX_URL=https://registry.test:" + port + "/simple/", "--env", "PIP_CERT=" + ca.pemPath,
		"--env", "PIP_DISABLE_PIP_VERSION_CHECK=1"}
	r := strictLong(t, repo, env, 3*time.Minute, opts, ".venv/bin/python", "-m", "pip", "install", "-q", "uxhello")
	if r.code != 0 {
		t.Fatalf(".venv/bin/python -m pip install in the box: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = strict(t, repo, env, opts, ".venv/bin/python", "-m", "unittest", "-v")
	if r.code != 0 || !strings.Contains(r.stderr, "test_hello (test_hello.T") || !strings.Contains(r.stderr, "OK") {
		t.Fatalf(".venv/bin/python -m unittest in the box: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = strict(t, repo, env, opts, "./run.sh")
	if r.code != 0 || !strings.Contains(r.stderr, "OK") {
		t.Fatalf("./run.sh in the box: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if pip, _ := filepath.Glob(filepath.Join(home, ".aisan", "cache", "*", ".cache", "pip", "*")); len(pip) == 0 {
		t.Errorf("the box's pip cache in aisan's state is empty")
	}
	if _, err := os.Stat(filepath.Join(home, ".cache", "pip")); err == nil {
		t.Errorf("the box wrote the host's pip cache")
	}
}

// TestStrictBoxPath: the box's PATH keeps the host's order for what it
// shows; nvm's node first on the host's PATH wins in the box once a spec
// shows it, and without one the launch names the swap to the system's;
// explain lists the PATH entries the box lacks and the spec for each; a
// command the box lacks is refused naming them.
func TestStrictBoxPath(t *testing.T) {
	needTool(t, "/usr/bin/node")
	needTool(t, "/usr/local/go/bin/go")
	repo, home, env := strictRepo(t)
	nvm := filepath.Join(home, ".nvm", "versions", "node", "v99.0.0", "bin")
	os.MkdirAll(nvm, 0o755)
	os.WriteFile(filepath.Join(nvm, "node"), []byte("#!/bin/sh\necho v99.0.0\n"), 0o755)
	env = append(env, "PATH="+toolPATH(nvm))

	r := strict(t, repo, env, []string{"--binds", "node"}, "sh", "-c", `node --version; echo "PATH=$PATH"`)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "v99.0.0\nPATH="+nvm+":") || !strings.Contains(r.stdout, ":/usr/local/go/bin:") {
		t.Errorf("--binds node: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = strict(t, repo, env, nil, "sh", "-c", "node --version")
	want := "aisan: warning: in the box, node is /usr/bin/node, not " + nvm + "/node as on your PATH; --binds node brings yours"
	if r.code != 0 || strings.Contains(r.stdout, "v99") || !strings.Contains(r.stderr, want) {
		t.Errorf("no spec: exit %d, stdout %q, stderr %q (want %q)", r.code, r.stdout, r.stderr, want)
	}
	// Named as the command, nvm's node is found on the host and bound.
	r = strict(t, repo, env, nil, "node", "--version")
	if r.code != 0 || r.stdout != "v99.0.0\n" {
		t.Errorf("node as the command: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// Go under /usr/local/go is in the box: on its PATH, found there;
	// the launch names the spec that brings its caches and settings.
	r = strict(t, repo, env, nil, "go", "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "go version") || !strings.Contains(r.stderr, "aisan: warning: go runs in the box without its toolchain's caches and settings; --binds go brings them") {
		t.Errorf("go: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	x := aisanIn(t, repo, env, "", "explain", "run", "--strict", "--", "true")
	if x.code != 0 || !strings.Contains(x.stdout, "\nyour PATH directories the box does not show:\n") ||
		!strings.Contains(x.stdout, nvm) || !strings.Contains(lineWith(strings.ReplaceAll(x.stdout, "\n  ", "\n"), nvm), "--binds node") {
		t.Errorf("explain: exit %d\n%s\nstderr %s", x.code, x.stdout, x.stderr)
	}
	// A command neither PATH has is refused, showing the box's.
	r = strict(t, repo, env, nil, "no-such-tool")
	if r.code != 127 || !strings.Contains(r.stderr, `aisan: error: cannot run "no-such-tool": not found in PATH`) || !strings.Contains(r.stderr, "aisan: hint: the box's PATH is /usr/local/go/bin:") {
		t.Errorf("a command the box lacks: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestStrictRelativeCommands: ./script and dir/script run in a strict box
// from the working directory, and the repository stays writable under
// them.
func TestStrictRelativeCommands(t *testing.T) {
	repo, _, env := strictRepo(t)
	os.MkdirAll(filepath.Join(repo, "bin"), 0o755)
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte("#!/bin/sh\necho run.sh ok; touch bin/new && echo writable\n"), 0o755)
	os.WriteFile(filepath.Join(repo, "bin", "tool"), []byte("#!/bin/sh\necho tool ok\n"), 0o755)
	for argv, want := range map[string]string{"./run.sh": "run.sh ok\nwritable\n", "bin/tool": "tool ok\n"} {
		r := strict(t, repo, env, nil, argv)
		if r.code != 0 || r.stdout != want {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", argv, r.code, r.stdout, r.stderr)
		}
	}
	r := strict(t, repo, env, nil, "./gone.sh")
	if r.code != 127 || !strings.Contains(r.stderr, `cannot run "./gone.sh": no such file or directory`) {
		t.Errorf("a missing script: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestStrictHostExecRefused: a bind spec that would let a box write what
// the host runs (~/.bashrc, ~/.config as a whole) is refused naming its
// line, and nothing starts; rw_host_exec lets it through, and then the box
// can indeed write it. A box given aisan's configuration directory makes
// the next launch refuse the configuration until the user approves it.
func TestStrictHostExecRefused(t *testing.T) {
	repo, home, env := strictRepo(t)
	env = append(env, "XDG_CONFIG_HOME=")
	bashrc := filepath.Join(home, ".bashrc")
	os.WriteFile(bashrc, []byte("# the user's\n"), 0o644)
	os.MkdirAll(filepath.Join(home, ".config", "aisan"), 0o755)
	cfg := filepath.Join(home, ".config", "aisan", "config.toml")
	os.WriteFile(cfg, []byte("binds = [\"python\"]\n"), 0o644)
	specs := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(specs, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	for spec, want := range map[string]string{
		write("rc.toml", "# my shell\nrw = [\"~/.bashrc\"]\n"): "rc.toml:2: rw: " + bashrc + " would let a box write what the host runs: it is " + bashrc + " (bash runs it)",
		write("config.toml", "rw = [\"~/.config\"]\n"):         "config.toml:1: rw: " + home + "/.config would let a box write what the host runs",
		write("aisandir.toml", "rw = [\"~/.config/aisan\"]\n"): "aisan's configuration",
	} {
		r := strict(t, repo, env, []string{"--binds", spec}, "sh", "-c", "echo STARTED; echo planted >> ~/.bashrc")
		if r.code == 0 || strings.Contains(r.stdout, "STARTED") || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "aisan: hint: if the box really must write it, list it under rw_host_exec") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q (want %q)", spec, r.code, r.stdout, r.stderr, want)
		}
	}
	if b, _ := os.ReadFile(bashrc); string(b) != "# the user's\n" {
		t.Fatalf("~/.bashrc changed: %q", b)
	}
	r := strict(t, repo, env, []string{"--binds", write("ok.toml", "rw_host_exec = [\"~/.bashrc\"]\n")}, "sh", "-c", "echo '# planted by the box' >> ~/.bashrc")
	if b, _ := os.ReadFile(bashrc); r.code != 0 || !strings.Contains(string(b), "# planted by the box") {
		t.Fatalf("rw_host_exec: exit %d, stderr %q, ~/.bashrc %q", r.code, r.stderr, b)
	}

	// A box given ~/.config/aisan read-write: the configuration is refused
	// from then on, until approved.
	r = strict(t, repo, env, []string{"--binds", write("cfg.toml", "rw_host_exec = [\"~/.config/aisan\"]\n")}, "true")
	if r.code != 0 {
		t.Fatalf("rw_host_exec of the config dir: exit %d, stderr %q", r.code, r.stderr)
	}
	r = aisanIn(t, repo, append(env, "AISAN_NO_SCOPE=1"), "", "run", "--", "true")
	if r.code == 0 || !strings.Contains(r.stderr, "aisan: error: the configuration "+cfg+" lies where a strict box can write") || !strings.Contains(r.stderr, "aisan trust "+cfg) {
		t.Fatalf("a configuration a box could write: exit %d, stderr %q", r.code, r.stderr)
	}
	if r = aisan(t, env, "", "trust", cfg); r.code != 0 {
		t.Fatalf("aisan trust: %q", r.stderr)
	}
	if r = aisanIn(t, repo, append(env, "AISAN_NO_SCOPE=1"), "", "run", "--", "true"); r.code != 0 {
		t.Fatalf("the approved configuration: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestConfigShellFunction: with the shell functions of 'aisan shell-init
// bash' loaded in a real bash, 'claude' typed in a repository the
// configuration makes strict starts a strict box, and in another the
// deny-list jail (a stand-in claude reports which).
func TestConfigShellFunction(t *testing.T) {
	requireJail(t)
	bash, err := exec.LookPath("bash")
	need(t, "bash", err)
	home, env := testEnv(t)
	root := worktree(t)
	for _, d := range []string{"strictrepo", "plainrepo"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
		if r := runCmd(t, filepath.Join(root, d), env, "", "git", "init", "-q"); r.code != 0 {
			t.Fatal(r.stderr)
		}
	}
	tools := filepath.Join(t.TempDir(), "bin")
	os.MkdirAll(tools, 0o755)
	// The stand-in says where it runs; a strict box's claude gets more
	// arguments than typed (its MCP configuration), which do not matter.
	os.WriteFile(filepath.Join(tools, "claude"), []byte("#!/bin/sh\nfor a; do [ \"$a\" = --version ] && v=yes; done\necho \"version=$v config=${CLAUDE_CONFIG_DIR:-host} jail=$AISAN_JAIL\"\n"), 0o755)
	os.MkdirAll(filepath.Join(home, ".config", "aisan"), 0o755)
	os.WriteFile(filepath.Join(home, ".config", "aisan", "config.toml"),
		[]byte(fmt.Sprintf("strict = false\n\n[repo.%q]\nstrict = true\n", filepath.Join(root, "strictrepo"))), 0o644)
	env = append(env, "PATH="+toolPATH(tools), "AISAN_NO_SCOPE=1", "XDG_CONFIG_HOME=", "CLAUDE_CONFIG_DIR=", "AISAN_STRICT=")
	script := `eval "$(aisan shell-init bash)"
cd "$1/strictrepo" && claude --version
cd "$1/plainrepo" && claude --version
`
	r := runCmd(t, root, env, "", bash, "--norc", "--noprofile", "-c", script, "bash", root)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 2 {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if !strings.HasPrefix(lines[0], "version=yes config="+filepath.Join(home, ".aisan", "state")+"/strictrepo-") {
		t.Errorf("in the strict repository: %q (stderr %q)", lines[0], r.stderr)
	}
	if !strings.HasPrefix(lines[1], "version=yes config=host jail=plainrepo-") {
		t.Errorf("in the other repository: %q", lines[1])
	}
}

// TestStrictDirenvPathAdd: with direnv active, the project's bin is on
// the host's PATH because its .envrc says PATH_add bin. A strict box
// starts there (it used to refuse the project outright), runs the
// project's command from that PATH, and what it writes there is held
// for review: the host's next command still runs the host's file. A
// directory of the repository on PATH that no .envrc puts there is
// still refused, with a hint that names both ways out.
func TestStrictDirenvPathAdd(t *testing.T) {
	repo, _, env := strictRepo(t)
	bin := filepath.Join(repo, "bin")
	os.MkdirAll(bin, 0o755)
	tool := filepath.Join(bin, "mytool")
	os.WriteFile(tool, []byte("#!/bin/sh\necho mytool ok\n"), 0o755)
	os.WriteFile(filepath.Join(repo, ".envrc"), []byte("PATH_add bin\n"), 0o644)
	env = append(env, "PATH="+bin+":"+toolPATH())
	r := strict(t, repo, env, nil, "sh", "-c", `mytool && printf '#!/bin/sh\necho planted\n' > bin/mytool && cp bin/mytool bin/new && echo wrote`)
	if r.code != 0 || r.stdout != "mytool ok\nwrote\n" {
		t.Fatalf("the box in a direnv project: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(tool); string(b) != "#!/bin/sh\necho mytool ok\n" {
		t.Errorf("the box changed the host's %s, on its PATH: %q", tool, b)
	}
	if _, err := os.Lstat(filepath.Join(bin, "new")); err == nil {
		t.Errorf("the box planted bin/new in a directory on the host's PATH")
	}
	if !strings.Contains(r.stderr, "bin/mytool") || !strings.Contains(r.stderr, "aisan review") {
		t.Errorf("the launch does not say what it held: %q", r.stderr)
	}
	// The host's next command runs the host's tool.
	if r := runCmd(t, repo, env, "", "sh", "-c", "mytool"); r.stdout != "mytool ok\n" {
		t.Errorf("the host's mytool after the box: %q %q", r.stdout, r.stderr)
	}

	// A repository directory on PATH that the .envrc does not name.
	tools := filepath.Join(repo, "tools")
	os.MkdirAll(tools, 0o755)
	r = strict(t, repo, append(env, "PATH="+tools+":"+bin+":"+toolPATH()), nil, "true")
	if r.code == 0 || !strings.Contains(r.stderr, "it holds "+tools+" (a directory on your PATH)") || !strings.Contains(r.stderr, "PATH_add") {
		t.Errorf("a repository directory on PATH no .envrc names: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestStrictEnvrcExportsNamed: the variables a project's .envrc exports
// do not reach a strict box (it starts from none of the host's), and the
// launch names those the box lacks, never their values; one passed with
// --env is in the box and not named.
func TestStrictEnvrcExportsNamed(t *testing.T) {
	repo, _, env := strictRepo(t)
	os.WriteFile(filepath.Join(repo, ".envrc"), []byte("export DATABASE_URL=postgres://app:hunter2@db/app\nexport APP_MODE=dev\n"), 0o644)
	env = append(env, "PATH="+toolPATH(), "DATABASE_URL=postgres://app:hunter2@db/app", "APP_MODE=dev")
	r := strict(t, repo, env, []string{"--env", "APP_MODE"}, "sh", "-c", `echo "mode=$APP_MODE db=${DATABASE_URL:-unset}"`)
	if r.code != 0 || r.stdout != "mode=dev db=unset\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "exports DATABASE_URL, which the box does not get") || !strings.Contains(r.stderr, "--env NAME") {
		t.Errorf("the launch does not name the missing variable: %q", r.stderr)
	}
	if strings.Contains(r.stderr, "hunter2") || strings.Contains(r.stderr, "APP_MODE") {
		t.Errorf("the launch says a value, or a variable it passed: %q", r.stderr)
	}
}

// TestStrictRunAgentByName: 'aisan run --strict -- claude' runs the real
// claude as any program (it works: --version needs nothing), and the
// launch says that none of what 'aisan claude --strict' brings (the model
// endpoint, the login, the user's rules) comes with it.
func TestStrictRunAgentByName(t *testing.T) {
	repo, _, env := strictRepo(t)
	env = append(env, "PATH="+nodeBin(t, "claude")+":"+toolPATH())
	r := strict(t, repo, env, nil, "claude", "--version")
	if r.code != 0 || !strings.Contains(r.stdout, "Claude Code") {
		t.Fatalf("claude --version in a strict box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "'aisan claude --strict -- ARGS' brings them") {
		t.Errorf("the launch does not point at 'aisan claude --strict': %q", r.stderr)
	}
}

// TestStrictNpmScriptQuiet: an npm script in a strict box, with the
// project's node_modules and nothing else, runs without asking the
// registry for anything: the launch ends with no refused request and no
// advice to allow the registry.
func TestStrictNpmScriptQuiet(t *testing.T) {
	needTool(t, "/usr/bin/npm")
	repo, _, env := strictRepo(t)
	env = append(env, "PATH="+toolPATH())
	os.WriteFile(filepath.Join(repo, "package.json"), []byte(`{"name":"app","version":"1.0.0","private":true,"scripts":{"test":"node -e \"console.log('npm test ok')\""}}`), 0o644)
	r := strictLong(t, repo, env, 2*time.Minute, nil, "npm", "test")
	if r.code != 0 || !strings.Contains(r.stdout, "npm test ok") {
		t.Fatalf("npm test in the box: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "refused") {
		t.Errorf("npm test asked the network: %s", r.stderr)
	}
}

// TestStrictGoReplaceOutside: a Go module whose go.mod replaces a module
// with a sibling directory outside the repository cannot build in a box
// that does not show it: the launch names the directory and the bind
// spec line that brings it, and with that spec go loads it, read-only.
func TestStrictGoReplaceOutside(t *testing.T) {
	needTool(t, "/usr/local/go/bin/go")
	repo, home, env := strictRepo(t)
	t.Cleanup(func() { chmodTree(home) })
	env = append(env, "PATH="+toolPATH(), "GOFLAGS=", "GOPROXY=off", "GOMODCACHE=", "GOCACHE=", "GOPATH=", "GOROOT=", "CGO_ENABLED=0")
	sib, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sib = filepath.Join(sib, "strutil")
	os.MkdirAll(sib, 0o755)
	os.WriteFile(filepath.Join(sib, "go.mod"), []byte("module example.test/strutil\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(sib, "s.go"), []byte("package strutil\n\nfunc Up(s string) string { return s + \"!\" }\n"), 0o644)
	rel, err := filepath.Rel(repo, sib)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module example.test/app\n\ngo 1.21\n\nrequire example.test/strutil v0.0.0\n\nreplace example.test/strutil => "+rel+"\n"), 0o644)
	os.MkdirAll(filepath.Join(repo, "cmd"), 0o755)
	os.WriteFile(filepath.Join(repo, "cmd", "a.go"), []byte("package main\n\nimport \"example.test/strutil\"\n\nfunc main() { println(strutil.Up(\"a\")) }\n"), 0o644)
	list := []string{"go", "list", "-deps", "-f", "{{.Dir}}", "./..."}
	// From a subdirectory of the module, as an agent often is.
	cwd := filepath.Join(repo, "cmd")
	r := strictLong(t, cwd, env, 2*time.Minute, []string{"--binds", "go"}, list...)
	want := "aisan: warning: go.mod replaces example.test/strutil with " + rel + ", which the box does not show, so go cannot build there; a bind spec with ro = [\"" + sib + "\"] (--binds FILE) brings it read-only"
	if r.code == 0 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "replacement directory") {
		t.Fatalf("without the sibling: exit %d\nstdout: %s\nstderr: %s\nwant %q", r.code, r.stdout, r.stderr, want)
	}
	spec := filepath.Join(home, "strutil.toml")
	os.WriteFile(spec, []byte("ro = [\""+sib+"\"]\n"), 0o644)
	r = strictLong(t, cwd, env, 2*time.Minute, []string{"--binds", "go," + spec}, list...)
	if r.code != 0 || !strings.Contains(r.stdout, sib+"\n") || strings.Contains(r.stderr, "does not show") {
		t.Fatalf("with the spec: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = strict(t, cwd, env, []string{"--binds", "go," + spec}, "sh", "-c", `touch "$1/new" 2>/dev/null && echo SIBLING-WRITABLE; true`, "sh", sib)
	if r.code != 0 || strings.Contains(r.stdout, "WRITABLE") {
		t.Fatalf("the sibling is writable in the box: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestStrictPythonVenvHints: a venv the user's shell activated puts the
// project's .venv/bin on the host's PATH, so a box may not start there
// (what it left in .venv/bin the host would run next): the refusal says
// to deactivate and how the box runs the venv's commands; once
// deactivated, a venv command named bare is refused naming its path, and
// by that path it runs.
func TestStrictPythonVenvHints(t *testing.T) {
	needTool(t, "/usr/bin/python3")
	repo, _, env := strictRepo(t)
	if r := runCmd(t, repo, env, "", "/usr/bin/python3", "-m", "venv", "--without-pip", ".venv"); r.code != 0 {
		need(t, "python3 -m venv", fmt.Errorf("%s", r.stderr))
	}
	venvBin := filepath.Join(repo, ".venv", "bin")
	os.WriteFile(filepath.Join(venvBin, "pytest"), []byte("#!"+filepath.Join(venvBin, "python")+"\nimport sys\nprint('fake pytest in', sys.prefix)\n"), 0o755)
	// Activated: the venv's bin is on the host's PATH, and the box sees
	// it as a copy held for review (pyvenv.cfg's row), so it starts.
	activated := append(slices.Clone(env), "PATH="+toolPATH(venvBin), "VIRTUAL_ENV="+filepath.Join(repo, ".venv"))
	r := strict(t, repo, activated, []string{"--binds", "python"}, "pytest")
	if r.code != 0 || r.stdout != "fake pytest in "+filepath.Join(repo, ".venv")+"\n" {
		t.Errorf("activated: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	env = append(env, "PATH="+toolPATH())
	r = strict(t, repo, env, []string{"--binds", "python"}, "pytest")
	if r.code != 127 || !strings.Contains(r.stderr, "aisan: hint: this project's virtualenv has pytest: run it by its path, .venv/bin/pytest") {
		t.Errorf("pytest bare: exit %d, stderr %q", r.code, r.stderr)
	}
	r = strict(t, repo, env, []string{"--binds", "python"}, "python")
	if r.code != 127 || strings.Contains(r.stderr, "--binds python brings") || !strings.Contains(r.stderr, "run it by its path, .venv/bin/python") {
		t.Errorf("python bare with --binds python: exit %d, stderr %q", r.code, r.stderr)
	}
	r = strict(t, repo, env, []string{"--binds", "python"}, ".venv/bin/pytest")
	if r.code != 0 || r.stdout != "fake pytest in "+filepath.Join(repo, ".venv")+"\n" {
		t.Errorf(".venv/bin/pytest: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestStrictHeldNodeModules: direnv's layout node puts node_modules/.bin
// on PATH, so a strict box sees it as a copy held for review, and the
// box cannot remove node_modules (every directory above a held path is a
// mount point): npm ci fails with EBUSY. The launch says so and what
// works instead, and npm install does work. A package in node_modules
// that ships an agent's project files (its own .claude) does the same.
func TestStrictHeldNodeModules(t *testing.T) {
	needTool(t, "/usr/bin/node")
	needTool(t, "/usr/bin/npm")
	repo, _, env := strictRepo(t)
	env = append(env, "PATH="+toolPATH())
	web := filepath.Join(repo, "packages", "web")
	os.MkdirAll(filepath.Join(web, "node_modules", ".bin"), 0o755)
	os.WriteFile(filepath.Join(web, ".envrc"), []byte("layout node\n"), 0o644)
	os.WriteFile(filepath.Join(web, "package.json"), []byte(`{"name":"web","version":"1.0.0","private":true}`), 0o644)
	os.WriteFile(filepath.Join(web, "package-lock.json"), []byte(`{"name":"web","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"web","version":"1.0.0"}}}`), 0o644)
	opts := []string{"--binds", "node", "--env", "npm_config_audit=false", "--env", "npm_config_fund=false", "--env", "npm_config_update_notifier=false"}
	r := strictLong(t, web, env, 2*time.Minute, opts, "npm", "ci", "--offline")
	want := "aisan: warning: packages/web/node_modules/.bin is a copy held for review in the box (direnv: "
	fails := "so the box cannot remove packages/web/node_modules: npm ci and rm -rf packages/web/node_modules fail there with EBUSY (npm install works); run npm ci in your shell"
	if r.code == 0 || !strings.Contains(r.stderr, "EBUSY") || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, fails) {
		t.Errorf("npm ci: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = strictLong(t, web, env, 2*time.Minute, opts, "npm", "install", "--offline")
	if r.code != 0 {
		t.Errorf("npm install: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	// A package that ships an agent's project files (its own .claude)
	// makes node_modules as unremovable, with no .envrc: an agent reads
	// them where it works.
	os.Remove(filepath.Join(web, ".envrc"))
	os.RemoveAll(filepath.Join(web, "node_modules"))
	os.MkdirAll(filepath.Join(web, "node_modules", "somepkg", ".claude"), 0o755)
	os.WriteFile(filepath.Join(web, "node_modules", "somepkg", ".claude", "settings.json"), []byte("{}"), 0o644)
	r = strictLong(t, web, env, 2*time.Minute, opts, "npm", "ci", "--offline")
	want = "aisan: warning: packages/web/node_modules/somepkg/.claude is a copy held for review in the box (Claude Code"
	if r.code == 0 || !strings.Contains(r.stderr, "EBUSY") || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, fails) {
		t.Errorf("npm ci with a package's .claude: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// TestStrictNpmCiPackageDotfiles: packages whose tarballs carry their
// own editor, direnv and git hook manager files (.vscode/tasks.json,
// .envrc, .husky/), and one whose command is named mise (a link
// node_modules/.bin/mise), do not stop npm ci in a strict box: those are
// the packages' files, which no host tool runs as the project's, so no
// directory of node_modules is a mount point and nothing is held. All of
// it offline, from local tarballs.
func TestStrictNpmCiPackageDotfiles(t *testing.T) {
	needTool(t, "/usr/bin/node")
	needTool(t, "/usr/bin/npm")
	repo, _, env := strictRepo(t)
	env = append(env, "PATH="+toolPATH(), "npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false")
	os.MkdirAll(filepath.Join(repo, "vendor"), 0o755)
	os.WriteFile(filepath.Join(repo, "vendor", "dotpkg-1.0.0.tgz"), npmTarball(t, map[string]string{
		"package/package.json":       `{"name":"dotpkg","version":"1.0.0","main":"index.js"}`,
		"package/index.js":           "module.exports = 'dotpkg ok';\n",
		"package/.vscode/tasks.json": `{"version":"2.0.0","tasks":[{"label":"w","type":"shell","command":"node watch.js","runOptions":{"runOn":"folderOpen"}}]}`,
		"package/.envrc":             "layout node\n",
		"package/.husky/pre-commit":  "npm test\n",
	}), 0o644)
	os.WriteFile(filepath.Join(repo, "vendor", "misepkg-1.0.0.tgz"), npmTarball(t, map[string]string{
		"package/package.json": `{"name":"misepkg","version":"1.0.0","bin":{"mise":"cli.js"}}`,
		"package/cli.js":       "#!/usr/bin/env node\nconsole.log('mise stand-in');\n",
	}), 0o644)
	opts := []string{"--binds", "node"}
	for _, deps := range []string{
		`{"dotpkg":"file:vendor/dotpkg-1.0.0.tgz"}`,
		`{"dotpkg":"file:vendor/dotpkg-1.0.0.tgz","misepkg":"file:vendor/misepkg-1.0.0.tgz"}`,
	} {
		os.WriteFile(filepath.Join(repo, "package.json"), []byte(`{"name":"app","version":"1.0.0","private":true,"scripts":{"test":"node -e \"console.log(require('dotpkg'))\""},"dependencies":`+deps+`}`), 0o644)
		if r := runCmd(t, repo, env, "", "npm", "install", "--offline"); r.code != 0 {
			t.Fatalf("npm install on the host: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
		tasks := filepath.Join(repo, "node_modules", "dotpkg", ".vscode", "tasks.json")
		if _, err := os.Stat(tasks); err != nil {
			t.Fatalf("the host's npm install: %v", err)
		}
		r := strictLong(t, repo, env, 2*time.Minute, opts, "sh", "-c", "npm ci --offline && npm test")
		if r.code != 0 || !strings.Contains(r.stdout, "dotpkg ok") {
			t.Errorf("npm ci in the box (%s): exit %d\nstdout: %s\nstderr: %s", deps, r.code, r.stdout, r.stderr)
			continue
		}
		if strings.Contains(r.stderr, "cannot remove") || strings.Contains(r.stderr, "held for review") {
			t.Errorf("npm ci in the box (%s) held or pinned a package's files:\n%s", deps, r.stderr)
		}
		if _, err := os.Stat(tasks); err != nil {
			t.Errorf("after npm ci in the box: %v", err)
		}
	}

	// A box that links a folder to a package (so that the user opens
	// the package's .vscode, or cds into its .envrc, as the project's)
	// has the link held for review.
	os.MkdirAll(filepath.Join(repo, "web"), 0o755)
	r := strict(t, repo, env, nil, "sh", "-c", "rmdir web && ln -s node_modules/dotpkg web && ln -s ../node_modules/dotpkg/.vscode vendor/ide")
	if r.code != 0 {
		t.Fatalf("the box's links: exit %d\nstderr: %s", r.code, r.stderr)
	}
	checkHeld(t, r, env, slotName(repo, "run"), []string{"web", "vendor/ide"}, nil)
	for _, p := range []string{"web", "vendor/ide"} {
		if _, err := os.Lstat(filepath.Join(repo, p)); err == nil {
			t.Errorf("%s, the box's link into node_modules, is still in the repository", p)
		}
	}
}

// TestStrictGitIdentityIncluded: a user whose identity lives in a file
// their ~/.gitconfig includes (a dotfiles setup's local file, an
// includeIf.gitdir: per employer) commits in a strict box as on the
// host, with the identity git reads in that repository.
func TestStrictGitIdentityIncluded(t *testing.T) {
	repo, home, env := strictRepo(t)
	os.WriteFile(filepath.Join(home, ".gitconfig.local"), []byte("[user]\n\tname = Included Name\n\temail = local@example.invalid\n"), 0o644)
	os.WriteFile(filepath.Join(home, ".gitconfig-here"), []byte("[user]\n\temail = here@example.invalid\n"), 0o644)
	os.WriteFile(filepath.Join(home, ".gitconfig-else"), []byte("[user]\n\temail = else@example.invalid\n"), 0o644)
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[include]\n\tpath = ~/.gitconfig.local\n"+
		"[includeIf \"gitdir:"+filepath.Dir(repo)+"/\"]\n\tpath = ~/.gitconfig-here\n"+
		"[includeIf \"gitdir:/elsewhere/\"]\n\tpath = ~/.gitconfig-else\n"), 0o644)
	want := "Included Name <here@example.invalid>"
	if got := strings.TrimSpace(runCmd(t, repo, env, "", "git", "var", "GIT_AUTHOR_IDENT").stdout); !strings.HasPrefix(got, want) {
		t.Fatalf("the host's git: %q, want %q", got, want)
	}
	r := strict(t, repo, env, nil, "sh", "-c", "echo x > f && git add f && git commit -qm boxed && git log -1 --format='%an <%ae>'")
	if r.code != 0 || r.stdout != want+"\n" {
		t.Errorf("a commit in the box: exit %d, stdout %q, stderr %q, want %q", r.code, r.stdout, r.stderr, want)
	}
}

// TestStrictVenvPyenvPython: a project's .venv made with pyenv's python
// links to an interpreter under ~/.pyenv, which a box without --binds
// python does not show: a venv command run inside the box (as an agent
// runs it) fails with a bare "not found", so the launch names the
// interpreter and the spec; with --binds python it runs.
func TestStrictVenvPyenvPython(t *testing.T) {
	repo, home, env := strictRepo(t)
	env = append(env, "PATH="+toolPATH())
	pybin := filepath.Join(home, ".pyenv", "versions", "3.99.0", "bin")
	os.MkdirAll(pybin, 0o755)
	py := filepath.Join(pybin, "python3.99")
	os.WriteFile(py, []byte("#!/bin/sh\necho \"python 3.99 $*\"\n"), 0o755)
	venv := filepath.Join(repo, ".venv")
	os.MkdirAll(filepath.Join(venv, "bin"), 0o755)
	os.WriteFile(filepath.Join(venv, "pyvenv.cfg"), []byte("home = "+pybin+"\n"), 0o644)
	os.Symlink(py, filepath.Join(venv, "bin", "python"))
	os.WriteFile(filepath.Join(venv, "bin", "pytest"), []byte("#!"+filepath.Join(venv, "bin", "python")+"\n"), 0o755)
	r := strict(t, repo, env, nil, "sh", "-c", ".venv/bin/pytest -q")
	want := "aisan: warning: the project's .venv/bin/python is " + py + ", which the box does not show, so the virtualenv's commands fail there with \"not found\"; --binds python brings it"
	if r.code == 0 || !strings.Contains(r.stderr, "not found") || !strings.Contains(r.stderr, want) {
		t.Errorf("without --binds python: exit %d, stdout %q, stderr %q, want %q", r.code, r.stdout, r.stderr, want)
	}
	r = strict(t, repo, env, []string{"--binds", "python"}, "sh", "-c", ".venv/bin/pytest -q")
	if r.code != 0 || !strings.Contains(r.stdout, "python 3.99 .venv/bin/pytest -q") || strings.Contains(r.stderr, "does not show") {
		t.Errorf("with --binds python: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
