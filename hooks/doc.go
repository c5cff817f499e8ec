// Package hooks registers aisan's kill guard with the agents: a PreToolUse
// hook for the Bash tool in Claude Code's settings.json and in Codex's
// hooks.json, and for opencode bash permission rules that go after every
// rule of the user's (the rules of that part open hooks/opencode.go; it
// edits no file, it reads opencode's config layers and sets a variable).
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
//   - Ours is recognised by its command, "<dir>/aisan guard", whatever the
//     directory, or by the exact command the installing binary writes (a
//     copy named otherwise, such as aisan-dev): installing from a new binary
//     replaces the old entry instead of adding a second one, and
//     [Uninstall] removes only that.
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
// ([Hook.Command] quotes it), with a generous [DefaultTimeout]. Codex runs a
// new hooks.json entry only after the user has trusted it in /hooks (or when
// it is delivered as a managed hook); the command says so after installing.
//
// The hook is the explanation, not the boundary: the jail's PID namespace is
// what keeps agents from killing each other's processes.
package hooks
