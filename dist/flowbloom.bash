# bash completion for flowbloom(8).
# Verbs, their options and option values, and what each argument is (NAME,
# DEV, FILE, VERB) are read from the installed binary's own help, so they
# always match it; filter names come from `flowbloom list`, devices from
# /sys/class/net (or `ip -n NETNS` after -n NETNS), for arguments and for
# option values (--into NAME, --dev DEV) alike.

# The verbs: the synopsis lines of `flowbloom help`.
_flowbloom_verbs() {
	"$1" help 2>/dev/null | sed -n 's/^       flowbloom \([a-z][a-z]*\).*/\1/p'
}

# One verb's synopsis, as one line (`flowbloom help VERB`, up to the
# first blank line, the verb itself dropped).
_flowbloom_synopsis() {
	"$1" help "$2" 2>/dev/null | sed -n '1s/^Usage: flowbloom [^ ]* *//p; 2,/^$/{/^$/q;p}' | tr -s ' \n' '  '
}

# Files and directories, as readline offers them: a directory ends in '/'
# and takes no space after it, a name with blanks or glob characters is
# one word, quoted.
_flowbloom_files() {
	compopt -o filenames 2>/dev/null
	mapfile -t -O ${#COMPREPLY[@]} COMPREPLY < <(compgen -f -- "$1")
}

# The names read on stdin, one a line, that start with $1, quoted for the
# command line. Matched as text: compgen -W expands every word it is given,
# and a device named '$(cmd)' in a namespace someone else names (a
# container's, with -n NETNS) would run cmd at a TAB.
_flowbloom_offer() {
	local w q
	while IFS= read -r w; do
		[[ -n $w && $w == "$1"* ]] || continue
		printf -v q '%q' "$w"
		COMPREPLY+=("$q")
	done
}

# Filter names (`flowbloom list`).
_flowbloom_names() {
	_flowbloom_offer "$2" < <("$1" list 2>/dev/null | cut -d' ' -f1)
}

# Devices: /sys/class/net, or those of NETNS (if not empty).
_flowbloom_devs() {
	COMPREPLY=()
	if [[ -n $1 ]]; then
		_flowbloom_offer "$2" < <(ip -n "$1" -o link show 2>/dev/null | sed 's/^[0-9]*: \([^:@]*\).*/\1/')
	else
		_flowbloom_offer "$2" < <(ls /sys/class/net 2>/dev/null)
	fi
}

_flowbloom() {
	local cur prev fb i verb="" netns="" syn tok prevtok n alt
	local -a pos=() words=() alts=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=""
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	fb=${COMP_WORDS[0]}
	command -v "$fb" >/dev/null 2>&1 || fb=flowbloom
	COMPREPLY=()

	# Global options come before the verb.
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-n | --netns)
			((i++))
			netns=${COMP_WORDS[i]}
			;;
		-*) ;;
		*)
			verb=${COMP_WORDS[i]}
			break
			;;
		esac
	done
	if [[ -z $verb ]]; then
		case $prev in
		-n | --netns)
			_flowbloom_offer "$cur" < <(ip netns list 2>/dev/null | cut -d' ' -f1)
			return
			;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "-j --json -v --verbose -n --netns -h --help -V --version" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_flowbloom_verbs "$fb")" -- "$cur"))
		fi
		return
	fi

	# The verb's synopsis: its options (with the values they take, as
	# "--mode native|generic") and its positional arguments (the
	# upper-case words not after an option, up to the first '|').
	syn=$(_flowbloom_synopsis "$fb" "$verb")
	declare -A optval=()
	prevtok=""
	# The synopsis is split by read -a: a for loop's splitting also
	# globbed, "[VERB]" becoming a file named V of the current directory
	# (nothing under nullglob, an error under failglob).
	read -ra words <<<"${syn//[\[\]()]/ }"
	for tok in "${words[@]}"; do
		if [[ $tok == -*\|-* ]]; then
			# Options that exclude each other, as "--udp|--tcp": each
			# one an option without a value.
			IFS='|' read -ra alts <<<"$tok"
			for alt in "${alts[@]}"; do optval[$alt]=""; done
			prevtok=""
			continue
		elif [[ $tok == -* ]]; then
			optval[$tok]=""
		elif [[ $prevtok == -* && $tok =~ ^[A-Za-z0-9] ]]; then
			optval[$prevtok]=$tok
		fi
		prevtok=$tok
	done
	prevtok=""
	read -ra words <<<"${syn%%|*}"
	for tok in "${words[@]}"; do
		tok=${tok//[\[\]()]/}
		if [[ $tok =~ ^[A-Z][A-Z.a-z]*$ && $prevtok != -* && $prevtok != \[-* && $prevtok != \(-* ]]; then
			pos+=("$tok")
		fi
		prevtok=$tok
	done

	# The value of an option.
	if [[ $prev == -* && -n ${optval[$prev]+x} && -n ${optval[$prev]} ]]; then
		case ${optval[$prev]} in
		FILE* | PATH) _flowbloom_files "$cur" ;;
		NAME | BAN) _flowbloom_names "$fb" "$cur" ;;
		DEV) _flowbloom_devs "$netns" "$cur" ;;
		*[a-z0-9]*\|* | exact) COMPREPLY=($(compgen -W "${optval[$prev]//|/ }" -- "$cur")) ;;
		esac
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "${!optval[*]}" -- "$cur"))
		return
	fi

	# Which positional argument this is: words after the verb that are
	# not options or option values.
	n=0
	for ((i = i + 1; i < COMP_CWORD; i++)); do
		tok=${COMP_WORDS[i]}
		if [[ $tok == -* ]]; then
			[[ -n ${optval[$tok]} ]] && ((i++))
			continue
		fi
		((n++))
	done
	((${#pos[@]})) || return
	if ((n >= ${#pos[@]})); then
		[[ ${pos[-1]} == *... ]] || return
		n=$((${#pos[@]} - 1))
	fi
	case ${pos[n]%...} in
	NAME)
		_flowbloom_names "$fb" "$cur"
		;;
	SRC)
		# A filter, or an export file (set-algebra verbs).
		_flowbloom_names "$fb" "$cur"
		_flowbloom_files "$cur"
		;;
	DEV)
		_flowbloom_devs "$netns" "$cur"
		;;
	VERB)
		COMPREPLY=($(compgen -W "$(_flowbloom_verbs "$fb")" -- "$cur"))
		;;
	FILE*)
		_flowbloom_files "$cur"
		;;
	esac
}
complete -F _flowbloom flowbloom
