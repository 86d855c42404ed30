package app

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestHistoryRoundTripAndOrder(t *testing.T) {
	h, err := OpenHistory(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for i, id := range []string{"a", "b", "c"} {
		if err := h.Put(Entry{ID: id, Status: StatusDone, Created: t0.Add(time.Duration(i) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := h.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || list[0].ID != "c" || list[2].ID != "a" {
		t.Fatalf("list order = %+v, want c,b,a", list)
	}
	if err := h.Put(Entry{ID: "../x"}); err == nil {
		t.Fatal("path-like id accepted")
	}
}

// A process that dies mid-render leaves its job "running"; reopening the
// history must mark it interrupted, and a torn temp file from a crash during
// a write must not hide the other entries.
func TestHistorySurvivesCrash(t *testing.T) {
	dir := t.TempDir()
	h, err := OpenHistory(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Put(Entry{ID: "j1", Status: StatusRunning, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := h.Put(Entry{ID: "j0", Status: StatusDone, Created: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	// What a crash between CreateTemp and Rename leaves behind.
	if err := os.WriteFile(filepath.Join(dir, ".j2.json.tmp123"), []byte(`{"id":"j2","sta`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A damaged entry a user hand-edited.
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{`), 0o644); err != nil {
		t.Fatal(err)
	}
	h2, err := OpenHistory(dir)
	if err != nil {
		t.Fatal(err)
	}
	list, err := h2.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("got %d entries, want 2: %+v", len(list), list)
	}
	e, err := h2.Get("j1")
	if err != nil {
		t.Fatal(err)
	}
	if e.Status != StatusInterrupted {
		t.Fatalf("j1 status = %s, want interrupted", e.Status)
	}
}

// The request a job was submitted with comes back from its history entry
// as it went in; an entry without one, or with a damaged one, says so.
func TestEntryDecodeRequest(t *testing.T) {
	h, err := OpenHistory(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	q := NewQueue(h, stepRender(nil), nil)
	want := Request{Prompt: "a fox", Seed: 7, Width: 320, Height: 192, Seconds: 1.5,
		References: []Reference{{Kind: RefImage, Path: "/x/fox.png"}}, Output: filepath.Join(t.TempDir(), "fox.mp4")}
	id, err := q.Submit(want)
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	e, err := h.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.DecodeRequest()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("DecodeRequest = %+v, %v; want %+v", got, err, want)
	}
	if _, err := (Entry{ID: "empty"}).DecodeRequest(); err == nil {
		t.Error("an entry without a request decoded")
	}
	if _, err := (Entry{ID: "torn", Request: []byte(`{"prompt":`)}).DecodeRequest(); err == nil {
		t.Error("a damaged request decoded")
	}
}
