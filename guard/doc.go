// Package guard decides whether a shell command that an AI coding agent is
// about to run should be refused because it would kill processes by name or
// by broadcast.
//
// # Why it exists
//
// An agent that wants to stop "its" dev server tends to reach for pkill -f
// node, killall python or kill -9 -1. Those commands pick their victims by
// name or by process group, so on a shared machine they also hit the
// editor, the other agents and the user's own work. aisan runs each agent
// in its own PID namespace, and that namespace is the real boundary: inside
// a jail, pkill can only reach the jail's own processes. The guard is not a
// second wall. It is the explanation: it stops the command before it runs
// and tells the agent what to do instead (find the PID with pgrep -a, then
// kill that PID; or ask the user to run aisan kill for the whole jail). That
// saves the agent from killing its own tools and keeps its habits sane when
// it later runs outside a jail.
//
// The namespace does not reach the servers that a jail can still talk to:
// the user's tmux, screen or zellij server, the container engine, pm2 and
// supervisord, cron and at, the user's service manager over systemd-run or
// the bus. A kill sent through one of them lands outside the jail, so for
// these the guard is the only check, and it judges each by a table of the
// subcommands and arguments that reach past the agent's own work.
//
// # How it looks at a command
//
// [Check] parses the command with mvdan.cc/sh's bash parser and examines
// every simple command that could run: the parts of pipelines and lists,
// subshells, groups, the bodies of if, for, while, case and functions,
// command and process substitutions, and the text handed to another shell
// (sh -c, eval, trap, here-documents and pipes into a shell, watch, ssh,
// su -c, parallel, at), to a tmux or screen server, or to a program that
// runs shell commands of its own (git aliases and pagers, sed's e, vim
// -c, less +!, emacs --eval, PROMPT_COMMAND). Wrappers such as
// sudo, env, timeout, nohup, xargs and find -exec are looked through to the
// command they start. Names are compared after quote removal, brace
// expansion and by basename, so \pkill, "pkill", a name split by empty
// quotes, p{k..k}ill and /usr/bin/pkill all count as pkill.
//
// A word whose value is only known at run time is treated as unknown, never
// as harmless: a command word such as pk${X}ill is read through its fixed
// text, each run-time part standing for anything or nothing. The guard tracks what it can see in the same input: values
// assigned to variables and arrays (and what ${x,,}, ${x%pat}, ${x/a/b}
// make of them), defaults in ${X:-…}, positional parameters of functions,
// sh -c scripts and set --, constant arithmetic, what echo and printf
// print, scripts and PID listings written to a file and then read, and
// whether text came from a PID-listing command such as pgrep. Code given to
// an interpreter is judged by what it would execute: the strings it hands
// to a shell and the word lists it runs, not the words that appear in it;
// kills native to a language are out of its reach unless the target is
// a literal the shell's kill is refused for (os.kill(-1, 9), killpg(0))
// or the code finds its targets in a process listing (psutil, ps-list).
// It does not read files, the environment or anything else outside the
// input.
// The rules themselves are listed at the top of rules.go.
//
// # Failing closed
//
// Both agents read only exit status 2 as a block. A hook that exits 1,
// crashes, cannot be started or outlives its timeout lets the tool call
// proceed, so the guard has to fail closed on its own and refuses whatever
// it cannot check. Input it cannot parse is checked up to the error and
// then scanned token by token and refused if a kill word appears in it
// anywhere; input nested or repeated beyond
// fixed limits is refused; a panic inside [Check] becomes a refusal that
// says so. The analysis does no I/O, never blocks, and gives the same
// answer for the same input.
//
// [ParseHookInput] and [DenyOutput] speak the PreToolUse hook protocol that
// both agents use, and [RunHook] is the whole hook on stdin and stdout: the
// aisan guard command and the lean aisan-guard binary both call it, the
// latter so that the process the agents start before every shell command
// links nothing else and starts fast.
package guard
