package main

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// writePlot draws per simulated day the bytes the ingest would take with
// no reclamation, the bytes on disk, the live bytes, and between the first
// two the reclaimed area, with the end of the first retention period
// marked.
func writePlot(path string, days []demoDay, retDays int) error {
	p := plot.New()
	p.Title.Text = "rowttl: the disk levels off near the live data while the ingest grows"
	p.X.Label.Text = "simulated day"
	p.Y.Label.Text = "MiB"
	disk := make(plotter.XYs, len(days))
	live := make(plotter.XYs, len(days))
	all := make(plotter.XYs, len(days))
	for i, d := range days {
		disk[i] = plotter.XY{X: float64(d.day), Y: float64(d.diskBytes) / (1 << 20)}
		live[i] = plotter.XY{X: float64(d.day), Y: float64(d.liveBytes) / (1 << 20)}
		all[i] = plotter.XY{X: float64(d.day), Y: float64(d.ingested) / (1 << 20)}
	}
	// The reclaimed area: under the no-reclamation line, above the disk.
	area := append(plotter.XYs(nil), all...)
	for i := len(disk) - 1; i >= 0; i-- {
		area = append(area, disk[i])
	}
	if len(area) >= 3 {
		poly, err := plotter.NewPolygon(area)
		if err != nil {
			return err
		}
		poly.Color = plotterColor(200, 235, 200)
		poly.LineStyle.Width = 0
		p.Add(poly)
		p.Legend.Add("reclaimed by rowttl", poly)
	}
	al, err := plotter.NewLine(all)
	if err != nil {
		return err
	}
	al.Color = plotterColor(90, 90, 90)
	al.Width = vg.Points(1.5)
	al.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(al)
	p.Legend.Add("with no reclamation (every byte ingested)", al)
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
	p.Legend.Add("bytes on disk with rowttl", dl)
	p.Legend.Add("live bytes", ll)
	p.Legend.Top = true
	p.Legend.Left = true
	if retDays > 0 && len(days) > 0 {
		var top float64
		for _, d := range all {
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
