#!/usr/bin/env bash
# Proves that the install cannot fail on the better-sqlite3 patch: on a clone of this checkout,
# `npm ci` runs as on a machine that can download better-sqlite3's prebuilt binary but has no
# C++ compiler (CC=false CXX=false for the whole install). Then it checks that
#   - the install succeeded, with exactly one warning from the patch step;
#   - the service starts and answers, and says it runs the unpatched build (its start log line
#     and /metrics);
#   - a part of the suite passes on both engines (FRESH_ONLY: the build report, the postinstall
#     step's own test, and some of the service's suites).
#
# This machine cannot download the prebuilt binary, so the script makes the one GitHub would
# serve first: upstream's better-sqlite3 of the same version, from the registry, compiled as it
# is (this step does use the compiler), packed as prebuild-install names it, and offered to the
# install as a local prebuild (npm_config_better_sqlite3_local_prebuilds). About three minutes.
# Not part of .ci/run; run it after changing the install:
#
#   scripts/no-compiler-check.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
only="${FRESH_ONLY:-operating/metrics,scripts/sqlite-build,catalogue/round-trips,console/html}"
version=$(node -p "require('$root/package-lock.json').packages['node_modules/better-sqlite3'].version")
work=$(mktemp -d /tmp/catalogue-nocc-XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "no-compiler-check: upstream better-sqlite3 $version, compiled as its prebuilt binary would be"
(
  cd "$work"
  npm pack --silent "better-sqlite3@$version" >/dev/null
  mkdir upstream && tar xzf "better-sqlite3-$version.tgz" -C upstream
  cd upstream/package
  gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
  # npm's own nodedir setting (where node's headers are, when they cannot be downloaded).
  nodedir=$(npm config get nodedir)
  case "$nodedir" in undefined | null | "") nodedir_arg=() ;; *) nodedir_arg=(--nodedir="$nodedir") ;; esac
  node "$gyp" rebuild --release --jobs max "${nodedir_arg[@]}" >"$work/upstream-build.log" 2>&1 || {
    tail -20 "$work/upstream-build.log"
    echo "no-compiler-check FAILED: could not compile upstream's better-sqlite3 (this step needs the compiler)" >&2
    exit 1
  }
  mkdir "$work/prebuilds"
  tar czf "$work/prebuilds/better-sqlite3-v$version-node-v$(node -p process.versions.modules)-$(node -p process.platform)-$(node -p process.arch).tar.gz" build/Release/better_sqlite3.node
)

git clone --quiet --no-hardlinks "$root" "$work/clone"
cd "$work/clone"
echo "no-compiler-check: npm ci with CC=false CXX=false"
started=$(date +%s)
CC=false CXX=false npm_config_better_sqlite3_local_prebuilds="$work/prebuilds" npm ci >"$work/install.log" 2>&1 || {
  cat "$work/install.log"
  echo "no-compiler-check FAILED: npm ci failed" >&2
  exit 1
}
echo "no-compiler-check: npm ci succeeded in $(( $(date +%s) - started )) s"
warnings=$(grep -c '^WARNING better-sqlite3:' "$work/install.log" || true)
grep '^WARNING better-sqlite3:' "$work/install.log" || true
[ "$warnings" = 1 ] || { echo "no-compiler-check FAILED: $warnings warnings from the patch step, not 1" >&2; exit 1; }

echo "no-compiler-check: the service starts and answers"
node -e "
const { serveProcess } = require('./dist/test/support/serve-process');
const { scrape } = require('./dist/test/support/prometheus');
(async () => {
  const token = 'no-compiler-check-0123456789';
  const serve = await serveProcess({ DATABASE_URL: 'sqlite:$work/catalogue.db', METRICS_TOKEN: token, DEMO_ACCOUNT: 'false' });
  try {
    const service = await fetch(serve.origin + '/publicapi/v1/api.svc/');
    if (service.status !== 401) throw new Error('the service document answered ' + service.status + ', not 401 without credentials');
    const started = JSON.parse(serve.output().split('\n').find((l) => l.includes('catalogue-service listening')));
    const metrics = await scrape(serve.origin + '/metrics', token);
    const build = metrics.family('catalogue_sqlite_build_info').metrics.map((m) => m.labels.build);
    console.log('start log line: sqliteBuild=' + started.sqliteBuild + '; /metrics: catalogue_sqlite_build_info{build=' + build + '}');
    if (started.sqliteBuild !== 'unpatched' || build.join() !== 'unpatched') throw new Error('the service should say it runs the unpatched build');
  } finally {
    await serve.stop();
  }
})().catch((e) => { console.error('no-compiler-check FAILED:', e.message); process.exit(1); });
"

echo "no-compiler-check: npm test on $only"
TEST_ONLY="$only" npm test >"$work/test.log" 2>&1 || { tail -80 "$work/test.log"; echo "no-compiler-check FAILED: npm test" >&2; exit 1; }
grep -E '^=== (sqlite|postgres): (passed|FAILED)|^Summary' "$work/test.log"
echo "no-compiler-check: passed"
