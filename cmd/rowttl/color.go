package main

import "image/color"

func plotterColor(r, g, b uint8) color.Color { return color.RGBA{R: r, G: g, B: b, A: 255} }
