# aisan shell integration for bash and zsh.
#
#   eval "$(/usr/local/bin/aisan shell-init bash)"    # in ~/.bashrc
#   eval "$(/usr/local/bin/aisan shell-init zsh)"     # in ~/.zshrc
#
# claude, codex and opencode then start inside an aisan jail, with their
# arguments passed through unchanged. The functions run the aisan that
# printed them, by its path: a jail can write ~/.local/bin and other
# directories of yours on PATH, and an aisan it put there must not be the
# one your next claude runs. Name aisan by its path in the rc file too.
# Inside a jail (AISAN_JAIL is set) the functions run the real command,
# so an agent that starts another agent does not try to jail itself
# again; NO_AISAN=1 does the same on the host:
#
#   NO_AISAN=1 claude --version
#
# An alias named claude, codex or opencode takes precedence over these
# functions; remove it for the jail to apply.

_aisan_run() {
	local _aisan_kind=$1
	shift
	if [ -n "${AISAN_JAIL-}" ] || [ -n "${NO_AISAN-}" ]; then
		command "$_aisan_kind" "$@"
	else
		command aisan "$_aisan_kind" -- "$@"
	fi
}

# The function keyword keeps an existing alias of the same name from being
# expanded into these definitions, which would be a syntax error.
function claude { _aisan_run claude "$@"; }
function codex { _aisan_run codex "$@"; }
function opencode { _aisan_run opencode "$@"; }
