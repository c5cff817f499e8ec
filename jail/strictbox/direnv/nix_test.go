package direnv

import (
	"slices"
	"testing"
)

// TestNixPaths: the relative path literals of a nix expression, in
// strings too, each once; the project's own directory and what is not a
// path are not.
func TestNixPaths(t *testing.T) {
	src := `{
  inputs.local.url = "path:./nix/sub";
  outputs = { self, nixpkgs, ... }: {
    devShells.x86_64-linux.default = import ./nix/shell.nix { shellHook = builtins.readFile ../common/hook.sh; };
    packages.default = pkgs.buildGoModule { src = ./.; vendorHash = "sha256-a/b+c"; };
    x = "${./scripts/env.sh}"; y = ./nix/shell.nix; z = a/b; url = "github:NixOS/nixpkgs/nixos-unstable";
  };
}`
	want := []string{"./nix/sub", "./nix/shell.nix", "../common/hook.sh", "./scripts/env.sh"}
	if got := NixPaths([]byte(src)); !slices.Equal(got, want) {
		t.Errorf("NixPaths = %q, want %q", got, want)
	}
}

// FuzzNixPaths: whatever a nix file holds, its paths are relative path
// literals.
func FuzzNixPaths(f *testing.F) {
	f.Add([]byte("import ./a.nix; src = ./.; b = ../x/y;"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, p := range NixPaths(b) {
			if p[0] != '.' || p == "." || p == ".." {
				t.Fatalf("%q is not a relative path literal", p)
			}
		}
	})
}
