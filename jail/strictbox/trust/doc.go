// Package trust decides whether aisan may read a file that defines a box
// (a bind spec and its includes, an egress file, the credential source an
// egress file names, the user's configuration) and keeps the user's
// approvals of such files.
//
// # The rule
//
// A strict box can write wherever it was given read-write: its repository
// and working directory, the read-write entries of its bind specs, its
// state inside aisan's state directory. A file there may have been written
// by a box, so aisan reads it only when the user approved its exact
// content ('aisan trust FILE', as 'direnv allow' and 'mise trust' do), and
// refuses it otherwise, saying where it lies; a file that changed since
// its approval is refused with the diff. A project can then ship its bind
// spec in its repository: each clone's user reads and approves it once,
// and again after every change, whoever made it.
//
// The places a box can write ([Places]) are aisan's state directories,
// every directory a strict box was ever given read-write (recorded by
// [Store.Remember] when the box starts, before anything of it runs), and
// what the caller adds (the launch's own repository and working
// directory). A file is inside them when its path, any symbolic link on
// the way to it, or its target is; a file with a second hard link counts
// as inside too, since its other name may be anywhere, unless it is
// another user's and no box may write it by any name.
//
// A credential source (a token file, a token command's program and the
// files it is given) is read or run while the box lives, after any
// approval could be checked, and a token file inside the box is a
// credential in it: no approval lets one that lies where a box can write
// be used ([Store.CheckSource]).
//
// # The store
//
// Approvals and the record of writable places live in the trust directory
// inside aisan's state ($AISAN_HOME/trust), which is read-only in every
// jail and every box. Files there are written atomically (jail/shared/atomicfile)
// and read with the safe reader (jail/shared/regfile). An approval is keyed by
// the file's absolute path as named and holds its SHA-256 and a copy of
// the content, which is what a later refusal diffs against.
//
// The checks are functions of the file read and the places: callers read
// the file once through [ReadFile], check those bytes, and use those
// bytes, so a file that changes after the check is never the one used.
package trust
