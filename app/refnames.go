package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"h3studio/engine/layout"
	"h3studio/media"
)

// RefLabel is the name the n-th (1-based) reference of a kind goes by in
// the window's lists and in every message about it: "Picture 2",
// "Video 1", "Audio 3". A clip used with or without its sound is a video
// either way.
func RefLabel(kind string, n int) string {
	return fmt.Sprintf("%s %d", refWord(kind), n)
}

func refWord(kind string) string {
	switch kind {
	case RefImage:
		return "Picture"
	case RefVideo, RefVideoAudio:
		return "Video"
	case RefAudio:
		return "Audio"
	}
	return "Reference"
}

// RefLabels names a request's references in request order, numbering
// each kind on its own as the lists do.
func RefLabels(refs []Reference) []string {
	seen := map[string]int{}
	out := make([]string, len(refs))
	for i, r := range refs {
		w := refWord(r.Kind)
		seen[w]++
		out[i] = fmt.Sprintf("%s %d", w, seen[w])
	}
	return out
}

// RefFileName is a file as people named it: its base name, never its
// folder, never re-cased.
func RefFileName(path string) string { return filepath.Base(path) }

// nameReference rewrites a model rule broken by one reference so that it
// names the reference by its list label and file name rather than its
// place in the request and full path ("Audio 2 (music.wav): ..." instead
// of "reference 8 (/Users/…/music.wav): ..."). Other errors pass as they
// are.
func nameReference(err error, refs []Reference) error {
	var le *layout.LimitError
	if !errors.As(err, &le) || le.Ref < 1 || le.Ref > len(refs) {
		return err
	}
	ref := refs[le.Ref-1]
	named := *le
	named.Msg = fmt.Sprintf("%s (%s): %s", RefLabels(refs)[le.Ref-1], RefFileName(ref.Path), le.Rule)
	return &named
}

// RefRejectedError is a file the window did not add as a reference. Its
// message names the file as the user named it and says why in words,
// without FFprobe's own text or a folder.
type RefRejectedError struct {
	Name   string // the file's base name
	Reason string
	Err    error
}

func (e *RefRejectedError) Error() string { return e.Name + ": " + e.Reason }
func (e *RefRejectedError) Unwrap() error { return e.Err }

// CheckReference makes, when a file is added, the checks its plan will
// make of it on its own: the header read through the probe cache the
// plans read, its kind, and the model's rules for one reference of that
// kind (layout.CheckRef, as the planner applies it). Rules about the
// whole request (how many, audio beside a picture) are left to the plan.
func CheckReference(ctx context.Context, ref Reference) error {
	name := RefFileName(ref.Path)
	pref, err := probeReference(ctx, 0, ref)
	if errors.Is(err, fs.ErrNotExist) {
		return &RefRejectedError{Name: name, Reason: missingText, Err: err}
	}
	if err != nil {
		return &RefRejectedError{Name: name, Reason: unreadableText, Err: err}
	}
	if err := layout.CheckRef(pref.Layout()); err != nil {
		var le *layout.LimitError
		reason := err.Error()
		if errors.As(err, &le) {
			reason = le.Msg
		}
		return &RefRejectedError{Name: name, Reason: reason, Err: err}
	}
	return nil
}

// missingText is why a file that is no longer there is not added.
const missingText = "it is missing; it was moved or deleted"

// AddableReference reads a file being added to the window's references:
// its header, the kind it becomes (want, a restored reference's kind,
// where the file allows it: RefKind) and CheckReference's verdict. Every
// error is a *RefRejectedError.
func AddableReference(ctx context.Context, path, want string) (Reference, media.Info, error) {
	name := RefFileName(path)
	info, err := Probe(ctx, path)
	if errors.Is(err, fs.ErrNotExist) {
		return Reference{}, info, &RefRejectedError{Name: name, Reason: missingText, Err: err}
	}
	if err != nil {
		return Reference{}, info, &RefRejectedError{Name: name, Reason: unreadableText, Err: err}
	}
	kind, ok := RefKind(info, want)
	if !ok {
		return Reference{}, info, &RefRejectedError{Name: name, Reason: unreadableText}
	}
	ref := Reference{Kind: kind, Path: path}
	return ref, info, CheckReference(ctx, ref)
}

// unreadableText is why a file that FFprobe cannot read is not added.
const unreadableText = "not a picture, video or audio file that can be read"

// AnchorsTakePictures is why a file that is not a still is not used as a
// first or last frame.
const AnchorsTakePictures = "first and last frames are pictures"

// AnchorsFull is why a picture dropped beyond the free frame slots is not
// used.
const AnchorsFull = "both frames were taken; drop it onto a frame to replace that one"

// How notices name the first & last frame slots ("Added red.png as the
// first frame.").
const (
	FirstFrameSlot = "the first frame"
	LastFrameSlot  = "the last frame"
)

// AddedText is the notice after files are added: what went where, in the
// words of the lists, and each file that was not added with its reason.
// added pairs a file name with where it went ("Picture 2", "the first
// frame").
func AddedText(added [][2]string, rejected []*RefRejectedError) string {
	var parts []string
	if len(added) > 0 {
		var each []string
		for _, a := range added {
			each = append(each, a[0]+" as "+a[1])
		}
		parts = append(parts, "Added "+strings.Join(each, ", ")+".")
	}
	for _, r := range rejected {
		parts = append(parts, "Not added: "+r.Name+" ("+r.Reason+").")
	}
	if len(parts) == 0 {
		return "Nothing was added."
	}
	return strings.Join(parts, " ")
}

// FileDialogFailedText is the notice when the system's open dialog could
// not be shown and the window's own opens instead.
const FileDialogFailedText = "The system file dialog could not open, so H3 Studio's own is shown instead."
