package localrun

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/ops/recovery"
)

// RecoveryJobs are the recovery jobs of the page's recover panel
// (*recovery.Jobs satisfies it): the jobs `hookwall recover` runs.
type RecoveryJobs interface {
	Create(ctx context.Context, f recovery.Filter, rate float64, by string) (*recovery.Job, error)
	Run(ctx context.Context, id string, progress func(recovery.Job)) (*recovery.Job, error)
	Cancel(ctx context.Context, id string) (*recovery.Job, bool, error)
	List(ctx context.Context, limit int) ([]*recovery.Job, error)
}

const (
	// RecoverBy is who the page's jobs say created them.
	RecoverBy = "page"
	// MaxPageJobs is how many jobs the recover panel lists, newest first.
	MaxPageJobs = 10
)

// pageJobs runs the jobs the page starts: in the runner's process, one at
// a time (a second start while one runs is refused: it would share the
// targets' rate with the first), each under the job's lease, until done,
// cancelled (from the page or `hookwall recover --cancel`) or the runner
// stops (the job is then left interrupted, and `hookwall recover --resume
// ID` goes on). Running them here rather than handing them to the sweeper
// shows progress at once instead of at the next sweep run.
type pageJobs struct {
	mu      sync.Mutex
	running string             // the id of the job running, "" for none
	stop    context.CancelFunc // stops it
	wg      sync.WaitGroup
}

// start runs job id in the background with jobs, unless one runs already.
func (pj *pageJobs) start(jobs RecoveryJobs, id string, log *slog.Logger) bool {
	pj.mu.Lock()
	defer pj.mu.Unlock()
	if pj.running != "" {
		return false
	}
	ctx, cancel := context.WithCancel(context.Background())
	pj.running, pj.stop = id, cancel
	pj.wg.Go(func() {
		defer cancel()
		j, err := jobs.Run(ctx, id, nil)
		pj.mu.Lock()
		pj.running, pj.stop = "", nil
		pj.mu.Unlock()
		switch {
		case err != nil:
			log.Warn("recover: job stopped", slog.String("job", id), slog.Any("error", err))
		case j != nil:
			log.Info("recover: job ended", slog.String("job", id), slog.String("state", string(j.State)),
				slog.Int("replayed", j.Counts.Replayed), slog.Int("skipped", j.Counts.Skipped), slog.Int("missing", j.Counts.Missing))
		}
	})
	return true
}

// busy returns the id of the job running, if any.
func (pj *pageJobs) busy() string {
	pj.mu.Lock()
	defer pj.mu.Unlock()
	return pj.running
}

// close stops the running job (it is left interrupted) and waits for it.
func (pj *pageJobs) close() {
	pj.mu.Lock()
	if pj.stop != nil {
		pj.stop()
	}
	pj.mu.Unlock()
	pj.wg.Wait()
}

// Close stops the recovery job the page runs, if any (left interrupted,
// resumable), and waits for it to save its cursor.
func (p *Page) Close() { p.jobs.close() }

// JobView is one recovery job as the recover panel shows it.
type JobView struct {
	*recovery.Job
	// Done is how many selected records it dealt with; Percent of Total.
	Done    int `json:"done"`
	Percent int `json:"percent"`
	// ETA is the time left at its pace so far ("" when unknown or over).
	ETA string `json:"eta,omitempty"`
	// Window describes its filter.
	Window string `json:"window"`
	// Cancellable: it is running or interrupted.
	Cancellable bool `json:"cancellable"`
}

// jobView is the view of j at now.
func jobView(j *recovery.Job, now time.Time) JobView {
	v := JobView{Job: j, Done: j.Counts.Done(),
		Cancellable: j.State == recovery.StateRunning || j.State == recovery.StateInterrupted}
	if j.Counts.Total > 0 {
		v.Percent = min(100, 100*v.Done/j.Counts.Total)
	}
	if elapsed := now.Sub(j.CreatedAt); j.State == recovery.StateRunning && v.Done > 0 && elapsed > 0 && j.Counts.Counted {
		pace := float64(v.Done) / elapsed.Seconds()
		v.ETA = (time.Duration(float64(max(j.Counts.Total-v.Done, 0)) / pace * float64(time.Second))).Round(time.Second).String()
	}
	f := j.Filter
	var b strings.Builder
	b.WriteString(f.Since.Local().Format("2006-01-02 15:04:05") + " – " + f.Until.Local().Format("15:04:05"))
	sts := make([]string, len(f.Statuses))
	for i, s := range f.Statuses {
		sts[i] = string(s)
	}
	b.WriteString(", " + strings.Join(sts, ","))
	if f.Tenant != "" {
		b.WriteString(", tenant " + f.Tenant)
	}
	if f.Handler != "" {
		b.WriteString(", handler " + f.Handler)
	}
	if j.Rate > 0 {
		b.WriteString(", at most " + strconv.FormatFloat(j.Rate, 'g', -1, 64) + "/s per target")
	}
	v.Window = b.String()
	return v
}

