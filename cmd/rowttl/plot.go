package main

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// writePlot draws bytes on disk and live bytes per simulated day, with the
// end of the first retention period marked.
func writePlot(path string, days []demoDay, retDays int) error {
	p := plot.New()
	p.Title.Text = "rowttl: bytes on disk level off near the live data"
	p.X.Label.Text = "simulated day"
	p.Y.Label.Text = "MiB"
	disk := make(plotter.XYs, len(days))
	live := make(plotter.XYs, len(days))
	for i, d := range days {
		disk[i] = plotter.XY{X: float64(d.day), Y: float64(d.diskBytes) / (1 << 20)}
		live[i] = plotter.XY{X: float64(d.day), Y: float64(d.liveBytes) / (1 << 20)}
	}
	dl, err := plotter.NewLine(disk)
	if err != nil {
		return err
	}
	dl.Color = plotterColor(200, 40, 40)
	dl.Width = vg.Points(1.5)
	ll, err := plotter.NewLine(live)
	if err != nil {
		return err
	}
	ll.Color = plotterColor(40, 90, 200)
	ll.Width = vg.Points(1.5)
	p.Add(dl, ll, plotter.NewGrid())
	p.Legend.Add("bytes on disk", dl)
	p.Legend.Add("live bytes", ll)
	p.Legend.Top = false
	p.Legend.Left = false
	p.Legend.YOffs = vg.Points(20)
	if retDays > 0 && len(days) > 0 {
		var top float64
		for _, d := range disk {
			top = max(top, d.Y)
		}
		mark, err := plotter.NewLine(plotter.XYs{{X: float64(retDays), Y: 0}, {X: float64(retDays), Y: top}})
		if err != nil {
			return err
		}
		mark.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
		mark.Color = plotterColor(120, 120, 120)
		p.Add(mark)
		p.Legend.Add(fmt.Sprintf("first retention period (%d days)", retDays), mark)
	}
	return p.Save(8*vg.Inch, 4.5*vg.Inch, path)
}
