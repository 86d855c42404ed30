// Package resources holds files embedded in the binary: the app icon,
// presets and (from the weights issue on) the tiny demo model.
package resources

import (
	_ "embed"

	"fyne.io/fyne/v2"
)

//go:embed Icon.png
var iconPNG []byte

// Icon is the application icon.
var Icon = fyne.NewStaticResource("Icon.png", iconPNG)
