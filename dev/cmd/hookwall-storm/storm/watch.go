package storm

import (
	"sync"

	"github.com/hookwall/hookwall/dev/internal/cpuclock"
)

// watcher keeps the main queue's deepest backlog and the machine's load
// average, sampled as a storm goes.
type watcher struct {
	mu       sync.Mutex
	depthMax int
	loads    []float64
}

// sample records a queue depth (< 0: none) and the load average now.
func (w *watcher) sample(depth int) {
	l, ok := loadAverage()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.depthMax = max(w.depthMax, depth)
	if ok {
		w.loads = append(w.loads, l)
	}
}

// load returns the load averages sampled (nil: none could be read).
func (w *watcher) load() *LoadReport {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.loads) == 0 {
		return nil
	}
	r := &LoadReport{Start: w.loads[0], End: w.loads[len(w.loads)-1]}
	sum := 0.0
	for _, l := range w.loads {
		sum += l
		r.Max = max(r.Max, l)
	}
	r.Mean = round(sum/float64(len(w.loads)), 2)
	return r
}

// loadAverage is the machine's 1-minute load average.
func loadAverage() (float64, bool) {
	if l := cpuclock.LoadAverages(); l != nil {
		return l[0], true
	}
	return 0, false
}
