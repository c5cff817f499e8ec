# aisan completion for zsh ('aisan shell-init zsh' includes it).
#
#   source <(aisan completion zsh)     # in ~/.zshrc
#
# Each Tab asks aisan itself: 'aisan __complete -- WORD...' gets the words
# after "aisan" up to the cursor and prints one candidate a line
# ("VALUE<tab>WHAT"), then what zsh may add on its own (":files",
# ":commands" or ":none").

_aisan() {
	local -a cands
	local out line fallback=files ret=1
	out=$(command aisan __complete -- "${(@)words[2,CURRENT]}" 2>/dev/null) || return 1
	for line in "${(@f)out}"; do
		case $line in
		(:*) fallback=${line#:} ;;
		(*) cands+=("${${line%%$'\t'*}//:/\\:}:${line#*$'\t'}") ;;
		esac
	done
	if (( ${#cands} )); then
		_describe -t aisan-values 'aisan' cands && ret=0
	fi
	case $fallback in
	(files) _files && ret=0 ;;
	(commands) _command_names -e && ret=0 ;;
	esac
	return ret
}

# compdef exists once compinit has run; a .zshrc may run it after this.
if (( $+functions[compdef] )); then
	compdef _aisan aisan
else
	_aisan_compdef() {
		(( $+functions[compdef] )) || return 0
		compdef _aisan aisan
		add-zsh-hook -d precmd _aisan_compdef
		unfunction _aisan_compdef
	}
	autoload -Uz add-zsh-hook
	add-zsh-hook precmd _aisan_compdef
fi
