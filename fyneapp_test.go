package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"h3studio/app"
)

// FyneApp.toml is what make app bundles: its version must be the one the
// binary reports, its icon must exist, and the document types merged into
// the bundle must name every kind of file the window takes.
func TestAppBundleMetadata(t *testing.T) {
	raw, err := os.ReadFile("FyneApp.toml")
	if err != nil {
		t.Fatal(err)
	}
	field := func(name string) string {
		m := regexp.MustCompile(`(?m)^\s*` + name + `\s*=\s*"([^"]*)"`).FindSubmatch(raw)
		if m == nil {
			t.Fatalf("FyneApp.toml has no %s", name)
		}
		return string(m[1])
	}
	if v := field("Version"); v != app.Version {
		t.Errorf("FyneApp.toml Version %q, app.Version %q: change both", v, app.Version)
	}
	if _, err := os.Stat(field("Icon")); err != nil {
		t.Errorf("FyneApp.toml Icon: %v", err)
	}
	if id := field("ID"); !regexp.MustCompile(`^[a-z0-9-]+(\.[a-z0-9-]+)+$`).MatchString(id) {
		t.Errorf("bundle id %q is not reverse-DNS", id)
	}
	types, err := os.ReadFile("resources/DocumentTypes.plist")
	if err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{"mp4", "mov", "png", "jpg", "wav"} {
		if !strings.Contains(string(types), "<string>"+ext+"</string>") {
			t.Errorf("resources/DocumentTypes.plist declares no .%s", ext)
		}
	}
}
