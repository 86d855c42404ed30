package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// JobStatus is where a job stands. A job found "running" when the history
// is opened was interrupted by a crash or a kill.
type JobStatus string

const (
	StatusQueued      JobStatus = "queued"
	StatusRunning     JobStatus = "running"
	StatusDone        JobStatus = "done"
	StatusFailed      JobStatus = "failed"
	StatusCanceled    JobStatus = "canceled"
	StatusInterrupted JobStatus = "interrupted"
)

// Entry is one job as the history keeps it: enough to show it in the
// gallery and to restore its settings with "reuse".
type Entry struct {
	ID       string          `json:"id"`
	Status   JobStatus       `json:"status"`
	Created  time.Time       `json:"created"`
	Started  time.Time       `json:"started,omitzero"`
	Finished time.Time       `json:"finished,omitzero"`
	Output   string          `json:"output,omitempty"`
	Error    string          `json:"error,omitempty"`
	Request  json.RawMessage `json:"request,omitempty"`
	// Plan is the plan the job ran (engine/plan's JSON form), recorded
	// once planning finished.
	Plan json.RawMessage `json:"plan,omitempty"`
	// Phases records wall time per engine phase in milliseconds.
	Phases map[string]int64 `json:"phases_ms,omitempty"`
	// Stats is the engine's summary of a finished run.
	Stats json.RawMessage `json:"stats,omitempty"`
}

// DecodeRequest is the request the entry's job was submitted with.
func (e Entry) DecodeRequest() (Request, error) {
	var r Request
	if len(e.Request) == 0 {
		return r, fmt.Errorf("history: %s has no request", e.ID)
	}
	if err := json.Unmarshal(e.Request, &r); err != nil {
		return r, fmt.Errorf("history: %s: the request is damaged: %w", e.ID, err)
	}
	return r, nil
}

// History is a folder of one JSON file per job. Each write goes to a temp
// file that is renamed over the old one, so a crash at any moment leaves
// every entry either at its previous or its new state, never torn.
type History struct {
	dir string
}

// OpenHistory opens (creating) the history folder and marks entries left
// "running" or "queued" by a process that died as interrupted.
func OpenHistory(dir string) (*History, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("history: create %s: %w", dir, err)
	}
	h := &History{dir: dir}
	entries, err := h.List()
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Status == StatusRunning || e.Status == StatusQueued {
			e.Status = StatusInterrupted
			e.Error = "the app stopped while this job was in progress"
			if err := h.Put(e); err != nil {
				return nil, err
			}
		}
	}
	return h, nil
}

// Put writes e atomically.
func (h *History) Put(e Entry) error {
	if e.ID == "" || strings.ContainsAny(e.ID, `/\.`) {
		return fmt.Errorf("history: invalid job id %q", e.ID)
	}
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return fmt.Errorf("history: encode %s: %w", e.ID, err)
	}
	return writeFileAtomic(filepath.Join(h.dir, e.ID+".json"), data)
}

// Get reads one entry.
func (h *History) Get(id string) (Entry, error) {
	var e Entry
	data, err := os.ReadFile(filepath.Join(h.dir, id+".json"))
	if err != nil {
		return e, fmt.Errorf("history: %w", err)
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return e, fmt.Errorf("history: %s is damaged: %w", id, err)
	}
	return e, nil
}

// List returns every readable entry, newest first. Damaged files (which the
// atomic writes should make impossible, but a user may edit the folder) are
// skipped rather than hiding the rest of the history.
func (h *History) List() ([]Entry, error) {
	names, err := os.ReadDir(h.dir)
	if err != nil {
		return nil, fmt.Errorf("history: read %s: %w", h.dir, err)
	}
	var out []Entry
	for _, n := range names {
		id, ok := strings.CutSuffix(n.Name(), ".json")
		if !ok || n.IsDir() {
			continue
		}
		e, err := h.Get(id)
		if err != nil {
			continue
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.After(out[j].Created) })
	return out, nil
}

// Delete removes an entry (not its output clip).
func (h *History) Delete(id string) error {
	err := os.Remove(filepath.Join(h.dir, id+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// writeFileAtomic writes data to a temp file beside path, syncs it, and
// renames it into place.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
