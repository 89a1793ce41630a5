#!/usr/bin/env bash
# One per-host table: the core's registry (ServerTrustManager's, in Sources/ServerTrust/Manager/).
# Every per-host setting is read from a host's resolution there, so a HostPatternTable built
# anywhere else in Sources is a second door for a host (issue #44). Fails naming file:line.
set -euo pipefail
cd "$(dirname "$0")/.."
found=$(grep -rnE --include='*.swift' 'HostPatternTable(<[^>]*>)?[[:space:]]*\(' Sources \
    | grep -v '^Sources/ServerTrust/Manager/' \
    | grep -vE '^[^:]+:[0-9]+:[[:space:]]*//' || true)
if [ -n "$found" ]; then
    echo "A HostPatternTable is built outside the core's registry (Sources/ServerTrust/Manager/):" >&2
    echo "$found" | sed 's/^\([^:]*:[0-9]*\):.*/  \1/' >&2
    echo "Read the setting from the host's resolution (HostPolicy via ServerTrustManager.resolve(host:)) instead." >&2
    exit 1
fi
echo "host tables: only the core's registry builds a HostPatternTable"
