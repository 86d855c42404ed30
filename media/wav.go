package media

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// WAV format tags (RIFF WAVE fmt chunk).
const (
	wavPCM        = 1
	wavFloat      = 3
	wavExtensible = 0xfffe
)

// maxWAVChannels bounds the channel count a header may claim.
const maxWAVChannels = 16

// WriteWAV writes pcm as a 32-bit float WAV file (WAVE_FORMAT_IEEE_FLOAT),
// through a temporary file renamed on success.
func WriteWAV(path string, pcm PCM) error {
	if err := pcm.validate(); err != nil {
		return err
	}
	dataBytes := int64(len(pcm.Samples)) * 4
	if dataBytes > math.MaxUint32-64 {
		return fmt.Errorf("media: write %s: %d samples is too long for a WAV file", path, len(pcm.Samples))
	}
	return writeAtomic(path, func(f *os.File) error {
		w := bufio.NewWriterSize(f, 1<<16)
		le := binary.LittleEndian
		var h []byte
		h = append(h, "RIFF"...)
		h = le.AppendUint32(h, uint32(4+(8+18)+(8+4)+8+dataBytes))
		h = append(h, "WAVEfmt "...)
		h = le.AppendUint32(h, 18)
		h = le.AppendUint16(h, wavFloat)
		h = le.AppendUint16(h, uint16(pcm.Channels))
		h = le.AppendUint32(h, uint32(pcm.Rate))
		h = le.AppendUint32(h, uint32(pcm.Rate*pcm.Channels*4))
		h = le.AppendUint16(h, uint16(pcm.Channels*4))
		h = le.AppendUint16(h, 32)
		h = le.AppendUint16(h, 0) // cbSize
		h = append(h, "fact"...)
		h = le.AppendUint32(h, 4)
		h = le.AppendUint32(h, uint32(pcm.Frames()))
		h = append(h, "data"...)
		h = le.AppendUint32(h, uint32(dataBytes))
		if _, err := w.Write(h); err != nil {
			return err
		}
		var b [4]byte
		for _, s := range pcm.Samples {
			le.PutUint32(b[:], math.Float32bits(s))
			if _, err := w.Write(b[:]); err != nil {
				return err
			}
		}
		return w.Flush()
	})
}

// wavFormat is the part of the fmt chunk ReadWAV uses.
type wavFormat struct {
	tag, channels, bits int
	rate                int
}

// ReadWAV reads a PCM (8, 16, 24, 32-bit) or float (32, 64-bit) WAV file,
// including WAVE_FORMAT_EXTENSIBLE, into float32 samples at the file's own
// rate and channel count. Sizes are checked against the file before any
// sample buffer is allocated.
func ReadWAV(path string) (PCM, error) {
	f, err := os.Open(path)
	if err != nil {
		return PCM{}, fmt.Errorf("media: read wav %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return PCM{}, fmt.Errorf("media: read wav %s: %w", path, err)
	}
	pcm, err := readWAV(bufio.NewReader(f), st.Size())
	if err != nil {
		return PCM{}, fmt.Errorf("media: read wav %s: %w", path, err)
	}
	return pcm, nil
}

func readWAV(r io.Reader, size int64) (PCM, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil || string(hdr[:4]) != "RIFF" || string(hdr[8:]) != "WAVE" {
		return PCM{}, errors.New("not a RIFF WAVE file")
	}
	var fm *wavFormat
	pos := int64(12)
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			return PCM{}, errors.New("no data chunk (file truncated?)")
		}
		n := int64(binary.LittleEndian.Uint32(ch[4:]))
		pos += 8
		id := string(ch[:4])
		if id == "data" {
			if fm == nil {
				return PCM{}, errors.New("data chunk before fmt chunk")
			}
			// Writers that stream leave the size at 0 or 0xffffffff.
			if n == 0 || n == math.MaxUint32 || n > size-pos {
				n = size - pos
			}
			return readSamples(r, *fm, n)
		}
		if n > size-pos {
			return PCM{}, fmt.Errorf("%q chunk of %d bytes runs past the end of the file", id, n)
		}
		body := make([]byte, n+n%2) // chunks are padded to even sizes
		if _, err := io.ReadFull(r, body); err != nil {
			return PCM{}, fmt.Errorf("%q chunk truncated", id)
		}
		pos += int64(len(body))
		if id == "fmt " {
			var err error
			if fm, err = parseWAVFormat(body[:n]); err != nil {
				return PCM{}, err
			}
		}
	}
}

func parseWAVFormat(b []byte) (*wavFormat, error) {
	if len(b) < 16 {
		return nil, errors.New("fmt chunk too short")
	}
	le := binary.LittleEndian
	fm := &wavFormat{tag: int(le.Uint16(b)), channels: int(le.Uint16(b[2:])),
		rate: int(le.Uint32(b[4:])), bits: int(le.Uint16(b[14:]))}
	if fm.tag == wavExtensible {
		if len(b) < 26 {
			return nil, errors.New("extensible fmt chunk too short")
		}
		fm.tag = int(le.Uint16(b[24:])) // first two bytes of the sub-format GUID
	}
	okBits := (fm.tag == wavPCM && (fm.bits == 8 || fm.bits == 16 || fm.bits == 24 || fm.bits == 32)) ||
		(fm.tag == wavFloat && (fm.bits == 32 || fm.bits == 64))
	switch {
	case !okBits:
		return nil, fmt.Errorf("unsupported encoding (format %d, %d bits); convert it to 16-bit or float WAV", fm.tag, fm.bits)
	case fm.channels < 1 || fm.channels > maxWAVChannels:
		return nil, fmt.Errorf("%d channels is outside 1..%d", fm.channels, maxWAVChannels)
	case fm.rate < 1000 || fm.rate > 384000:
		return nil, fmt.Errorf("sample rate %d Hz is outside 1 kHz..384 kHz", fm.rate)
	}
	return fm, nil
}

func readSamples(r io.Reader, fm wavFormat, n int64) (PCM, error) {
	width := fm.bits / 8
	frame := int64(width * fm.channels)
	n -= n % frame
	raw := make([]byte, n)
	got, err := io.ReadFull(r, raw)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return PCM{}, errors.New("no sample data")
	}
	raw = raw[:int64(got)-int64(got)%frame]
	out := make([]float32, len(raw)/width)
	le := binary.LittleEndian
	for i := range out {
		b := raw[i*width:]
		switch {
		case fm.tag == wavFloat && width == 4:
			out[i] = math.Float32frombits(le.Uint32(b))
		case fm.tag == wavFloat:
			out[i] = float32(math.Float64frombits(le.Uint64(b)))
		case width == 1: // 8-bit WAV is unsigned
			out[i] = float32(int(b[0])-128) / 128
		case width == 2:
			out[i] = float32(int16(le.Uint16(b))) / (1 << 15)
		case width == 3:
			v := int32(uint32(b[0])<<8|uint32(b[1])<<16|uint32(b[2])<<24) >> 8
			out[i] = float32(v) / (1 << 23)
		default:
			out[i] = float32(int32(le.Uint32(b))) / (1 << 31)
		}
	}
	if len(out) == 0 {
		return PCM{}, errors.New("no sample data")
	}
	return PCM{Rate: fm.rate, Channels: fm.channels, Samples: out}, nil
}
