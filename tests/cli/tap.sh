# SPDX-License-Identifier: BSD-3-Clause
# tap.sh - tiny TAP helpers for the shell tests (sourced).
#   ok_if DESCRIPTION COMMAND...   passes when COMMAND exits 0
#   skip_case DESCRIPTION REASON   a case that cannot run here (TAP SKIP)
#   shared_ok_if DESCRIPTION COMMAND...
#                                  ok_if, or skip_case when the directory
#                                  $PCAPS (../shared/pcaps) is absent
#   finish                         prints the plan; exits 1 if anything failed
_n=0
_fail=0
ok_if() {
	desc=$1; shift
	_n=$((_n + 1))
	if "$@"; then
		echo "ok $_n - $desc"
	else
		echo "not ok $_n - $desc"
		_fail=$((_fail + 1))
	fi
}
skip_case() {
	_n=$((_n + 1))
	echo "ok $_n - $1 # SKIP $2"
}
shared_ok_if() {
	if [ -d "$PCAPS" ]; then
		ok_if "$@"
	else
		skip_case "$1" "no ../shared/pcaps ($PCAPS)"
	fi
}
finish() {
	echo "1..$_n"
	[ $_fail -eq 0 ]
}
