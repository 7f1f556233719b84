package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Status is how far a task shown by a Display has got: Done of Total
// units (Total < 0 when unknown), and the rows it has handled.
type Status struct {
	Done, Total int64
	// Unit is "bytes" or "rows": what Done and Total count.
	Unit string
	Rows int64
}

// DisplayMode says how a Display shows progress.
type DisplayMode int

// The display modes.
const (
	// Lines prints a line now and then: for logs and pipes.
	Lines DisplayMode = iota
	// Bar redraws one line in place: for a terminal.
	Bar
	// Quiet shows nothing.
	Quiet
)

// ParseDisplayMode reads auto, bar, lines or none; auto is Bar when w is
// a terminal, else Lines.
func ParseDisplayMode(s string, w io.Writer) (DisplayMode, error) {
	switch s {
	case "auto", "":
		if IsTerminal(w) {
			return Bar, nil
		}
		return Lines, nil
	case "bar":
		return Bar, nil
	case "lines":
		return Lines, nil
	case "none":
		return Quiet, nil
	}
	return 0, fmt.Errorf("unknown progress display %q: auto, bar, lines or none", s)
}

// IsTerminal reports whether w is a terminal (a character device that is
// not a dumb one).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Intervals of a Display's updates.
const (
	barEvery  = 200 * time.Millisecond
	lineEvery = 5 * time.Second
)

// Display shows the progress of one task, asking poll for its status at
// each update.
type Display struct {
	w     io.Writer
	mode  DisplayMode
	label string
	poll  func() Status
	start time.Time
	stop  chan struct{}
	done  sync.WaitGroup
}

// Show starts showing the progress of the task named label on w; Finish
// stops.
func Show(w io.Writer, mode DisplayMode, label string, poll func() Status) *Display {
	d := &Display{w: w, mode: mode, label: label, poll: poll, start: time.Now(), stop: make(chan struct{})}
	if mode == Quiet {
		return d
	}
	every := lineEvery
	if mode == Bar {
		every = barEvery
	}
	d.done.Add(1)
	go func() {
		defer d.done.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-d.stop:
				return
			case <-t.C:
				d.render(false)
			}
		}
	}()
	return d
}

// Finish stops the updates and shows the final status.
func (d *Display) Finish() {
	close(d.stop)
	d.done.Wait()
	if d.mode != Quiet {
		d.render(true)
	}
}

// render shows the status: a bar redrawn over the previous one, or a
// line.
func (d *Display) render(final bool) {
	st := d.poll()
	elapsed := time.Since(d.start)
	var b strings.Builder
	if d.mode == Bar {
		b.WriteString("\r\x1b[K")
	}
	b.WriteString(d.label)
	b.WriteString(": ")
	if st.Total > 0 {
		frac := min(float64(st.Done)/float64(st.Total), 1)
		if d.mode == Bar {
			const width = 24
			filled := int(frac * width)
			b.WriteString("[" + strings.Repeat("=", filled) + strings.Repeat(" ", width-filled) + "] ")
		}
		fmt.Fprintf(&b, "%3.0f%% ", frac*100)
	}
	if st.Unit == "bytes" {
		b.WriteString(formatBytes(st.Done))
		if st.Total > 0 {
			b.WriteString(" of " + formatBytes(st.Total))
		}
		b.WriteString(", ")
	}
	fmt.Fprintf(&b, "%d rows", st.Rows)
	if secs := elapsed.Seconds(); secs > 0 {
		fmt.Fprintf(&b, ", %.0f rows/s", float64(st.Rows)/secs)
	}
	fmt.Fprintf(&b, ", %s", elapsed.Round(100*time.Millisecond))
	if d.mode == Lines || final {
		b.WriteString("\n")
	}
	fmt.Fprint(d.w, b.String())
}

// formatBytes writes n bytes in binary units.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
