# aisan shell integration for fish.
#
#   /usr/local/bin/aisan shell-init fish | source     # in ~/.config/fish/config.fish
#
# claude, codex and opencode then start inside an aisan jail, with their
# arguments passed through unchanged. The functions run the aisan that
# printed them, by its path: a jail can write ~/.local/bin and other
# directories of yours on PATH, and an aisan it put there must not be the
# one your next claude runs. Name aisan by its path in config.fish too.
# Inside a jail (AISAN_JAIL is set) the functions run the real command,
# so an agent that starts another agent does not try to jail itself
# again; NO_AISAN=1 does the same on the host:
#
#   NO_AISAN=1 claude --version

function _aisan_run --argument-names kind --description 'run an agent in an aisan jail'
    set -e argv[1]
    if test -n "$AISAN_JAIL"; or test -n "$NO_AISAN"
        command $kind $argv
    else
        command aisan $kind -- $argv
    end
end

function claude --wraps claude --description 'Claude Code, in an aisan jail'
    _aisan_run claude $argv
end

function codex --wraps codex --description 'Codex, in an aisan jail'
    _aisan_run codex $argv
end

function opencode --wraps opencode --description 'opencode, in an aisan jail'
    _aisan_run opencode $argv
end
