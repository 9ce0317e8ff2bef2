#!/bin/sh
# Install the Debian packages translate needs to build and test, or print the
# command when not root.  Used by `make deps` and .ci/run.
#   libyaml-dev libutf8proc-dev libcjson-dev  the three libraries we link
#   libcmocka-dev                             the C test framework
#   pkg-config make gcc                       the build
# Optional, each test skipped when absent:
#   --with-torch    python3-torch            the PyTorch parity test
#   --with-browser  chromium fonts-noto-cjk  the HTML viewer in a headless
#                                            browser (tests/test_browser.c)
#   --with-fuzz     clang libclang-rt-14-dev clang and its libFuzzer runtime
#                                            (make fuzz)
#   --with-coverage gcovr                    line and branch coverage
#                                            (make coverage)
set -e
quiet=false
for arg in "$@"; do
    case "$arg" in
        --quiet) quiet=true ;;
        --with-torch) torch=true ;;
        --with-browser) browser=true ;;
        --with-fuzz) fuzz=true ;;
        --with-coverage) coverage=true ;;
    esac
done
need="pkg-config make gcc libyaml-dev libutf8proc-dev libcjson-dev libcmocka-dev"
[ "${torch:-false}" = true ] && need="$need python3-torch"
[ "${browser:-false}" = true ] && need="$need chromium fonts-noto-cjk"
[ "${fuzz:-false}" = true ] && need="$need clang libclang-rt-14-dev"
[ "${coverage:-false}" = true ] && need="$need gcovr"
missing=""
for p in $need; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then $quiet || echo "deps: all installed"; exit 0; fi
if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
else
    echo "deps: missing:$missing"
    echo "deps: run: sudo apt-get install -y$missing"
    exit 1
fi
