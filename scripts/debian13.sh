#!/usr/bin/env bash
# A Debian 13 "trixie" root (OpenSSL 3.5, libcurl 8.14) made with debootstrap, to build and test
# ServerTrust on the second supported stack from a fresh clone, as a new user would.
#
#   scripts/debian13.sh make [ROOT]                      make the root, or reuse it if complete
#   scripts/debian13.sh run ROOT SOURCE [--keep] -- CMD…  clone SOURCE (a git checkout) into the
#                                                        root and run CMD in the clone
#   scripts/debian13.sh ci ROOT SOURCE                   the README's two commands in the root on
#                                                        a fresh clone, with the interop servers
#
# ROOT defaults to /var/tmp/servertrust-trixie ("" means the default). The root gets Debian's
# archive host from this machine's apt sources, the Swift toolchain (/opt/swift) and the local
# Swift package copies (/opt/swift-packages) bind-mounted read-only, the machine's CA
# certificates, pip configuration and git url.*.insteadOf rewrites — never a credential helper or
# token. Everything runs with CI=true and no standard input; mounts are undone on exit, even on
# failure. Each phase prints its time. Needs root (debootstrap, mount, chroot).
set -euo pipefail

default_root=/var/tmp/servertrust-trixie
suite=trixie
# What the Swift toolchain itself needs at run time (swift.org's list for Debian, with trixie's
# GCC 14). The project's own packages (libcurl, OpenSSL, nginx…) are scripts/setup.sh's job.
toolchain_packages=(binutils libc6-dev libgcc-14-dev libstdc++-14-dev zlib1g-dev libxml2
    libsqlite3-0 libncurses6 libedit2 libcurl4 python3 git tzdata ca-certificates curl unzip
    gnupg pkg-config)
marker=etc/servertrust-root.complete

log() { echo "debian13: $*" >&2; }
die() { log "$*"; exit 1; }
phase_start=0
phase() { phase_name=$1; phase_start=$SECONDS; log "phase '$phase_name' started"; }
phase_end() { log "phase '$phase_name' took $((SECONDS - phase_start)) s"; }

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, mount, chroot)"

# --- this machine's Debian archive, read from its apt sources -----------------------------------
# Prints "MAIN-URI SECURITY-URI" for the host's Debian suites (deb822 .sources and one-line .list).
host_archive() {
    local codename files=()
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    [ -n "$codename" ] || die "cannot read this machine's Debian codename from /etc/os-release"
    [ -f /etc/apt/sources.list ] && files+=(/etc/apt/sources.list)
    for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] && files+=("$f")
    done
    awk -v c="$codename" '
        function take(uri, suites,   n, i, s, a) {
            n = split(suites, a, /[ \t]+/)
            for (i = 1; i <= n; i++) {
                s = a[i]
                if (s == c "-security" || s == c "/updates") { if (!sec) sec = uri }
                else if (s == c) { if (!main) main = uri }
            }
        }
        function flush() { if (uris != "" && types ~ /(^|[ \t])deb([ \t]|$)/) { split(uris, u, /[ \t]+/); take(u[1], suites) }
                           uris = ""; suites = ""; types = "" }
        FILENAME ~ /\.sources$/ {
            if ($0 ~ /^[ \t]*$/) { flush(); next }
            if ($0 ~ /^[ \t]*#/) next
            if (tolower($1) == "types:") { types = $0; sub(/^[^:]*:[ \t]*/, "", types) }
            if (tolower($1) == "uris:") { uris = $0; sub(/^[^:]*:[ \t]*/, "", uris) }
            if (tolower($1) == "suites:") { suites = $0; sub(/^[^:]*:[ \t]*/, "", suites) }
            next
        }
        FILENAME != prev { flush(); prev = FILENAME }
        $1 == "deb" {
            i = 2; if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
            take($i, $(i + 1))
        }
        END { flush(); if (!main) exit 1; print main, (sec ? sec : "-") }
    ' "${files[@]}" || die "no Debian '$codename' suite found in this machine's apt sources"
}

