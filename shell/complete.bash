# aisan completion for bash ('aisan shell-init bash' includes it).
#
#   source <(aisan completion bash)    # in ~/.bashrc
#
# Each Tab asks aisan itself: 'aisan __complete -- WORD...' gets the words
# after "aisan" up to the cursor and prints one candidate a line
# ("VALUE<tab>WHAT"), then what bash may add on its own (":files",
# ":commands" or ":none").

_aisan_complete() {
	local -a words=() out=()
	local i n line fallback=files prefix=
	# bash splits "--grace=5s" at the "="; aisan wants the option whole.
	for ((i = 1; i <= COMP_CWORD; i++)); do
		n=${#words[@]}
		if ((n > 0)) && [[ ${words[n - 1]} == -* && (${COMP_WORDS[i]} == = || ${words[n - 1]} == *=) ]]; then
			words[n - 1]+=${COMP_WORDS[i]}
		else
			words+=("${COMP_WORDS[i]}")
		fi
	done
	if [[ ${words[-1]} == -*=* ]]; then
		prefix=${words[-1]%%=*}=
	fi
	mapfile -t out < <(command aisan __complete -- "${words[@]}" 2>/dev/null)
	COMPREPLY=()
	for line in "${out[@]}"; do
		case $line in
		:*) fallback=${line#:} ;;
		*)
			line=${line%%$'\t'*}
			COMPREPLY+=("${line#"$prefix"}")
			;;
		esac
	done
	case $fallback in
	commands) mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -c -- "${COMP_WORDS[COMP_CWORD]}") ;;
	none) compopt +o default 2>/dev/null ;;
	esac
	return 0
}
complete -o default -F _aisan_complete aisan
