// Package mcp imports the user's local (stdio) MCP server declarations
// from the host configuration of Claude Code, Codex and opencode into a
// strict box, so that those servers start inside the box: with its
// filesystem, its cleared environment and its network namespace.
//
// # Pipeline
//
// Reading, deciding, writing and resolving are separate steps:
//
//  1. [LoadClaude], [LoadCodex] and [LoadOpencode] read the host files
//     (opened without following a final symlink, regular files only,
//     at most [MaxFileSize] bytes) and hand the bytes to the pure parsers
//     [ParseClaude], [ParseCodex] and [ParseOpencode]. A missing file is
//     empty; an unreadable or invalid one is an error naming it.
//  2. Each parser returns an [Import]: the kept stdio [Server] entries and
//     the [Dropped] ones (remote, disabled, unapproved), each with its name
//     and the file it came from, for the launch line and for explain.
//  3. [FilterEnv] withholds env values that look like secrets unless the
//     caller's allow-list (the bind spec's mcp_env) names the variable.
//  4. [WriteClaude], [WriteCodex] and [WriteOpencode] write the kept
//     entries in the client's own format into a directory the caller
//     owns (the strict state dir of the repository and agent), atomically.
//     The host files are never written.
//  5. [Resolve] finds each server's executable in the box PATH, follows
//     symlinks, "#!" interpreter lines and virtualenv interpreter chains,
//     and returns the read-only binds the box needs. A server whose
//     command cannot be found or run in the box is dropped, with the
//     reason and the bind spec lines that would bring it ([Unrunnable]).
//
// [Prepare] runs these steps for one client and returns what the launcher
// applies to the box (argv, env, binds, links, report lines); with DryRun
// it writes nothing, for explain, which prints [Lines] and [Explain].
// Nothing the user declared stops a launch: a host file that cannot be
// read imports nothing, a server that cannot run is dropped, a server
// that fetches its package at start ([NeedsNetwork]) is named, and each
// is one report line.
//
// # Rules
//
// Nothing is expanded on the host: a "${VAR}" in a command, an argument or
// an env value stays as written and is expanded, if at all, by the client
// inside the box from the box's own environment. So no host variable, and
// no host secret behind one, can be pulled into the box by an import.
//
// The repository is writable from the box, so it must not choose what the
// next box starts. Claude's project file .mcp.json therefore contributes
// only the servers approved in host-only settings (see [ParseClaude]);
// approvals that Claude itself records in the repository's
// .claude/settings.local.json do not count, rejections there do.
//
// Remote servers (http, sse, ws, streamable http) and their authentication
// state stay on the host: they are dropped and reported, never written.
package mcp
