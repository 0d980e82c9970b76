# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Sourced by tests/run.sh and tests/lib/lib.sh.
# lock_held_here FILE: 0 if this shell or an ancestor holds a flock on
# FILE: a descriptor of theirs on the file whose fdinfo lists the lock.
# Not the PIDs /proc/locks names: that of the flock(1) which took the
# lock, gone since, its PID free to be given again (to an ancestor of
# another suite even).
lock_held_here() {
	local p=$$ f
	while [ -n "$p" ] && [ "$p" -gt 1 ]; do
		for f in /proc/"$p"/fd/*; do
			[ "$f" -ef "$1" ] && grep -q '^lock:.*FLOCK' "/proc/$p/fdinfo/${f##*/}" 2>/dev/null && return 0
		done
		p=$(awk '$1 == "PPid:" { print $2 }' "/proc/$p/status" 2>/dev/null)
	done
	return 1
}
