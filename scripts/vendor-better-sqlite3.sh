#!/usr/bin/env bash
# Makes vendor/better-sqlite3-<version>-patched.tgz, the better-sqlite3 that package.json installs:
# the registry's tarball of that version with patches/better-sqlite3+<version>.patch applied to
# its sources, packed again with `npm pack` (whose tarballs carry fixed dates, so the same inputs
# give the same bytes and the lock file's integrity does not move). Installing it builds the
# patched sources directly: better-sqlite3 is compiled once, and the patch can never fail to
# apply at install time. See docs/architecture.md, "The better-sqlite3 patch".
#
#   scripts/vendor-better-sqlite3.sh            # the version the patch names
#   then: npm install (updates package-lock.json's integrity for the tarball)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
patch_file=$(ls "$root"/patches/better-sqlite3+*.patch)
version=$(basename "$patch_file" .patch)
version=${version#better-sqlite3+}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
npm pack --silent "better-sqlite3@$version" >/dev/null
tar xzf "better-sqlite3-$version.tgz"
rm "better-sqlite3-$version.tgz"
# Outside any git repository, git apply works as patch(1) does, and refuses a hunk that does not fit.
(cd package && git apply -p1 "$patch_file")
(cd package && npm pack --silent --pack-destination "$work" >/dev/null)
mkdir -p "$root/vendor"
mv "$work/better-sqlite3-$version.tgz" "$root/vendor/better-sqlite3-$version-patched.tgz"
echo "vendor/better-sqlite3-$version-patched.tgz: better-sqlite3 $version with $(basename "$patch_file")"
