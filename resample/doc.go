// Package resample reproduces, value for value, the three resamplers the
// official MiniMax-H3 serving pipeline prepares media with, so that our
// inputs match the reference pipeline's and end-to-end parity tests can be
// held to tight tolerances:
//
//   - Lanczos and CoverLanczos: Pillow's Image.resize(size, LANCZOS) on 8-bit
//     RGB (libImaging/Resample.c, fixed-point, bit-exact), and the official
//     cover-then-centre-crop rule built on it.
//   - BicubicAA: torch.nn.functional.interpolate(mode="bicubic",
//     antialias=True, align_corners=False) on float32 planes (ATen's separable
//     CPU kernel), as HF's fast Qwen2-VL/Qwen3-VL image processors run it.
//   - Audio: torchaudio.functional.resample with its defaults (Hann-windowed
//     sinc, lowpass_filter_width 6, rolloff 0.99).
//
// It is a pure-Go leaf: it imports no other h3studio package, so both the
// media layer and the engine can use it. Reference outputs made by
// tools/resample/gen.py live in testdata/.
package resample
