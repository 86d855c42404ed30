// Package resample reproduces, value for value, the three resamplers the
// official MiniMax-H3 serving pipeline prepares media with, so that our
// inputs match the reference pipeline's and end-to-end parity tests can be
// held to tight tolerances:
//
//   - Lanczos and CoverLanczos: Pillow's Image.resize(size, LANCZOS) on 8-bit
//     RGB (libImaging/Resample.c, fixed point, bit-exact), and the official
//     cover-then-centre-crop rule built on it (CoverSize).
//   - BicubicAAUint8 and BicubicAA: torch's antialiased bicubic resize, which
//     HF's fast Qwen2-VL/Qwen3-VL image processors apply through
//     torchvision's resize. On a uint8 CPU tensor (the processors' default)
//     that is ATen's integer kernel, BicubicAAUint8; on a float tensor, or
//     a CUDA one where torchvision converts to float, it is
//     F.interpolate(mode="bicubic", antialias=True) in float32, BicubicAA
//     (BicubicAARGB adds the uint8 round trip). The two differ by 1 LSB on
//     about a quarter of the bytes. Both are bit-exact against torch 2.11.
//   - Audio and AudioTransform: torchaudio.functional.resample and
//     torchaudio.transforms.Resample with their defaults (Hann-windowed sinc,
//     lowpass_filter_width 6, rolloff 0.99); they differ in the precision
//     the kernel is built in. Both agree with torchaudio to ~1e-7.
//
// It is a pure-Go leaf: it imports no other h3studio package, so both the
// media layer and the engine can use it. Reference outputs made by
// tools/resample/gen.py live in testdata/ (Debian 12's Pillow 9.4, torch
// 1.13, torchaudio 0.13) and testdata/torch2/ (torch 2.11, torchaudio 2.11).
package resample