# --- mounts ----------------------------------------------------------------------------------------
mounted=()
mount_bind() {  # SOURCE TARGET-IN-ROOT [ro]
    local src=$1 dst=$root$2
    mkdir -p "$dst"
    mount --bind "$src" "$dst"
    mounted+=("$dst")
    if [ "${3:-}" = ro ]; then mount -o remount,bind,ro "$dst"; fi
}
unmount_all() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" || log "could not unmount ${mounted[i]}"
    done
    mounted=()
}
# Kills what a command left running inside the root (nginx, an OCSP responder), then unmounts.
cleanup() {
    local pid link
    if [ -n "${root:-}" ] && [ -d "$root" ]; then
        for link in /proc/[0-9]*/root; do
            pid=${link#/proc/}; pid=${pid%/root}
            [ "$(readlink "$link" 2>/dev/null)" = "$root" ] && kill -KILL "$pid" 2>/dev/null || true
        done
    fi
    unmount_all
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mount_system() {
    mkdir -p "$root/proc" "$root/sys" "$root/dev"
    mount -t proc proc "$root/proc"; mounted+=("$root/proc")
    mount_bind /sys /sys ro
    mount_bind /dev /dev
    mount_bind /dev/pts /dev/pts
    if mountpoint -q /dev/shm; then mount_bind /dev/shm /dev/shm; fi
}
mount_toolchain() {
    mount_bind /opt/swift /opt/swift ro
    [ -d /opt/swift-packages ] && mount_bind /opt/swift-packages /opt/swift-packages ro
    case "${PIP_FIND_LINKS:-}" in
        /opt/wheels*) [ -d /opt/wheels ] && mount_bind /opt/wheels /opt/wheels ro ;;
    esac
    return 0
}

in_root() {  # CMD… — run in the root with a clean environment
    local env=(PATH=/opt/swift/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
        HOME=/root CI=true LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive)
    local v
    for v in PIP_CERT PIP_FIND_LINKS PIP_DEFAULT_TIMEOUT PIP_DISABLE_PIP_VERSION_CHECK; do
        [ -n "${!v:-}" ] && env+=("$v=${!v}")
    done
    chroot "$root" /usr/bin/env -i "${env[@]}" "$@" </dev/null
}

# --- the machine's network configuration, copied in (never a credential) --------------------------
copy_machine_config() {
    cp -L /etc/resolv.conf "$root/etc/resolv.conf"
    cp /etc/hosts "$root/etc/hosts"
    # git: only the url.<base>.insteadOf rewrites, so github.com URLs read the local package copies.
    : >"$root/etc/gitconfig"
    local scope key value
    for scope in --system --global; do
        git config "$scope" --get-regexp '^url\..*\.insteadof$' 2>/dev/null | while read -r key value; do
            key=${key#url.}; key=${key%.insteadof}
            git config --file "$root/etc/gitconfig" --add "url.$key.insteadOf" "$value"
        done || true
    done
    if [ -f /etc/pip.conf ]; then cp /etc/pip.conf "$root/etc/pip.conf"; else rm -f "$root/etc/pip.conf"; fi
    # CA certificates: the machine's bundle may hold certificates that Debian's does not (a
    # proxy's CA, say). Add those as local certificates so update-ca-certificates keeps them.
    if [ -f /etc/ssl/certs/ca-certificates.crt ] && [ -f "$root/etc/ssl/certs/ca-certificates.crt" ]; then
        local dir=$root/usr/local/share/ca-certificates/servertrust-machine
        # Compared with Debian's own bundle, rebuilt without the ones added last time: a second
        # run comparing with the bundle as it stands would find them "known" and drop them.
        rm -rf "$dir"
        in_root update-ca-certificates --fresh >/dev/null 2>&1 || die "update-ca-certificates failed in the root"
        mkdir -p "$dir"
        awk -v dir="$dir" '
            FNR == 1 { file++ }
            /-----BEGIN CERTIFICATE-----/ { pem = ""; inside = 1 }
            inside { pem = pem $0 "\n" }
            /-----END CERTIFICATE-----/ {
                inside = 0
                if (file == 1) known[pem] = 1
                else if (!(pem in known)) { n++; printf "%s", pem > (dir "/machine-" n ".crt"); close(dir "/machine-" n ".crt") }
            }
        ' "$root/etc/ssl/certs/ca-certificates.crt" /etc/ssl/certs/ca-certificates.crt
        in_root update-ca-certificates >/dev/null 2>&1 || die "update-ca-certificates failed in the root"
    fi
}

# --- make ------------------------------------------------------------------------------------------
make_root() {
    local stamp archive main security
    stamp="$suite ${toolchain_packages[*]}"
    if [ -f "$root/$marker" ] && [ "$(cat "$root/$marker")" = "$stamp" ]; then
        log "reusing the complete root at $root"
        return
    fi
    if [ -e "$root" ]; then
        findmnt -rn -o TARGET | grep -q "^$root\(/\|$\)" && die "$root has mounts in use; not removing it"
        log "removing the incomplete root at $root"
        rm -rf --one-file-system "$root"
    fi
    archive=$(host_archive)
    main=${archive% *}; security=${archive#* }
    log "Debian archive from this machine's apt sources: $main (security: $security)"
    if ! command -v debootstrap >/dev/null; then
        phase "install debootstrap"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
        phase_end
    fi
    phase "debootstrap"
    mkdir -p "$(dirname "$root")"
    local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    debootstrap --variant=minbase --keyring="$keyring" "$suite" "$root" "$main" >"$root.debootstrap.log" 2>&1 \
        || { tail -n 20 "$root.debootstrap.log" >&2; die "debootstrap failed (log: $root.debootstrap.log)"; }
    phase_end

    mkdir -p "$root/etc/apt/sources.list.d"
    rm -f "$root/etc/apt/sources.list"
    {
        printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
            "$main" "$suite" "$suite"
        [ "$security" = - ] || printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
            "$security" "$suite"
    } >"$root/etc/apt/sources.list.d/debian.sources"
    # The root is for builds: no recommends, no man pages.
    printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$root/etc/apt/apt.conf.d/90servertrust"

    phase "toolchain packages"
    cp -L /etc/resolv.conf "$root/etc/resolv.conf"
    mount_system
    in_root apt-get update -qq
    in_root apt-get install -y -qq "${toolchain_packages[@]}" >"$root.packages.log" 2>&1 \
        || { tail -n 20 "$root.packages.log" >&2; die "package install failed (log: $root.packages.log)"; }
    in_root apt-get clean
    unmount_all
    phase_end
    echo "$stamp" >"$root/$marker"
}

# --- run -------------------------------------------------------------------------------------------
clone_dir=/root/servertrust
prepare_clone() {  # SOURCE KEEP
    local source=$1 keep=$2
    git -C "$source" rev-parse --git-dir >/dev/null 2>&1 || die "$source is not a git checkout"
    # The checkout's commits, handed over as a bare repository; the root clones it itself.
    rm -rf "$root/srv/servertrust.git"
    git clone --quiet --bare --no-local "$source" "$root/srv/servertrust.git"
    if [ "$keep" = yes ] && [ -d "$root$clone_dir/.git" ]; then
        # Same commits as a fresh clone, but the build directory and Python venv are kept.
        in_root git -C "$clone_dir" fetch --quiet origin '+refs/heads/*:refs/remotes/origin/*'
        in_root git -C "$clone_dir" reset --quiet --hard "$(git -C "$source" rev-parse HEAD)"
        in_root git -C "$clone_dir" clean -qfdx -e .build -e .venv-tuf
    else
        rm -rf "$root$clone_dir"
        in_root git clone --quiet /srv/servertrust.git "$clone_dir"
    fi
    log "in the root: $(in_root git -C "$clone_dir" log -1 --format='%h %s' | cut -c1-100)"
}

enter() {  # ROOT SOURCE KEEP — make, mount, configure, clone
    make_root
    mount_system
    mount_toolchain
    copy_machine_config
    prepare_clone "$2" "$3"
    # shared/ beside the checkout (the conformance suites), beside the clone too, read-only, as
    # CI lays it out.
    local shared
    shared=$(dirname "$2")/shared
    if [ -d "$shared" ]; then mount_bind "$shared" "$(dirname "$clone_dir")/shared" ro; fi
}

cmd=${1:-make}
shift || true
case "$cmd" in
    make)
        root=${1:-$default_root}; root=${root:-$default_root}
        make_root
        ;;
    run)
        [ $# -ge 2 ] || die "usage: $0 run ROOT SOURCE [--keep] -- CMD…"
        root=${1:-$default_root}; source=$(cd "$2" && pwd); shift 2
        keep=no
        [ "${1:-}" = --keep ] && { keep=yes; shift; }
        [ "${1:-}" = -- ] && shift
        [ $# -ge 1 ] || die "run: no command"
        enter "$root" "$source" "$keep"
        phase "command: $*"
        status=0
        in_root /bin/bash -c 'cd "$0" && exec "$@"' "$clone_dir" "$@" || status=$?
        phase_end
        exit "$status"
        ;;
    ci)
        [ $# -ge 2 ] || die "usage: $0 ci ROOT SOURCE"
        root=${1:-$default_root}; source=$(cd "$2" && pwd)
        enter "$root" "$source" no
        # The README's two commands; the interop servers started the way .ci/run starts them.
        # Each phase prints its time, a failed one too, and the first failure ends the run.
        in_clone() {  # PHASE-NAME SCRIPT
            local status=0
            phase "$1"
            in_root /bin/bash -c "cd $clone_dir && $2" || status=$?
            phase_end
            [ "$status" -eq 0 ] || die "phase '$1' failed (exit $status)"
        }
        in_clone "setup (scripts/setup.sh: the project's packages and Python peers)" "scripts/setup.sh"
        in_clone "build and demo (swift run servertrust demo)" "swift run servertrust demo"
        in_clone "build the tests (swift build --build-tests)" \
            'swift build --build-tests 2>&1 | tail -n 3; exit ${PIPESTATUS[0]}'
        in_clone "tests (swift test, interop servers running)" '
            interop_dir=$(mktemp -d /tmp/servertrust-interop.XXXXXX)
            trap "scripts/interop/nginx.sh stop \"\$interop_dir\" || true" EXIT
            scripts/interop/nginx.sh start "$interop_dir"
            export SERVERTRUST_INTEROP_DIR=$interop_dir
            swift test 2>&1'
        ;;
    *)
        die "unknown command '$cmd' (make, run, ci)"
        ;;
esac
