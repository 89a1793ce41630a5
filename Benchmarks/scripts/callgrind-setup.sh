# Sourced by profile.sh and refcounts.sh, after `set -euo pipefail` and `shopt -s inherit_errexit`:
#
#   callgrind_setup SCRIPT-NAME OUT-DIR BINARY...
#
# Sets `here` (Benchmarks/), `out` (OUT-DIR, made and absolute) and `work` (the nginx directory);
# copies each BINARY from Benchmarks/.build/release into OUT-DIR with its debug information
# stripped (valgrind 3.19 cannot read the DWARF 5 that Swift 6.3 writes; symbols stay, line
# numbers go); starts the benchmark nginx, stopped when the script exits, and reads its
# bench.env (BENCH_*_PORT, BENCH_ROOT, the pins).
callgrind_setup() {
    local name=$1 binary bin
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    out=$(mkdir -p "$2" && cd "$2" && pwd)
    shift 2
    bin="$here/.build/release"
    command -v valgrind >/dev/null || { echo "$name: valgrind is not installed" >&2; exit 1; }
    for binary in "$@"; do
        [ -x "$bin/$binary" ] || { echo "$name: build first (swift build -c release)" >&2; exit 1; }
        cp "$bin/$binary" "$out/$binary"
        strip --strip-debug "$out/$binary"
    done
    work="$out/nginx"
    trap '"$here/nginx.sh" stop "$work" >/dev/null 2>&1 || true' EXIT
    "$here/nginx.sh" start "$work" >/dev/null
    # shellcheck disable=SC1091
    . "$work/bench.env"
}
