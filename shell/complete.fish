# aisan completion for fish ('aisan shell-init fish' includes it).
#
#   aisan completion fish | source     # in ~/.config/fish/config.fish
#
# Each Tab asks aisan itself: 'aisan __complete -- WORD...' gets the words
# after "aisan" up to the cursor and prints one candidate a line
# ("VALUE<tab>WHAT"), then what fish may add on its own (":files",
# ":commands" or ":none").

function __aisan_complete --description 'aisan completion, from aisan itself'
    set -l words (commandline -opc)
    set -e words[1]
    set -l cur (commandline -ct)
    set -l out (command aisan __complete -- $words "$cur" 2>/dev/null)
    or return
    set -l fallback files
    for line in $out
        if string match -q -- ':*' $line
            set fallback (string sub -s 2 -- $line)
        else
            printf '%s\n' $line
        end
    end
    switch $fallback
        case files
            __fish_complete_path "$cur"
        case commands
            __fish_complete_command
    end
end

complete -c aisan -e
complete -c aisan -f -a '(__aisan_complete)'
