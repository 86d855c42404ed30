// Command mkicon draws resources/Icon.png, the app icon: a film-frame
// rectangle over a sound wave on a dark gradient. It is a program rather
// than a committed binary blob so the icon can be regenerated and changed.
package main

import (
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
)

func main() {
	const n = 512
	img := image.NewRGBA(image.Rect(0, 0, n, n))
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			t := float64(y) / n
			img.Set(x, y, color.RGBA{uint8(30 + 40*t), uint8(20 + 20*t), uint8(60 + 90*t), 255})
		}
	}
	frame := color.RGBA{240, 240, 250, 255}
	for x := 96; x < 416; x++ {
		for w := 0; w < 12; w++ {
			img.Set(x, 128+w, frame)
			img.Set(x, 320+w, frame)
		}
	}
	for y := 128; y < 332; y++ {
		for w := 0; w < 12; w++ {
			img.Set(96+w, y, frame)
			img.Set(404+w, y, frame)
		}
	}
	wave := color.RGBA{255, 170, 60, 255}
	for x := 96; x < 416; x++ {
		yc := 400 + 30*math.Sin(float64(x-96)/320*6*math.Pi)
		for d := -5; d <= 5; d++ {
			img.Set(x, int(yc)+d, wave)
		}
	}
	f, err := os.Create(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}