// JobAnswer is the page's answer to a recover start or cancel.
type JobAnswer struct {
	Outcome string   `json:"outcome"` // started, cancelled, error
	Message string   `json:"message"`
	Job     *JobView `json:"job,omitempty"`
}

// jobsList reads the newest jobs.
func (p *Page) jobsList(ctx context.Context) ([]JobView, error) {
	if p.Jobs == nil {
		return []JobView{}, nil
	}
	js, err := p.Jobs.List(ctx, MaxPageJobs)
	if err != nil {
		return nil, err
	}
	now := p.now()
	out := make([]JobView, 0, len(js))
	for _, j := range js {
		out = append(out, jobView(j, now))
	}
	return out, nil
}

// recover serves POST PagePath+"recover" (start a job: the form's since,
// until, status, tenant, handler and rate, read as `hookwall recover`
// reads its flags) and POST PagePath+"recover/cancel" (the form's id), with
// the control header pause and resume require.
func (p *Page) recover(w http.ResponseWriter, r *http.Request, cancel bool) {
	answer, ok := openAction(w, r, p.Jobs != nil, "recovery jobs are not available", func(m string) JobAnswer { return JobAnswer{Outcome: "error", Message: m} })
	if !ok {
		return
	}
	ctx := r.Context()
	if cancel {
		id := r.PostFormValue("id")
		if !recovery.ValidID(id) {
			answer(http.StatusBadRequest, JobAnswer{Outcome: "error", Message: "not a job id: " + truncateText(id, 80)})
			return
		}
		j, changed, err := p.Jobs.Cancel(ctx, id)
		switch {
		case errors.Is(err, recovery.ErrNotFound):
			answer(http.StatusNotFound, JobAnswer{Outcome: "error", Message: "no job " + id})
			return
		case err != nil:
			answer(http.StatusServiceUnavailable, JobAnswer{Outcome: "error", Message: err.Error()})
			return
		}
		v := jobView(j, p.now())
		if !changed {
			answer(http.StatusConflict, JobAnswer{Outcome: "error", Message: "job " + id + " is " + string(j.State) + ": nothing to cancel", Job: &v})
			return
		}
		p.Log.LogAttrs(ctx, slog.LevelInfo, "recover cancelled", slog.String("job", id))
		answer(http.StatusOK, JobAnswer{Outcome: "cancelled", Message: "job " + id + " cancelled: it stops within a second; `hookwall recover --resume " + id + "` goes on", Job: &v})
		return
	}
	f, err := recovery.ParseFilter(recovery.Words{Since: r.PostFormValue("since"), Until: r.PostFormValue("until"),
		Status: r.PostFormValue("status"), Tenant: r.PostFormValue("tenant"), Handler: r.PostFormValue("handler")}, p.now())
	if err != nil {
		answer(http.StatusBadRequest, JobAnswer{Outcome: "error", Message: err.Error()})
		return
	}
	var rate float64
	if s := strings.TrimSpace(r.PostFormValue("rate")); s != "" {
		if rate, err = strconv.ParseFloat(s, 64); err != nil || rate < 0 || rate > 1e6 {
			answer(http.StatusBadRequest, JobAnswer{Outcome: "error", Message: "rate " + strconv.Quote(truncateText(s, 40)) + ": want a number of events per second per target, 0 or more (0: the targets' rate)"})
			return
		}
	}
	if id := p.jobs.busy(); id != "" {
		answer(http.StatusConflict, JobAnswer{Outcome: "error", Message: "job " + id + " is running: wait for it, or cancel it, first"})
		return
	}
	j, err := p.Jobs.Create(ctx, f, rate, RecoverBy)
	if err != nil {
		answer(http.StatusServiceUnavailable, JobAnswer{Outcome: "error", Message: err.Error()})
		return
	}
	if !p.jobs.start(p.Jobs, j.ID, p.Log) {
		answer(http.StatusConflict, JobAnswer{Outcome: "error", Message: "another job started meanwhile; job " + j.ID + " is left interrupted (`hookwall recover --resume " + j.ID + "`)"})
		return
	}
	p.Log.LogAttrs(ctx, slog.LevelInfo, "recover started", slog.String("job", j.ID))
	v := jobView(j, p.now())
	answer(http.StatusAccepted, JobAnswer{Outcome: "started", Message: "job " + j.ID + " started: " + v.Window, Job: &v})
}
