package app

import (
	"testing"

	"h3studio/media"
)

func TestRefKind(t *testing.T) {
	for _, c := range []struct {
		media, want, got string
		ok               bool
	}{
		{media.KindImage, "", RefImage, true},
		{media.KindVideo, "", RefVideo, true},
		{media.KindVideoAudio, "", RefVideoAudio, true},
		{media.KindAudio, "", RefAudio, true},
		// A restored clip keeps being used without its sound ...
		{media.KindVideoAudio, RefVideo, RefVideo, true},
		// ... but a silent clip cannot become a video with sound, and a
		// picture stays a picture whatever the request said.
		{media.KindVideo, RefVideoAudio, RefVideo, true},
		{media.KindImage, RefVideo, RefImage, true},
		{"subtitles", "", "", false},
	} {
		got, ok := RefKind(media.Info{Kind: c.media}, c.want)
		if got != c.got || ok != c.ok {
			t.Errorf("RefKind(%s, %q) = %q, %v; want %q, %v", c.media, c.want, got, ok, c.got, c.ok)
		}
	}
}
