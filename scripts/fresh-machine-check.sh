#!/usr/bin/env bash
# Proves the README's claim that `npm test` passes on a machine with nothing but Node.js and npm:
# runs the suite's launcher (npm test: build, then scripts/run-tests.js) on a clone of this
# checkout, as an unprivileged user, where the system's PostgreSQL, Chromium, pgbouncer, HAProxy, Patroni
# and Mono cannot be found, and checks that
#   - both halves ran and passed, the PostgreSQL one on the embedded-postgres programs from npm;
#   - the tests that need a missing program were skipped, each named with how to install it.
# CI (.ci/run) runs it after the full suite.
#
# How the programs are hidden: in a mount namespace of its own (unshare), /usr/lib/postgresql is
# covered by an empty tmpfs and each hidden program file by /dev/null (which nobody may execute);
# the rest of the machine is as it is. That needs root, so the script must be started as root; the
# suite itself then runs as `nobody`, with an environment of HOME, PATH and TMPDIR only.
#
# Cost: it copies node_modules (npm ci's work is not repeated: this machine cannot build
# better-sqlite3 without a compiler, which a machine with network would not need) and runs the
# files of FRESH_ONLY (default below: the suites that skip for want of a program, and a few of
# the service's own) on both engines: about two minutes.
#
#   sudo scripts/fresh-machine-check.sh          # FRESH_ONLY=word,word to choose other test files
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
only="${FRESH_ONLY:-console/,clients/wcf-mono,store/pooler,deploy/scale-out,deploy/patroni-failover,operating/postgres-backup,operating/metrics,catalogue/round-trips,auth/login-http,store/postgres-security,store/postgres-store}"
user="${FRESH_USER:-nobody}"
if [ "$(id -u)" != 0 ]; then
  echo "fresh-machine-check: run it as root (it hides programs in a mount namespace, then runs the suite as $user)" >&2
  exit 2
fi
[ -d "$root/node_modules" ] || { echo "fresh-machine-check: run npm ci first" >&2; exit 2; }

work=$(mktemp -d /tmp/catalogue-fresh-XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir "$work/home" "$work/tmp"
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
  git clone --quiet --no-hardlinks "$root" "$work/clone"
else
  mkdir "$work/clone"
  tar -C "$root" --exclude=./node_modules --exclude=./dist --exclude=./test-results --exclude=./data -cf - . | tar -C "$work/clone" -xf -
fi
cp -a "$root/node_modules" "$work/clone/"
chown -R "$user:" "$work/clone" "$work/home" "$work/tmp"

# Every place the suite could find the hidden programs: PATH, /usr/sbin, /usr/bin, CHROMIUM_PATH's default.
hidden=()
for program in chromium chromium-browser google-chrome google-chrome-stable pgbouncer haproxy patroni initdb pg_ctl postgres pg_dump pg_restore mono mcs csc; do
  for dir in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
    if [ -e "$dir/$program" ] && [ ! -L "$dir/$program" ]; then hidden+=("$dir/$program"); fi
    # A link is covered through its target (a link into /usr/lib/postgresql dangles once that is covered).
    if [ -L "$dir/$program" ] && [ -e "$dir/$program" ]; then hidden+=("$(readlink -f "$dir/$program")"); fi
  done
done
hide_script='set -e
[ -d /usr/lib/postgresql ] && mount -t tmpfs -o ro,size=1m none /usr/lib/postgresql
for file in "$@"; do case "$file" in /usr/lib/postgresql/*) ;; *) mount --bind /dev/null "$file" ;; esac; done
exec runuser -u "$FRESH_RUN_AS" -- env -i HOME="$FRESH_WORK/home" TMPDIR="$FRESH_WORK/tmp" PATH=/usr/local/bin:/usr/bin:/bin \
  TEST_ONLY="$FRESH_ONLY" LANG=C.UTF-8 npm_config_update_notifier=false sh -c "cd \"$FRESH_WORK/clone\" && npm test"'
log="$work/test.log"
echo "fresh-machine-check: hiding ${#hidden[@]} program files and /usr/lib/postgresql; running npm test as $user on $only"
started=$(date +%s)
set +e
FRESH_RUN_AS="$user" FRESH_WORK="$work" FRESH_ONLY="$only" unshare --mount --propagation private -- sh -c "$hide_script" hide "${hidden[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
echo "fresh-machine-check: npm test took $(( $(date +%s) - started )) s and exited $status"

failures=()
[ "$status" = 0 ] || failures+=("npm test exited $status")
grep -q '^=== sqlite: passed' "$log" || failures+=("the SQLite half did not pass")
grep -q '^=== postgres: passed' "$log" || failures+=("the PostgreSQL half did not pass")
grep -q '^PostgreSQL test cluster (.*node_modules/@embedded-postgres/' "$log" || failures+=("the PostgreSQL half did not run on the embedded-postgres programs")
for program in Chromium pgbouncer HAProxy pg_dump; do
  grep -q "^needs .*$program.*: " "$log" || failures+=("no skip names $program")
done
if [ "${#failures[@]}" -gt 0 ]; then
  printf 'fresh-machine-check FAILED: %s\n' "${failures[@]}" >&2
  exit 1
fi
echo "fresh-machine-check: passed (both halves ran and passed; the skips above name what is missing)"
