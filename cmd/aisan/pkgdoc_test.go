package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPackageDocs: every package explains itself in exactly one package
// comment, so there is one place to read the why and no two to drift apart.
func TestPackageDocs(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	dirs := map[string][]string{} // package dir -> files with a package comment
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.Dir(p)
		seen[dir] = true
		if f.Doc != nil {
			dirs[dir] = append(dirs[dir], filepath.Base(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < 10 {
		t.Fatalf("found only %d packages under %s", len(seen), root)
	}
	for dir := range seen {
		rel, _ := filepath.Rel(root, dir)
		switch n := len(dirs[dir]); {
		case n == 0:
			t.Errorf("package %s has no package comment", rel)
		case n > 1:
			t.Errorf("package %s has %d package comments (%s); keep one", rel, n, strings.Join(dirs[dir], ", "))
		}
	}
}

// TestOneAtomicWriter: a file is replaced through jail/shared/atomicfile
// and nowhere else, so every replacement gets its rules (created
// exclusively, no link followed, renamed over the target): no other
// non-test code makes a temporary file to rename.
func TestOneAtomicWriter(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	writer := filepath.Join(root, "jail", "shared", "atomicfile")
	checked := 0
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || p == writer || p == filepath.Join(root, "tests")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && (x.Name == "os" && sel.Sel.Name == "CreateTemp" || x.Name == "ioutil" && sel.Sel.Name == "TempFile") {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("%s makes a temporary file itself (%s.%s); replace files through atomicfile.Write", rel, x.Name, sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d files", checked)
	}
}
