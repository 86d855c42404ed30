#!/usr/bin/env python3
"""Reference outputs for package resample (resample/testdata/**.json.gz).

Ran with (each output file also records its versions under "versions"):
  resample/testdata/*.json.gz         Debian 12 (bookworm) packages from
      tools/resample/setup.sh: python3-pil 9.4.0, python3-torch 1.13.1,
      python3-torchvision 0.14.1, python3-torchaudio 0.13.1,
      python3-numpy 1.24.2 (CPU capability AVX2)
  resample/testdata/torch2/*.json.gz  a pip environment with torch 2.11.0,
      torchvision 0.26.0, torchaudio 2.11.0, Pillow 12.3.0, numpy 2.5.2
      (CPU capability AVX512); its pil.json.gz came out identical to
      Debian's and is not kept twice

    tools/resample/setup.sh                    # Debian/Ubuntu: apt packages
    python3 tools/resample/gen.py [OUT_DIR]    # default resample/testdata

Inputs are not stored: they come from integer-only formulas that
resample/testdata_test.go reproduces (each case records the SHA-256 of its
input so a drift between the two generators fails loudly). Three families:

  pil.json.gz      PIL.Image.resize(size, Image.Resampling.LANCZOS) on RGB,
                   and the official cover rule (resize to cover, centre crop)
  bicubic.json.gz  uint8 CHW -> float32 -> F.interpolate(bicubic,
                   antialias=True, align_corners=False) -> round_().clamp_()
                   -> uint8 ("out"; the float32 result before rounding is
                   kept for small cases, "float"), and, with torch >= 2.1,
                   torchvision v2 resize of the uint8 CPU tensor, which takes
                   ATen's native uint8 kernel ("out_u8"): HF's fast
                   Qwen2-VL/Qwen3-VL processors call the latter on CPU
  audio.json.gz    torchaudio.functional.resample(x, orig, new) with its
                   defaults on float32 stereo ("out"), and
                   torchaudio.transforms.Resample(orig, new)(x)
                   ("out_transform", whose kernel is built in float64)

The script runs wherever these packages exist (pip install pillow torch
torchvision torchaudio numpy works too); a family whose package is missing
is skipped with a message, the others are still written.
"""

import base64
import gzip
import hashlib
import json
import os
import sys

import numpy as np

M32 = np.uint64(0xFFFFFFFF)


def hash32(x, y, c, seed):
    """Integer hash of a coordinate, mirrored by hash32 in the Go tests."""
    x, y, c = (np.asarray(v, dtype=np.uint64) for v in (x, y, c))
    h = (x * np.uint64(0x9E3779B1) + y * np.uint64(0x85EBCA77)
         + c * np.uint64(0xC2B2AE3D) + np.uint64(seed * 0x27D4EB2F)) & M32
    h ^= h >> np.uint64(15)
    h = (h * np.uint64(0x2C1B3C6D)) & M32
    h ^= h >> np.uint64(12)
    h = (h * np.uint64(0x297A2D39)) & M32
    h ^= h >> np.uint64(15)
    return h


