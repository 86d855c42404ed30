//go:build xvfb

package ui

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
)

// xconn is the smallest X11 client the key-to-pixel benchmark needs,
// speaking the core protocol over the display's Unix socket: real key and
// pointer events through the XTEST extension (what xdotool sends) and the
// screen's pixels through GetImage (what xwd reads). It is written against
// the protocol so the benchmark needs neither cgo in a test nor a tool
// per sample, whose start-up would swamp the milliseconds measured.
type xconn struct {
	c      net.Conn
	r      *bufio.Reader
	seq    uint16
	root   uint32
	width  int
	height int
	xtest  byte // XTEST's major opcode
	minKey byte
	maxKey byte
}

// X11 core request opcodes and event types used here.
const (
	xGetImage            = 73
	xQueryExtension      = 98
	xGetKeyboardMapping  = 101
	xKeyPress            = 2
	xKeyRelease          = 3
	xButtonPress         = 4
	xButtonRelease       = 5
	xMotionNotify        = 6
	xImageFormatZPixmap  = 2
	xtestFakeInput       = 2
	xtestFakeInputLength = 9 // in 4-byte units
)

// dialX connects to display ":N" on the local socket, unauthenticated (an
// Xvfb the benchmark starts itself has no access control).
func dialX(display string) (*xconn, error) {
	num, _, _ := strings.Cut(strings.TrimPrefix(display, ":"), ".")
	if _, err := strconv.Atoi(num); err != nil {
		return nil, fmt.Errorf("x11: display %q is not :N", display)
	}
	c, err := net.Dial("unix", "/tmp/.X11-unix/X"+num)
	if err != nil {
		return nil, fmt.Errorf("x11: %w", err)
	}
	x := &xconn{c: c, r: bufio.NewReader(c)}
	if err := x.setup(); err != nil {
		c.Close()
		return nil, err
	}
	if x.xtest, err = x.extension("XTEST"); err != nil {
		c.Close()
		return nil, err
	}
	return x, nil
}

func (x *xconn) Close() error { return x.c.Close() }

// setup exchanges the connection set-up and keeps the first screen's root
// and size and the keycode range.
func (x *xconn) setup() error {
	// 'l': little-endian, protocol 11.0, no authorisation.
	if _, err := x.c.Write([]byte{'l', 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0}); err != nil {
		return fmt.Errorf("x11: setup: %w", err)
	}
	head := make([]byte, 8)
	if _, err := io.ReadFull(x.r, head); err != nil {
		return fmt.Errorf("x11: setup: %w", err)
	}
	body := make([]byte, 4*int(binary.LittleEndian.Uint16(head[6:])))
	if _, err := io.ReadFull(x.r, body); err != nil {
		return fmt.Errorf("x11: setup: %w", err)
	}
	if head[0] != 1 {
		return fmt.Errorf("x11: server refused the connection: %s", body[:head[1]])
	}
	vendorLen := int(binary.LittleEndian.Uint16(body[16:]))
	formats := int(body[21])
	x.minKey, x.maxKey = body[26], body[27]
	screen := body[32+pad4(vendorLen)+8*formats:]
	x.root = binary.LittleEndian.Uint32(screen[0:])
	x.width = int(binary.LittleEndian.Uint16(screen[20:]))
	x.height = int(binary.LittleEndian.Uint16(screen[22:]))
	return nil
}

func pad4(n int) int { return (n + 3) &^ 3 }

// send writes one request and returns its sequence number.
func (x *xconn) send(req []byte) (uint16, error) {
	binary.LittleEndian.PutUint16(req[2:], uint16(len(req)/4))
	if _, err := x.c.Write(req); err != nil {
		return 0, fmt.Errorf("x11: %w", err)
	}
	x.seq++
	return x.seq, nil
}

