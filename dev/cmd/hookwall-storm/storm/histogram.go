package storm

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Bucket is one bar of a latency histogram: the count of values in
// [Lo, Hi) milliseconds.
type Bucket struct {
	Lo    float64 `json:"lo_ms"`
	Hi    float64 `json:"hi_ms"`
	Count int     `json:"count"`
}

// Histogram buckets d on a log scale from 0.5 ms, doubling with every
// second bucket (√2 steps), up to the largest value.
func Histogram(d []time.Duration) []Bucket {
	if len(d) == 0 {
		return nil
	}
	top := 0.0
	for _, x := range d {
		top = math.Max(top, float64(x)/1e6)
	}
	var b []Bucket
	for lo := 0.0; lo <= top; {
		hi := 0.5
		if lo > 0 {
			hi = lo * math.Sqrt2
		}
		b = append(b, Bucket{Lo: lo, Hi: hi})
		lo = hi
	}
	for _, x := range d {
		v := float64(x) / 1e6
		i := 0
		if v >= 0.5 {
			i = 1 + int(math.Floor(2*math.Log2(v/0.5)+1e-9))
		}
		i = min(max(i, 0), len(b)-1)
		for i > 0 && v < b[i].Lo { // guard floating point at the edges
			i--
		}
		for i < len(b)-1 && v >= b[i].Hi {
			i++
		}
		b[i].Count++
	}
	return b
}

// SVG draws two histograms (the receiver's and end to end) one above the
// other, a hand-written SVG document.
func SVG(title string, series []struct {
	Name string
	Data []time.Duration
}) string {
	const w, h, pad = 900, 260, 50
	var sb strings.Builder
	height := len(series)*(h+pad) + pad
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", w, height)
	fmt.Fprintf(&sb, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="24" font-size="15">%s</text>`+"\n", pad, esc(title))
	for si, s := range series {
		top := pad + si*(h+pad)
		b := Histogram(s.Data)
		p := PercentilesOf(s.Data)
		fmt.Fprintf(&sb, `<text x="%d" y="%d" font-size="13">%s: n=%d p50=%.1f ms p95=%.1f ms p99=%.1f ms max=%.1f ms</text>`+"\n",
			pad, top+10, esc(s.Name), p.Count, p.P50, p.P95, p.P99, p.Max)
		maxC := 1
		for _, x := range b {
			maxC = max(maxC, x.Count)
		}
		plotTop, plotH := top+20, h-60
		base := plotTop + plotH
		fmt.Fprintf(&sb, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", pad, base, w-pad, base)
		if len(b) == 0 {
			continue
		}
		bw := float64(w-2*pad) / float64(len(b))
		for i, x := range b {
			bh := float64(plotH) * float64(x.Count) / float64(maxC)
			fmt.Fprintf(&sb, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#4a7bd0"><title>%s–%s ms: %d</title></rect>`+"\n",
				float64(pad)+float64(i)*bw+1, float64(base)-bh, math.Max(bw-2, 1), bh, num(x.Lo), num(x.Hi), x.Count)
			if i%2 == 0 {
				fmt.Fprintf(&sb, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", float64(pad)+float64(i)*bw, base+14, num(x.Lo))
			}
		}
		fmt.Fprintf(&sb, `<text x="%d" y="%d" text-anchor="middle">latency, ms (log scale)</text>`+"\n", w/2, base+30)
		fmt.Fprintf(&sb, `<text x="%d" y="%d">%d</text>`+"\n", 4, plotTop+8, maxC)
	}
	sb.WriteString("</svg>\n")
	return sb.String()
}

func num(v float64) string {
	switch {
	case v < 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
