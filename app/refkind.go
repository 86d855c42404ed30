package app

import "h3studio/media"

// RefKind is the kind of reference a probed file becomes when it is
// dropped or restored: want (a restored reference's kind) where the file
// allows it, which lets a clip with sound come back as a video used
// without its sound; otherwise the kind its streams make it. False for a
// file that is neither a picture, a video nor audio.
func RefKind(info media.Info, want string) (string, bool) {
	if info.Kind == media.KindVideoAudio && (want == RefVideo || want == RefVideoAudio) {
		return want, true
	}
	switch info.Kind {
	case media.KindImage:
		return RefImage, true
	case media.KindVideo:
		return RefVideo, true
	case media.KindVideoAudio:
		return RefVideoAudio, true
	case media.KindAudio:
		return RefAudio, true
	}
	return "", false
}
