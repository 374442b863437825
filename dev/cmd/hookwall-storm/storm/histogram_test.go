package storm

import (
	"encoding/xml"
	"strings"
	"testing"
	"time"
)

func TestHistogramBucketsEveryValueOnce(t *testing.T) {
	var d []time.Duration
	for _, v := range []float64{0.1, 0.49, 0.5, 0.7, 0.71, 1, 1.41, 2, 10, 99.9, 100, 1234} {
		d = append(d, time.Duration(v*float64(time.Millisecond)))
	}
	b := Histogram(d)
	total := 0
	for i, x := range b {
		total += x.Count
		if i > 0 && b[i-1].Hi != x.Lo {
			t.Errorf("bucket %d starts at %v, the previous ends at %v", i, x.Lo, b[i-1].Hi)
		}
	}
	if total != len(d) {
		t.Fatalf("%d values bucketed, want %d", total, len(d))
	}
	for _, v := range d {
		ms := float64(v) / 1e6
		found := false
		for _, x := range b {
			if ms >= x.Lo && ms < x.Hi && x.Count > 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("%v ms in no non-empty bucket", ms)
		}
	}
	if b[0].Lo != 0 || b[0].Hi != 0.5 || b[0].Count != 2 {
		t.Errorf("first bucket %+v, want [0, 0.5) with 2", b[0])
	}
	if Histogram(nil) != nil {
		t.Error("buckets for no data")
	}
}

func TestSVGIsWellFormed(t *testing.T) {
	svg := SVG("a <title> & more", []struct {
		Name string
		Data []time.Duration
	}{{"receiver", []time.Duration{time.Millisecond, 3 * time.Millisecond}}, {"empty", nil}})
	dec := xml.NewDecoder(strings.NewReader(svg))
	rects := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not well-formed XML: %v\n%s", err, svg)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			rects++
		}
	}
	if rects < 3 {
		t.Errorf("%d rects, want the background and bars", rects)
	}
}
