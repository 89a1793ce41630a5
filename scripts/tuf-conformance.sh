#!/usr/bin/env bash
# Runs the public tuf-conformance suite against `servertrust updates` (not in CI: it needs a
# checkout of the suite, its Python dependencies from PyPI and Debian's `faketime`).
#
#   scripts/tuf-conformance.sh SUITE-DIR [BINARY]
#
# SUITE-DIR: a checkout of github.com/theupdateframework/tuf-conformance (measured at eec841c);
# BINARY: the servertrust to test (default .build/debug/servertrust). Makes SUITE-DIR/env, a
# virtual environment with the suite's pinned requirements, and prints pytest's summary.
set -euo pipefail
suite=$(cd "$1" && pwd)
binary=$(cd "$(dirname "${2:-.build/debug/servertrust}")" && pwd)/$(basename "${2:-.build/debug/servertrust}")
command -v faketime >/dev/null || { echo "tuf-conformance needs faketime (apt-get install faketime)" >&2; exit 2; }
if [[ ! -x "$suite/env/bin/pytest" ]]; then
    python3 -m venv "$suite/env"
    "$suite/env/bin/pip" install --quiet "securesystemslib[crypto]==1.4.0" "tuf==7.0.0" "pytest==9.1.1" "pytest-json-report==1.5.0"
fi
client=$(mktemp -d /tmp/servertrust-tuf-client.XXXXXX)/servertrust-updates
printf '#!/bin/sh\nexec "%s" updates "$@"\n' "$binary" >"$client"
chmod +x "$client"
cd "$suite"
env/bin/pytest tuf_conformance --entrypoint "$client" -q -rfE -p no:cacheprovider
