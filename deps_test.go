package main

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestImportDirection enforces ARCHITECTURE.md's dependency rules with the
// go command itself: ui -> app -> engine/* -> engine/ggml; media and the
// planner are pure Go; the download (app/download) knows no model; the
// engine never reaches back into app, ui or media.
func TestImportDirection(t *testing.T) {
	pkgs := goList(t)
	has := func(p listed, prefix string) bool {
		for _, d := range p.Deps {
			if isUnder(d, prefix) {
				return true
			}
		}
		return false
	}
	type rule struct {
		from, forbidden, why string
	}
	rules := []rule{
		{"h3studio/media", "h3studio/engine", "media imports no engine package"},
		{"h3studio/media", "fyne.io/fyne/v2", "media has no UI"},
		{"h3studio/app/download", "h3studio/engine", "the download knows files, not the model; app validates the folder"},
		{"h3studio/app/download", "h3studio/media", "the download knows files, not media"},
		{"h3studio/engine/layout", "h3studio/engine/ggml", "the planner is pure Go"},
		{"h3studio/engine/plan", "h3studio/engine/ggml", "the planner is pure Go"},
		{"h3studio/engine/layout", "h3studio/media", "the planner reads headers through app"},
		{"h3studio/engine/plan", "h3studio/media", "the planner reads headers through app"},
		{"h3studio/engine/arch", "h3studio/engine/weights", "the model description is pure Go, below every engine package"},
		{"h3studio/engine/arch", "h3studio/engine/plan", "the planner sizes from the model description, not the reverse"},
		{"h3studio/engine", "h3studio/app", "the engine never reaches back into app"},
		{"h3studio/engine", "h3studio/ui", "the engine has no UI"},
		{"h3studio/engine", "h3studio/media", "app wires media into the engine"},
		{"h3studio/engine", "fyne.io/fyne/v2", "the engine has no UI"},
		{"h3studio/app", "h3studio/ui", "app is headless"},
		{"h3studio/app", "fyne.io/fyne/v2", "app is headless"},
		{"h3studio/metal", "h3studio/app", "metal sits below app"},
		{"h3studio/resample", "h3studio", "resample is a leaf both media and the engine import"},
	}
	// A positive control, so an empty Deps list can't make the test vacuous.
	for _, p := range pkgs {
		if p.ImportPath == "h3studio/ui" && !has(p, "h3studio/app") {
			t.Fatalf("go list reports no dependency of ui on app; deps: %d", len(p.Deps))
		}
	}
	for _, p := range pkgs {
		for _, r := range rules {
			if !isUnder(p.ImportPath, r.from) {
				continue
			}
			if has(p, r.forbidden) {
				t.Errorf("%s depends on %s: %s", p.ImportPath, r.forbidden, r.why)
			}
		}
	}
	// ui talks to app. The only engine packages it may name are the pure-Go
	// planner's data types (the plan panel shows engine/plan's numbers, so
	// the UI and the engine never disagree); anything that computes, loads
	// or touches ggml is reached through app.
	uiMayImport := map[string]bool{"h3studio/engine/plan": true, "h3studio/engine/layout": true}
	for _, p := range pkgs {
		if !isUnder(p.ImportPath, "h3studio/ui") {
			continue
		}
		for _, imp := range p.Imports {
			// The engine root counts too: a prefix with a trailing slash
			// alone let ui import h3studio/engine unnoticed.
			if isUnder(imp, "h3studio/engine") && !uiMayImport[imp] {
				t.Errorf("%s imports %s directly; go through app", p.ImportPath, imp)
			}
		}
	}
	// Pure-Go packages must build without cgo anywhere in their closure so
	// they vet for darwin with CGO_ENABLED=0 and stay instant in the UI.
	for _, p := range pkgs {
		if p.ImportPath == "h3studio/media" || p.ImportPath == "h3studio/resample" || p.ImportPath == "h3studio/engine/layout" || p.ImportPath == "h3studio/engine/plan" || p.ImportPath == "h3studio/engine/arch" || p.ImportPath == "h3studio/engine/preview" {
			if has(p, "runtime/cgo") {
				t.Errorf("%s pulls in cgo", p.ImportPath)
			}
		}
	}
}

// isUnder is whether the import path path is pkg or one of its subpackages.
func isUnder(path, pkg string) bool {
	return path == pkg || strings.HasPrefix(path, pkg+"/")
}

// listed is a package as go list describes it.
type listed struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// goList lists the module's packages with their imports and dependencies.
func goList(t *testing.T) []listed {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			return pkgs
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
}
