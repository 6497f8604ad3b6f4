#!/usr/bin/env bash
# `cargo install --path crates/kdp` from a clean clone of this repository's
# HEAD, as the README says to install kdp, then the installed binary run the
# way a new user first runs it. The build shares this checkout's target
# directory (dependencies are reused) but is a debug build, to keep it quick;
# the release profile is the same code with other codegen settings.
set -euo pipefail
cd "$(dirname "$0")/.."

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
git clone --quiet --no-local . "$tmp/src"
CARGO_TARGET_DIR="$PWD/target" cargo install --quiet --locked --debug \
    --path "$tmp/src/crates/kdp" --root "$tmp/root"
kdp="$tmp/root/bin/kdp"
"$kdp" --version
"$kdp" --help | grep -q "describe" || { echo "install-check: --help lists no describe" >&2; exit 1; }
# the README's first command: the demo, no cluster needed
set +e
"$kdp" demo >"$tmp/demo.out" 2>"$tmp/demo.err"
code=$?
set -e
if [[ $code != 0 ]] || ! grep -q "ProducerId" "$tmp/demo.out"; then
    echo "install-check: kdp demo exited $code" >&2
    cat "$tmp/demo.err" >&2
    exit 1
fi
# the README's run command itself, in the clone (the debug build `cargo install --debug` made)
(cd "$tmp/src" && CARGO_TARGET_DIR="$OLDPWD/target" cargo run --quiet --locked -p kdp -- demo >"$tmp/run.out" 2>"$tmp/run.err") ||
    { echo "install-check: cargo run -p kdp -- demo failed" >&2; cat "$tmp/run.err" >&2; exit 1; }
grep -q "ProducerId" "$tmp/run.out" || { echo "install-check: cargo run -p kdp -- demo printed no producers" >&2; exit 1; }
"$kdp" completions bash | grep -q "complete -F" || { echo "install-check: no bash completions" >&2; exit 1; }
echo "install-check: cargo install --path crates/kdp from a clean clone works ($("$kdp" --version))"
