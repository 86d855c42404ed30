package ui

import (
	"testing"

	"fyne.io/fyne/v2/test"
)

func TestMainWindowOpensAndCloses(t *testing.T) {
	a := test.NewTempApp(t)
	w := NewMainWindow(a)
	w.Show()
	if got := w.Title(); got == "" {
		t.Fatal("window has no title")
	}
	if w.Content() == nil {
		t.Fatal("window has no content")
	}
	w.Close()
}
