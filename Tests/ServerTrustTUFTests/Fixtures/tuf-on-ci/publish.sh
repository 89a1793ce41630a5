#!/bin/bash
# Publishes a small TUF-on-CI repository with tuf-on-ci's own tools, the way tuf-on-ci's
# tests/e2e.sh does (its functions signer_init, signer_add_targets, repo_update_targets,
# signer_sign, signer_change_root_signer, signer_accept_invite, repo_merge, repo_online_sign,
# repo_publish, with the same simulated answers), except:
#   - the simulated YubiKeys (SoftHSM2 tokens) hold P-256 keys, as a real YubiKey provisioned
#     with docs/YUBIKEY-PIV-SETUP.md does (`ykman piv keys generate -a eccp256 9c`); e2e.sh's
#     committed tokens hold P-384 keys;
#   - the target is policy.json.
# Needs: TOC (a tuf-on-ci checkout), tuf-on-ci and tuf-on-ci-sign installed from it on PATH,
# softhsm2, libfaketime, openssl, git. Writes the published repository to OUT.
set -euo pipefail
TOC=${TOC:?path to a tuf-on-ci checkout}
OUT=${OUT:?output directory}
POLICY=${POLICY:?policy.json to publish}
WORK=$(mktemp -d)
SOFTHSMLIB=/usr/lib/softhsm/libsofthsm2.so

export LD_PRELOAD=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
export FAKETIME="2026-11-26 12:00:00"
export TZ=UTC
# tuf-on-ci's test hook for online signing: an ed25519 key in a file instead of a cloud KMS.
export TUF_ON_CI_TEST_KEY=online-test-key
export CRYPTO_SIGNER_PATH_PREFIX=$TOC/tests

UPSTREAM=$WORK/upstream.git
REPO=$WORK/repo
git init --quiet --bare --initial-branch=main "$UPSTREAM"

clone() {  # dir name email
    mkdir -p "$1"
    git -C "$1" clone --quiet "$UPSTREAM" . 2>/dev/null
    git -C "$1" config user.name "$2"
    git -C "$1" config user.email "$3"
    git -C "$1" config commit.gpgsign false
}

clone "$REPO" tuf-on-ci "41898282+github-actions[bot]@users.noreply.github.com"
touch "$REPO/.dummy"
git -C "$REPO" add .dummy
git -C "$REPO" commit --quiet -m init
git -C "$REPO" push --quiet

signer_setup() {  # user
    local dir=$WORK/$1
    mkdir -p "$dir/tokens"
    echo "directories.tokendir = $dir/tokens" > "$dir/softhsm2.conf"
    openssl genpkey -out "$dir/key.pem" -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -pkeyopt ec_param_enc:named_curve
    SOFTHSM2_CONF=$dir/softhsm2.conf softhsm2-util --init-token --free --label "$1" --so-pin 0000 --pin 0000 >/dev/null
    SOFTHSM2_CONF=$dir/softhsm2.conf softhsm2-util --import "$dir/key.pem" --token "$1" --label piv-9c --id 02 --pin 0000 >/dev/null
    rm "$dir/key.pem"
    clone "$dir/git" "$1" "$1@example.com"
    printf '[settings]\npykcs11lib = %s\nuser-name = @tuf-on-ci-%s\npush-remote = origin\npull-remote = origin\n' \
        "$SOFTHSMLIB" "$1" > "$dir/git/.tuf-on-ci-sign.ini"
}

answer() {  # user tool event [role] -- answers…
    local user=$1 tool=$2; shift 2
    local args=()
    while [ "$1" != "--" ]; do args+=("$1"); shift; done
    shift
    export SOFTHSM2_CONF=$WORK/$user/softhsm2.conf
    (cd "$WORK/$user/git" && printf '%s\n' "$@" | "$tool" "${args[@]}" >> "$WORK/$user/out" 2>&1)
}

repo_merge() {  # event
    git -C "$REPO" switch --quiet main
    git -C "$REPO" fetch --quiet origin
    git -C "$REPO" merge --quiet --no-edit "origin/$1"
    # update-targets must find nothing left to do, status must report the event complete
    if (cd "$REPO" && tuf-on-ci-update-targets >> "$WORK/repo.out"); then echo "unexpected targets change in $1"; exit 1; fi
    (cd "$REPO" && tuf-on-ci-status >> "$WORK/repo.out")
    git -C "$REPO" push --quiet
}

repo_online_sign() {
    git -C "$REPO" switch --quiet main
    git -C "$REPO" pull --quiet
    (cd "$REPO" && tuf-on-ci-online-sign --push >> "$WORK/repo.out" 2>&1)
}

repo_update_targets() {  # event
    git -C "$REPO" fetch --quiet origin
    git -C "$REPO" switch --quiet "$1"
    git -C "$REPO" pull --quiet
    (cd "$REPO" && tuf-on-ci-update-targets >> "$WORK/repo.out")
}

signer_setup user1
signer_setup user2

# 1. sign/initial: user1 signs root and targets; online roles get the test key.
answer user1 tuf-on-ci-delegate sign/initial -- "" "" 1 0 "" 2 "" 0000 0000 ""
repo_merge sign/initial
repo_online_sign

# 2. sign/add-policy: policy.json becomes a target of the top-level targets role.
(
    cd "$WORK/user1/git"
    git fetch --quiet origin
    git switch --quiet -C sign/add-policy origin/main
    mkdir -p targets
    cp "$POLICY" targets/policy.json
    git add targets/policy.json
    git commit --quiet -m "Add policy.json"
    git push --quiet origin sign/add-policy
)
repo_update_targets sign/add-policy
answer user1 tuf-on-ci-sign sign/add-policy -- 0000 ""
repo_merge sign/add-policy
repo_online_sign

# 3. sign/rotate-root: root moves from user1's key to user2's (user2 accepts, user1 signs).
answer user1 tuf-on-ci-delegate sign/rotate-root -- root 1 @tuf-on-ci-user2 "" ""
answer user2 tuf-on-ci-sign sign/rotate-root -- 2 "" 0000 ""
answer user1 tuf-on-ci-sign sign/rotate-root -- 0000 ""
repo_merge sign/rotate-root
repo_online_sign

# Publish, as actions/upload-repository does.
git -C "$REPO" switch --quiet main
git -C "$REPO" pull --quiet
(cd "$REPO" && tuf-on-ci-build-repository --metadata "$OUT/metadata" --artifacts "$OUT/targets" >> "$WORK/repo.out")
echo "published to $OUT; work directory $WORK"
