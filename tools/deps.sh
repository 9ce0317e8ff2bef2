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
#   --with-aarch64  gcc-aarch64-linux-gnu qemu-user-static and the four
#                   -dev packages for arm64 (multiarch: adds the arm64
#                   architecture to dpkg)     make test-aarch64
#   --with-qemu     qemu-user-static         an AVX2-only x86-64 CPU, emulated
#                                            (make test-avx2)
#   --with-bench    python3-torch libopenblas0-pthread hyperfine time
#                                            make bench's references: PyTorch
#                                            with OpenBLAS (Debian's alternatives
#                                            then make it torch's libblas.so.3),
#                                            OpenBLAS's cblas_sgemm for the GEMM
#                                            rows, the timers.  The project's
#                                            build never links it.
#   --with-coverage gcovr                    line and branch coverage
#                                            (make coverage)
#   --with-valgrind valgrind                 translate and train run under
#                                            memcheck: nothing leaked, every
#                                            worker thread joined (test_cli,
#                                            test_train_cli)
#   --with-web      emscripten dpkg-dev      make web: the page with the model
#                                            compiled to WebAssembly.  Its
#                                            utf8proc, cJSON and libyaml are
#                                            compiled from Debian's own source
#                                            packages (apt-get source, at build
#                                            time, into build/web/src), so this
#                                            also adds deb-src lines, for the
#                                            web build only, in their own file:
#                                            /etc/apt/sources.list.d/translate-web-src.sources
set -e
quiet=false
for arg in "$@"; do
    case "$arg" in
        --quiet) quiet=true ;;
        --with-torch) torch=true ;;
        --with-browser) browser=true ;;
        --with-fuzz) fuzz=true ;;
        --with-aarch64) aarch64=true ;;
        --with-qemu) qemu=true ;;
        --with-bench) bench=true ;;
        --with-coverage) coverage=true ;;
        --with-valgrind) valgrind=true ;;
        --with-web) web=true ;;
        -h|--help) # the header above is the usage
            sed -n '2,/^set -e/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
            exit 0 ;;
        *) echo "deps.sh: unknown option: $arg (--help lists them); nothing installed" >&2
            exit 2 ;;
    esac
done
need="pkg-config make gcc libyaml-dev libutf8proc-dev libcjson-dev libcmocka-dev"
[ "${torch:-false}" = true ] && need="$need python3-torch"
[ "${browser:-false}" = true ] && need="$need chromium fonts-noto-cjk"
[ "${fuzz:-false}" = true ] && need="$need clang libclang-rt-14-dev"
[ "${aarch64:-false}" = true ] && need="$need gcc-aarch64-linux-gnu qemu-user-static libyaml-dev:arm64 \
libutf8proc-dev:arm64 libcjson-dev:arm64 libcmocka-dev:arm64"
[ "${qemu:-false}" = true ] && need="$need qemu-user-static"
[ "${bench:-false}" = true ] && need="$need python3-torch libopenblas0-pthread hyperfine time"
[ "${coverage:-false}" = true ] && need="$need gcovr"
[ "${valgrind:-false}" = true ] && need="$need valgrind"
[ "${web:-false}" = true ] && need="$need emscripten dpkg-dev"
# apt-get source needs deb-src entries; Debian's images have only deb ones.
# The same archives and suites as the system's own list (bookworm, its
# updates and security, whose cjson is the one we link).
websrc=/etc/apt/sources.list.d/translate-web-src.sources
if [ "${web:-false}" = true ] && [ ! -e "$websrc" ]; then
    if [ "$(id -u)" = 0 ]; then
        cat > "$websrc" <<'SRC'
# Added by translate's tools/deps.sh --with-web: the source packages of
# utf8proc, cjson and libyaml, which `make web` compiles to WebAssembly
# (apt-get source).  Remove this file to undo.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
        echo "deps: added deb-src entries for the web build: $websrc"
        apt-get update -qq
    else
        echo "deps: make web needs deb-src entries (apt-get source): run this as root to add $websrc"
        exit 1
    fi
fi
missing=""
for p in $need; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then $quiet || echo "deps: all installed"; exit 0; fi
arm64_added=true
case "$missing" in *:arm64*) dpkg --print-foreign-architectures | grep -qx arm64 || arm64_added=false ;; esac
if [ "$(id -u)" = 0 ]; then
    $arm64_added || dpkg --add-architecture arm64
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
else
    echo "deps: missing:$missing"
    $arm64_added || echo "deps: run first: sudo dpkg --add-architecture arm64 && sudo apt-get update"
    echo "deps: run: sudo apt-get install -y$missing"
    exit 1
fi