def test_image(w, h, seed):
    """H x W x 3 uint8: wrapping gradients, noise and saturated blocks."""
    y, x, c = np.meshgrid(np.arange(h), np.arange(w), np.arange(3), indexing="ij")
    hv = hash32(x, y, c, seed).astype(np.int64)
    base = (x * 256 // w + y * 128 // h + c * 85 + seed * 17) % 256
    v = np.clip(base + (hv & 7) - 4, 0, 255)
    block = ((x // 8) + (y // 8) + seed) % 7 == 0
    v = np.where(block, np.where(hv & 1 == 1, 255, 0), v)
    return v.astype(np.uint8)


def test_audio(n, channels, seed):
    """channels x n float32: a sawtooth, a chirp-like wrap and noise, as
    int16-range integers scaled by 1/32768 (exact in float32)."""
    i = np.arange(n, dtype=np.int64)[None, :]
    c = np.arange(channels, dtype=np.int64)[:, None]
    saw = ((i * 37 + c * 1000 + seed) % 441) * 60 - 13230
    chirp = ((i * i * 3 + c * 7) % 1013) * 10 - 5065
    noise = (hash32(i, c, 0, seed).astype(np.int64) & 4095) - 2048
    return ((saw + chirp + noise).astype(np.float32) / np.float32(32768.0)).astype(np.float32)


def b64(a):
    return base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()


def sha(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def write(out_dir, name, doc):
    path = os.path.join(out_dir, name)
    # mtime=0 keeps the gzip bytes reproducible.
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        f.write(json.dumps(doc, indent=0, sort_keys=True).encode())
    print("wrote", path)


PIL_RESIZE = [  # name, src w, h, seed, dst w, h
    ("down_400x300_272x204", 400, 300, 1, 272, 204),  # 4000x3000 -> 2720x2048, scaled down
    ("up_192x160_288x256", 192, 160, 2, 288, 256),
    ("up_320x180_336x192", 320, 180, 3, 336, 192),  # 1280x720 -> 1344x768, scaled down
    ("vonly_150x100_150x75", 150, 100, 4, 150, 75),
    ("honly_250x100_120x100", 250, 100, 5, 120, 100),
    ("mixed_97x61_31x200", 97, 61, 6, 31, 200),
    ("identity_64x48", 64, 48, 7, 64, 48),
    ("strip_400x4_40x2", 400, 4, 8, 40, 2),
    ("down10_640x480_64x48", 640, 480, 9, 64, 48),
    ("to1x1_5x3", 5, 3, 10, 1, 1),
]

PIL_COVER = [  # name, src w, h, seed, canvas w, h
    ("cover_200x150_128x128", 200, 150, 11, 128, 128),
    ("cover_150x200_136x102", 150, 200, 12, 136, 102),
    ("cover_199x101_64x64", 199, 101, 13, 64, 64),
    ("cover_strip_400x3_32x32", 400, 3, 14, 32, 32),
    ("cover_up_60x40_100x100", 60, 40, 15, 100, 100),
    ("cover_halfeven_13x4_2x2", 13, 4, 16, 2, 2),
    ("cover_same_aspect_320x180_160x90", 320, 180, 17, 160, 90),
]

BICUBIC = [  # name, src w, h, seed, dst w, h
    ("down_400x300_280x196", 400, 300, 21, 280, 196),
    ("up_64x48_112x84", 64, 48, 22, 112, 84),
    ("up_192x160_224x196", 192, 160, 23, 224, 196),
    ("honly_150x100_70x100", 150, 100, 24, 70, 100),
    ("vonly_100x150_100x70", 100, 150, 25, 100, 70),
    ("mixed_97x61_56x112", 97, 61, 26, 56, 112),
    ("identity_56x28", 56, 28, 27, 56, 28),
    ("down_640x480_56x42", 640, 480, 28, 56, 42),
]

FLOAT_KEPT_PIXELS = 12000

AUDIO = [  # name, orig Hz, new Hz, samples, channels, seed
    ("44100_32000", 44100, 32000, 8827, 2, 31),
    ("48000_32000", 48000, 32000, 9601, 2, 32),
    ("16000_32000", 16000, 32000, 3201, 2, 33),
    ("22050_32000", 22050, 32000, 5000, 2, 34),
    ("24000_32000", 24000, 32000, 3000, 1, 35),
]


def official_cover(img, tw, th):
    """The official pipeline's cover rule: scale to cover (Python round),
    Lanczos, centre crop."""
    from PIL import Image
    sw, sh = img.size
    scale = max(tw / sw, th / sh)
    rw, rh = max(tw, round(sw * scale)), max(th, round(sh * scale))
    img = img.resize((rw, rh), Image.Resampling.LANCZOS)
    left, top = (rw - tw) // 2, (rh - th) // 2
    return img.crop((left, top, left + tw, top + th)), (rw, rh)


def gen_pil(out_dir):
    import PIL
    from PIL import Image
    cases = []
    for name, w, h, seed, dw, dh in PIL_RESIZE:
        src = test_image(w, h, seed)
        out = np.asarray(Image.fromarray(src, "RGB").resize((dw, dh), Image.Resampling.LANCZOS))
        cases.append(dict(name=name, op="resize", src=[w, h], seed=seed, size=[dw, dh],
                          input_sha256=sha(src), out=b64(out)))
    for name, w, h, seed, tw, th in PIL_COVER:
        src = test_image(w, h, seed)
        img, (rw, rh) = official_cover(Image.fromarray(src, "RGB"), tw, th)
        cases.append(dict(name=name, op="cover", src=[w, h], seed=seed, size=[tw, th],
                          resized=[rw, rh], input_sha256=sha(src), out=b64(np.asarray(img))))
    write(out_dir, "pil.json.gz", dict(versions={"pillow": PIL.__version__, "numpy": np.__version__}, cases=cases))


def native_uint8_resize(chw, dw, dh):
    """What torchvision.transforms.v2.functional.resize(BICUBIC,
    antialias=True) returns for a uint8 CPU tensor, the call HF's fast
    processors make: ATen's native uint8 kernel from torch 2.1 on. None
    where that kernel or torchvision's v2 API is missing (torch 1.13 would
    silently take the float path instead)."""
    import torch
    import torch.nn.functional as F
    try:
        from torchvision.transforms import InterpolationMode
        from torchvision.transforms.v2 import functional as TF
        native = F.interpolate(chw[None], size=(dh, dw), mode="bicubic", antialias=True, align_corners=False)[0]
    except (ImportError, RuntimeError):
        return None
    tv = TF.resize(chw, [dh, dw], interpolation=InterpolationMode.BICUBIC, antialias=True)
    assert torch.equal(tv, native), "torchvision did not take the native uint8 path"
    return tv


def gen_bicubic(out_dir):
    import torch
    import torch.nn.functional as F
    cases = []
    for name, w, h, seed, dw, dh in BICUBIC:
        src = test_image(w, h, seed)
        chw = torch.from_numpy(src).permute(2, 0, 1).contiguous()  # uint8 C,H,W
        f = F.interpolate(chw[None].float(), size=(dh, dw), mode="bicubic", antialias=True, align_corners=False)[0]
        u8 = f.clone().round_().clamp_(0, 255).to(torch.uint8)
        case = dict(name=name, src=[w, h], seed=seed, size=[dw, dh], input_sha256=sha(src),
                    out=b64(u8.permute(1, 2, 0).numpy()))
        if dw * dh <= FLOAT_KEPT_PIXELS:  # float32 does not compress; keep it for small outputs
            case["float"] = b64(f.numpy().astype("<f4"))
        u8 = native_uint8_resize(chw, dw, dh)
        if u8 is not None:
            case["out_u8"] = b64(u8.permute(1, 2, 0).numpy())
        cases.append(case)
    versions = {"torch": torch.__version__, "numpy": np.__version__,
                "cpu_capability": torch.backends.cpu.get_cpu_capability() if hasattr(torch.backends, "cpu") else ""}
    write(out_dir, "bicubic.json.gz", dict(versions=versions, cases=cases))


def gen_audio(out_dir):
    import torch
    import torchaudio
    import torchaudio.functional as AF
    cases = []
    for name, orig, new, n, ch, seed in AUDIO:
        x = test_audio(n, ch, seed)
        y = AF.resample(torch.from_numpy(x), orig, new).numpy()
        # transforms.Resample builds its kernel in float64 (dtype=None).
        yt = torchaudio.transforms.Resample(orig, new)(torch.from_numpy(x)).numpy()
        cases.append(dict(name=name, orig=orig, new=new, samples=n, channels=ch, seed=seed,
                          input_sha256=sha(x.astype("<f4")), out=[b64(c.astype("<f4")) for c in y],
                          out_transform=[b64(c.astype("<f4")) for c in yt]))
    versions = {"torch": torch.__version__, "torchaudio": torchaudio.__version__, "numpy": np.__version__}
    write(out_dir, "audio.json.gz", dict(versions=versions, cases=cases))


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "resample", "testdata")
    os.makedirs(out_dir, exist_ok=True)
    for family, fn in (("pil", gen_pil), ("bicubic", gen_bicubic), ("audio", gen_audio)):
        try:
            fn(out_dir)
        except ImportError as e:
            print(f"skip {family}: {e}", file=sys.stderr)


if __name__ == "__main__":
    main()
