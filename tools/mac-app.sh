#!/usr/bin/env bash
# make app: builds bin/H3 Studio.app with fyne package from FyneApp.toml,
# merges resources/DocumentTypes.plist into its Info.plist (fyne's metadata
# has no field for document types) and signs the bundle ad hoc, which
# Apple silicon requires of any binary it runs.
set -euo pipefail

if [ "$(uname -s)" != Darwin ]; then
	echo "make app builds H3 Studio.app with fyne package and Xcode's tools, so it needs a Mac; on this machine use make run" >&2
	exit 1
fi
tools/setup-deps.sh

# The fyne command is pinned and kept under bin/, not installed by hand.
FYNE_TOOLS_VERSION=v1.7.4
fyne="bin/tools/fyne-$FYNE_TOOLS_VERSION/fyne"
if [ ! -x "$fyne" ]; then
	GOBIN="$PWD/$(dirname "$fyne")" go install "fyne.io/tools/cmd/fyne@$FYNE_TOOLS_VERSION"
fi

bundle="H3 Studio.app"
rm -rf "$bundle" "bin/$bundle"
"$fyne" package --os darwin --release
/usr/libexec/PlistBuddy -c "Merge resources/DocumentTypes.plist" "$bundle/Contents/Info.plist"
codesign --force --deep --sign - "$bundle"
mkdir -p bin
mv "$bundle" bin/
echo "built bin/$bundle: open it with  open 'bin/$bundle'  or copy it to /Applications"
