# Shared helpers of the golden-output CLI tests (cli.sh, tui.sh), sourced
# after the caller set GOLDEN: a scratch directory as the working directory,
# the C locale, and checks that count instead of stopping at the first
# failure (unlike lib.sh's fail).

tmp=$(mktemp -d) || exit 99
if [ "${FR_KEEP:-0}" = 1 ]; then echo "keeping $tmp" >&2; else trap 'rm -rf "$tmp"' EXIT; fi
cd "$tmp" || exit 99
# Messages and numbers must not depend on the locale.
LC_ALL=C
export LC_ALL

failures=0
checks=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# run NAME EXPECTED_STATUS CMD...: stdout in NAME.out, stderr in NAME.err.
run() {
  name=$1 want=$2
  shift 2
  checks=$((checks + 1))
  "$@" >"$name.out" 2>"$name.err"
  got=$?
  if [ "$got" != "$want" ]; then
    fail "$name: exit status $got, expected $want ($*)"
    sed 's/^/  stderr: /' "$name.err" | head -5
  fi
}

# golden NAME FILE: FILE must equal tests/golden/NAME (FR_UPDATE_GOLDEN=1
# rewrites the golden instead).
golden() {
  checks=$((checks + 1))
  if [ "${FR_UPDATE_GOLDEN:-0}" = 1 ]; then
    cp "$2" "$GOLDEN/$1" && echo "updated $GOLDEN/$1"
    return
  fi
  if ! diff -u "$GOLDEN/$1" "$2" >"$1.diff"; then
    fail "$1 differs from the golden:"
    head -40 "$1.diff"
  fi
}

# contains NAME FILE TEXT: FILE holds TEXT (a fixed string).
contains() {
  checks=$((checks + 1))
  grep -qF -- "$3" "$2" || fail "$1: '$3' not found in: $(head -3 "$2")"
}
