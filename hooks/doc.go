// Package hooks registers aisan's kill guard with the agents: a PreToolUse
// hook for the Bash tool in Claude Code's settings.json and in Codex's
// hooks.json; opencode's bash permission rules, which go after every rule
// of the user's, are package hooks/opencode's (it edits no file, it reads
// opencode's config layers and sets a variable). For a strict box, whose
// agent reads none of the user's files, it also reads Claude's rules as
// data: its permissions and the hooks the box can run (claudebox.go); the
// box seeds them into its own state.
//
// The files it edits are the user's, hand-edited and shared with the agents,
// which rewrite them too. So every edit follows the same rules.
//
// # Rules
//
//   - Merge, never replace. Every key, hook and matcher group that is not ours
//     stays where it was, and values we do not need to open come back byte for
//     byte. Objects on the way to our entry are re-emitted one member per line
//     in the indentation the file already uses.
//   - Ours is recognised by its command, whatever the directory: the lean
//     guard "<dir>/aisan-guard" that [LeanGuard] finds beside aisan, the
//     fallback "<dir>/aisan guard" (or "<dir>/aisan-full guard", as the
//     full binary writes it), the exec form of either, or the exact
//     command the installing binary writes (a copy named otherwise, such as
//     aisan-dev). Installing from a new binary, or in the other form,
//     replaces the old entry instead of adding a second one, and
//     [Uninstall] removes only ours.
//   - Idempotent. When the file already holds exactly our entry, nothing is
//     written, not even the backup, and the result says so.
//   - Backup first. Before a file changes, its previous content is written to
//     <file>.aisan-bak, so a bad merge costs one mv.
//   - Atomic. New content goes to a temporary file in the same directory,
//     is synced, takes the old file's mode and is renamed over it. A crash
//     leaves the old file or the new one, never half of each. A symlinked
//     settings file (dotfile managers do that) is edited at its target, so
//     the link survives.
//   - Refuse what does not parse. A file with comments, trailing commas or a
//     root that is not an object is left untouched, and the error carries
//     the line and column ([ParseError]). Guessing at a broken file could
//     drop the user's settings; they fix it once and run us again.
//
// # Fail closed
//
// The agents let a tool call through when a hook exits with anything but 2,
// cannot start or times out. The guard fails closed by itself (any internal
// error is a deny); this package's part is to point the hook at an absolute
// path of a binary that exists, through a command the shell cannot misread
// ([Hook.Command] quotes it), with a generous [DefaultTimeout].
//
// # Which binary
//
// The agents start the hook before every shell command, so its start-up
// is paid on each tool call. The aisan binary is large (it links the
// egress proxy, HTTP/2, TOML, a terminal emulator, D-Bus) and starts
// markedly slower than aisan-guard, which links only the guard and runs
// the very same function. [LeanGuard] picks aisan-guard when it sits
// beside the installing aisan as an executable regular file, not a
// symlink, of the same owner (as make install puts it), so that a file
// someone else dropped there is never run by the agents; otherwise the
// hook is aisan's own guard subcommand, which decides the same. Codex runs a
// new hooks.json entry only after the user has trusted it in /hooks (or when
// it is delivered as a managed hook); the command says so after installing.
//
// The hook is the explanation, not the boundary: the jail's PID namespace is
// what keeps agents from killing each other's processes.
package hooks