// reply reads until the reply to request seq, skipping events (the server
// sends MappingNotify to every client) and failing on an error for it.
func (x *xconn) reply(seq uint16) ([]byte, error) {
	for {
		head := make([]byte, 32)
		if _, err := io.ReadFull(x.r, head); err != nil {
			return nil, fmt.Errorf("x11: %w", err)
		}
		s := binary.LittleEndian.Uint16(head[2:])
		switch head[0] {
		case 0:
			if s == seq {
				return nil, fmt.Errorf("x11: request %d failed with error code %d", seq, head[1])
			}
		case 1:
			extra := make([]byte, 4*int(binary.LittleEndian.Uint32(head[4:])))
			if _, err := io.ReadFull(x.r, extra); err != nil {
				return nil, fmt.Errorf("x11: %w", err)
			}
			if s == seq {
				return append(head, extra...), nil
			}
		}
	}
}

// extension is the major opcode of a named extension.
func (x *xconn) extension(name string) (byte, error) {
	req := make([]byte, 8+pad4(len(name)))
	req[0] = xQueryExtension
	binary.LittleEndian.PutUint16(req[4:], uint16(len(name)))
	copy(req[8:], name)
	seq, err := x.send(req)
	if err != nil {
		return 0, err
	}
	rep, err := x.reply(seq)
	if err != nil {
		return 0, err
	}
	if rep[8] == 0 {
		return 0, fmt.Errorf("x11: the server has no %s extension", name)
	}
	return rep[9], nil
}

// keycode is the key that types keysym without a modifier (the keysym of
// a Latin-1 character is its code).
func (x *xconn) keycode(keysym uint32) (byte, error) {
	count := int(x.maxKey) - int(x.minKey) + 1
	req := make([]byte, 8)
	req[0] = xGetKeyboardMapping
	req[4], req[5] = x.minKey, byte(count)
	seq, err := x.send(req)
	if err != nil {
		return 0, err
	}
	rep, err := x.reply(seq)
	if err != nil {
		return 0, err
	}
	per := int(rep[1])
	syms := rep[32:]
	for i := range count {
		if binary.LittleEndian.Uint32(syms[4*i*per:]) == keysym {
			return x.minKey + byte(i), nil
		}
	}
	return 0, fmt.Errorf("x11: no key types keysym %#x", keysym)
}

// fake sends one XTEST input event (as from the keyboard or the mouse).
func (x *xconn) fake(kind, detail byte, rootX, rootY int) error {
	req := make([]byte, 4*xtestFakeInputLength)
	req[0], req[1] = x.xtest, xtestFakeInput
	req[4], req[5] = kind, detail
	if kind == xMotionNotify {
		binary.LittleEndian.PutUint32(req[12:], x.root)
		binary.LittleEndian.PutUint16(req[24:], uint16(rootX))
		binary.LittleEndian.PutUint16(req[26:], uint16(rootY))
	}
	_, err := x.send(req)
	return err
}

// typeKey presses and releases a key.
func (x *xconn) typeKey(code byte) error {
	return errors.Join(x.fake(xKeyPress, code, 0, 0), x.fake(xKeyRelease, code, 0, 0))
}

// click moves the pointer to a screen position and clicks the left button.
func (x *xconn) click(px, py int) error {
	return errors.Join(x.fake(xMotionNotify, 0, px, py), x.fake(xButtonPress, 1, 0, 0), x.fake(xButtonRelease, 1, 0, 0))
}

// image is the screen's pixels in a rectangle as 32-bit BGRX words (the
// depth-24 ZPixmap layout Xvfb serves).
func (x *xconn) image(px, py, w, h int) ([]byte, error) {
	req := make([]byte, 20)
	req[0], req[1] = xGetImage, xImageFormatZPixmap
	binary.LittleEndian.PutUint32(req[4:], x.root)
	binary.LittleEndian.PutUint16(req[8:], uint16(px))
	binary.LittleEndian.PutUint16(req[10:], uint16(py))
	binary.LittleEndian.PutUint16(req[12:], uint16(w))
	binary.LittleEndian.PutUint16(req[14:], uint16(h))
	binary.LittleEndian.PutUint32(req[16:], 0xffffffff)
	seq, err := x.send(req)
	if err != nil {
		return nil, err
	}
	rep, err := x.reply(seq)
	if err != nil {
		return nil, err
	}
	if len(rep)-32 < 4*w*h {
		return nil, fmt.Errorf("x11: image of %dx%d came back with %d bytes", w, h, len(rep)-32)
	}
	return rep[32 : 32+4*w*h], nil
}
