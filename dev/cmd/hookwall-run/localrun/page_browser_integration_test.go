//go:build integration

package localrun

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// chromium finds the browser: HOOKWALL_CHROMIUM, else Debian's chromium
// (`make chromium` installs it; CI's .ci/run too).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("HOOKWALL_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium on PATH: run `make chromium` (apt-get install chromium) or set HOOKWALL_CHROMIUM")
	return ""
}

// browser returns a headless chromium tab, closed at the end of the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1000),
		chromedp.UserDataDir(t.TempDir()))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// row is the CSS selector of an event's row, optionally with its status.
func row(key string, status webhook.Status) string {
	sel := `tr.event[data-key="` + key + `"]`
	if status != "" {
		sel += `[data-status="` + string(status) + `"]`
	}
	return sel
}

// Must show 5: the local page in a real headless browser. It lists the
// events with status, history and steps, refreshes itself (an event sent
// after the page loaded appears without a reload), and its Replay button
// replays an event (back to RECEIVED and through the processor again,
// shown in its history), with fresh steps when the box is ticked.
//
// It follows the quick start: the event is sent by `hookwall-run send line`
// (which finds the runner by itself); a replay from the page is recorded
// as function "page"; an expanded row keeps its key readable and shows the
// payload as indented JSON.
func TestPageInBrowser(t *testing.T) {
	r := startRunner(t)
	out, err := r.sendCLI("line")
	m := againLine.FindStringSubmatch(out)
	if err != nil || m == nil || !strings.Contains(out, "← 200 OK") {
		t.Fatalf("send line: %v\n%s", err, out)
	}
	line := "line#demo#" + m[2]
	before := r.waitStatus(line, webhook.StatusSucceeded, 30*time.Second)

	ctx := browser(t)
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	do("open the page", chromedp.Navigate(r.base+PagePath),
		chromedp.WaitVisible(chromedp.CSS(row(line, webhook.StatusSucceeded))))
	if title, err := chromedp.Run(ctx, chromedp.Title()); err != nil || !strings.Contains(title, "Hookwall") {
		t.Errorf("title %q: %v", title, err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.hookwallMarker = "still here"`)); err != nil {
		t.Fatal(err)
	}

	// It refreshes itself: a new event shows up in the same document.
	wecom := r.key("WeCom")
	r.send("WeCom")
	do("see a new event without reloading", chromedp.WaitVisible(chromedp.CSS(row(wecom, webhook.StatusSucceeded))))
	if marker, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.hookwallMarker`)); err != nil || marker != "still here" {
		t.Errorf("the page was reloaded (marker %q, %v), want it to refresh its rows itself", marker, err)
	}

	// History and steps, in the row's <details>.
	do("open history and steps",
		chromedp.Click(chromedp.CSS(row(line, "")+` details.history summary`)),
		chromedp.WaitVisible(chromedp.CSS(row(line, "")+` details.history table`)),
		chromedp.Click(chromedp.CSS(row(line, "")+` details.steps summary`)),
		chromedp.WaitVisible(chromedp.CSS(row(line, "")+` details.steps table`)))
	history := text(row(line, "") + ` details.history table`)
	for _, want := range []string{"RECEIVED", "PROCESSING", "→ SUCCEEDED", "receiver", "processor"} {
		if !strings.Contains(history, want) {
			t.Errorf("history has no %q:\n%s", want, history)
		}
	}
	if steps := text(row(line, "") + ` details.steps table`); !strings.Contains(steps, "hookwall.forward") || !strings.Contains(steps, "post") {
		t.Errorf("steps:\n%s", steps)
	}
	// The payload, pretty-printed; the key column still readable with the
	// row's details open.
	do("open the payload", chromedp.Click(chromedp.CSS(row(line, "")+` details.payload summary`)),
		chromedp.WaitVisible(chromedp.CSS(row(line, "")+` details.payload pre`)))
	payload, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('`+row(line, "")+` details.payload pre').textContent`))
	if err != nil || !strings.Contains(payload, "{\n  \"type\": \"message\",\n") {
		t.Errorf("payload not indented JSON (%v):\n%.200s", err, payload)
	}
	keyWidth, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelector('`+row(line, "")+` td.key').getBoundingClientRect().width`))
	if err != nil {
		t.Fatal(err)
	}
	charWidth, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`(function () { var s = document.createElement("span");
		s.textContent = "0000000000"; s.style.whiteSpace = "nowrap"; s.style.display = "inline-block";
		document.querySelector('`+row(line, "")+` td.key').appendChild(s);
		var w = s.getBoundingClientRect().width / 10; s.remove(); return w; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if keyWidth < 24*charWidth {
		t.Errorf("the key column is %.0f px (%.1f characters) wide with the row expanded, want at least 24 characters", keyWidth, keyWidth/charWidth)
	}
	shot(t, ctx, "page.png")

	// Replay: back to RECEIVED, through the processor again; the forward
	// step is journaled, so it is skipped.
	do("replay", chromedp.Click(chromedp.CSS(row(line, "")+` button.replay`)),
		chromedp.WaitVisible(chromedp.CSS(`#flash:not(:empty)`)))
	if flash := text(`#flash`); !strings.Contains(flash, "replayed") {
		t.Fatalf("flash %q", flash)
	}
	after := r.waitReplayed(line, before.Version)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!document.querySelector('`+row(line, webhook.StatusSucceeded)+
		`') && document.querySelector('`+row(line, "")+` details.history').textContent.includes("page")`,
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Errorf("the replay (function page) does not show in the page's history: %v", err)
	}
	// Whether the journaled forward runs again on a replay without fresh
	// steps is the store's and the processor's contract, tested there; the
	// page only has to have asked for it (fresh_steps false in the log).
	forwarded := r.countLines(ForwardedFile, "key", line)

	// With fresh steps (the checkbox) the forward runs again, with the same
	// Idempotency-Key.
	do("replay with fresh steps", chromedp.Click(chromedp.CSS(`#fresh`)),
		chromedp.Click(chromedp.CSS(row(line, "")+` button.replay`)))
	r.waitReplayed(line, after.Version)
	deadline := time.Now().Add(20 * time.Second)
	for r.countLines(ForwardedFile, "key", line) != forwarded+1 && time.Now().Before(deadline) {
		time.Sleep(pollInterval) // polling a file the subprocess writes
	}
	if n := r.countLines(ForwardedFile, "key", line); n != forwarded+1 {
		t.Errorf("replay with fresh steps: %d forwarded requests, want %d", n, forwarded+1)
	}
	for i, want := range []bool{false, true} {
		if l := r.logLines(line, StageReplayed); len(l) != 2 || l[i]["fresh_steps"] != want {
			t.Errorf("replayed log lines %v: want fresh_steps false then true", l)
		}
	}
	shot(t, ctx, "page-after-replay.png")
}

// waitReplayed waits until key's record is past version and SUCCEEDED again.
func (r *runner) waitReplayed(key string, version int64) EventView {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ev, ok := r.event(key)
		if ok && ev.Version > version && ev.Status == webhook.StatusSucceeded {
			return ev
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("event %s not replayed to SUCCEEDED past version %d: %+v", key, version, ev)
		}
		time.Sleep(pollInterval) // polling the subprocess
	}
}

// shot saves a screenshot to HOOKWALL_SCREENSHOT_DIR, when set.
func shot(t *testing.T, ctx context.Context, name string) {
	dir := os.Getenv("HOOKWALL_SCREENSHOT_DIR")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	if err != nil {
		t.Logf("screenshot: %v", err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Logf("screenshot: %v", err)
	}
}
