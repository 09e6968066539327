package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// elapsedDelay is how long an operation runs before elapsedTicker shows
// it: a quick one prints nothing.
var elapsedDelay = time.Second

// elapsedTicker shows on a terminal w that a long operation a person
// started is still running, rewriting one line every second
// ("label: 12s, Ctrl-C cancels") until stop, which clears it. The engine
// reports no fraction done for a compaction, so the time is what it shows.
func elapsedTicker(w io.Writer, label string) (stop func()) {
	return statusTicker(w, func(el time.Duration) string {
		return fmt.Sprintf("%s: %s, Ctrl-C cancels", label, humanDuration(el))
	})
}

// statusTicker shows line(elapsed) on a terminal w once an operation has
// run for elapsedDelay, rewriting it every second until stop, which clears
// it. A nil w (not a terminal) shows nothing; stop may be called more than
// once.
func statusTicker(w io.Writer, line func(el time.Duration) string) (stop func()) {
	if w == nil {
		return func() {}
	}
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		timer := time.NewTimer(elapsedDelay)
		defer timer.Stop()
		shown := false
		for {
			select {
			case <-done:
				if shown {
					fmt.Fprint(w, "\r\x1b[K") // clear the line for the result
				}
				return
			case <-timer.C:
				fmt.Fprintf(w, "\r\x1b[K%s", line(time.Since(start)))
				shown = true
				timer.Reset(time.Second)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
		})
	}
}
