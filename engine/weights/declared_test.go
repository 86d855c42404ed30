package weights

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const demoDeclaration = `{
  "name": "H3 demo",
  "canvas": {"width": 128, "height": 96},
  "frames": 56, "fps": 24, "steps": 12,
  "shifts": {"video": 5, "audio": 2},
  "presets": [{"name": "Reference", "steps": 30}, {"name": "Default", "steps": 12}, {"name": "Fast", "steps": 4}],
  "reference_short_edge": 128
}`

func writeDeclaration(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, DeclarationFile), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Discover reads the snapshot root's h3studio.json into Snapshot.Declared,
// and leaves it nil when the file is absent (the release's defaults).
func TestDiscoverReadsDeclaration(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tiny")
	if err := WriteTiny(root, TinyOptions{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	s, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	if s.Declared != nil {
		t.Fatalf("a snapshot without %s declares %+v", DeclarationFile, *s.Declared)
	}
	writeDeclaration(t, root, demoDeclaration)
	s, err = Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	d := s.Declared
	if d == nil {
		t.Fatal("the declaration was not read")
	}
	want := Declared{Name: "H3 demo", Canvas: DeclaredCanvas{128, 96}, Frames: 56, FPS: 24, Steps: 12,
		Shifts: &DeclaredShifts{Video: 5, Audio: 2}, ReferenceShortEdge: 128,
		Presets: []DeclaredPreset{{"Reference", 30}, {"Default", 12}, {"Fast", 4}}}
	if d.Name != want.Name || d.Canvas != want.Canvas || d.Frames != want.Frames || d.FPS != want.FPS ||
		d.Steps != want.Steps || d.Shifts == nil || *d.Shifts != *want.Shifts || d.ReferenceShortEdge != want.ReferenceShortEdge ||
		len(d.Presets) != 3 || d.Presets[0] != want.Presets[0] || d.Presets[2] != want.Presets[2] {
		t.Errorf("declared %+v, want %+v", *d, want)
	}
}

// A bad declaration is refused in one sentence naming the file, what is
// wrong and what to do.
func TestReadDeclarationRefusesBadFiles(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"not json", `{"name": `, "is not valid JSON"},
		{"canvas not 32", `{"canvas": {"width": 100, "height": 128}}`, "canvas 100x128"},
		{"no canvas height", `{"canvas": {"width": 128}}`, "canvas 128x0"},
		{"fps", `{"fps": 30}`, "fps 30"},
		{"frames", `{"frames": -1}`, "frames -1"},
		{"steps", `{"steps": 5000}`, "steps 5000"},
		{"preset steps", `{"presets": [{"name": "Fast", "steps": 0}]}`, `preset "Fast"`},
		{"preset name", `{"presets": [{"steps": 3}]}`, "preset 1 no name"},
		{"short edge", `{"reference_short_edge": 100}`, "reference_short_edge 100"},
		{"shift", `{"shifts": {"video": -1, "audio": 3}}`, "shifts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeDeclaration(t, dir, c.text)
			_, err := readDeclared(dir)
			var se *SnapshotError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) ||
				!strings.Contains(err.Error(), filepath.Join(dir, DeclarationFile)) || !strings.Contains(err.Error(), "remove the file") {
				t.Errorf("error %v, want a *SnapshotError naming the file and %q, saying what to do", err, c.want)
			}
		})
	}
	dir := t.TempDir()
	if d, err := readDeclared(dir); d != nil || err != nil {
		t.Errorf("absent file: %v, %v; want nil, nil", d, err)
	}
	// The training tools' record shares the file.
	writeDeclaration(t, dir, `{"name": "partial", "steps": 8, "training": {"dit": {"steps": 12000}}}`)
	if d, err := readDeclared(dir); err != nil || d.Steps != 8 || d.Canvas != (DeclaredCanvas{}) {
		t.Errorf("a partial declaration: %+v, %v; want steps 8 and no canvas", d, err)
	}
}
