#!/usr/bin/env bash
# Install what flightrec needs to build and test on Debian/Ubuntu (as root,
# or with sudo available).  Safe to run again: it installs only what is
# missing.  Nothing here needs CUDA, NCCL or a GPU.
set -euo pipefail
# Usage: scripts/setup.sh [--fuzz]   (--fuzz adds clang and its libFuzzer
# runtime, for `make fuzz`; CI uses it)

packages=(
  gcc make autoconf automake libtool pkgconf   # build tools
  libzstd-dev                                  # dump compression
  libcjson-dev                                 # JSON output
  libncurses-dev                               # fr-tui (ncursesw)
  check                                        # unit tests
  tmux                                         # fr-tui's interactive test
  valgrind                                     # memcheck of the tools (make check)
  python3                                      # the scenario generator and PyTorch fixtures (make check)
  openmpi-bin                                  # mpirun: the PMIx trigger test (make check)
  libpmix-dev                                  # pmix.h: our PMIx declarations checked (make check)
)
# Wanted, not required: where the distribution has no python3-torch or
# libamdhip64-dev, the tests that need them say SKIP with the reason.
optional=(
  python3-torch                                # a real TCPStore and torchrun (make check: trigger-relay, torchrun)
  libamdhip64-dev                              # the real HIP runtime and headers: our HIP declarations checked, ROCm pass-through (make check)
)

if [ "${1:-}" = "--fuzz" ]; then
  packages+=(clang libclang-rt-dev)            # libFuzzer (make fuzz)
fi

missing=()
for p in "${packages[@]}" "${optional[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all build and test dependencies are installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
required=()
for p in "${missing[@]}"; do
  case " ${optional[*]} " in *" $p "*) ;; *) required+=("$p") ;; esac
done
[ ${#required[@]} -eq 0 ] || $sudo apt-get install -y -qq --no-install-recommends "${required[@]}"
for p in "${optional[@]}"; do
  case " ${missing[*]} " in
    *" $p "*) $sudo apt-get install -y -qq --no-install-recommends "$p" ||
                echo "setup: $p could not be installed; the tests that need it will say SKIP" >&2 ;;
  esac
done
