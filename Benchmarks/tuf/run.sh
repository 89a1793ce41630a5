#!/usr/bin/env bash
# The TUF client benchmark (bench.py): `servertrust updates` beside python-tuf's ngclient.
#   Benchmarks/tuf/run.sh [SERVERTRUST-BINARY]   default: a release build, made if missing
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
binary=${1:-$repo/.build/release/servertrust}
if [[ $# -eq 0 ]]; then (cd "$repo" && swift build -c release --product servertrust >/dev/null); fi
[[ -x $repo/.venv-tuf/bin/python ]] || "$repo/scripts/setup.sh"
exec "$repo/.venv-tuf/bin/python" "$repo/Benchmarks/tuf/bench.py" "$binary"
