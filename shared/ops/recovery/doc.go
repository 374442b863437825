// Package recovery runs bulk recovery jobs: it sends every event of a
// window that ended FAILED (or DEAD, or COMPENSATED) back to be processed,
// as `hookwall recover` asks, at each target's rate, and keeps the job's
// state in the events table so that it survives the process that runs it.
//
// A job is one item, pk = "JOB#<id>", sk = "JOB" (see [Job]): its filter
// (a receivedAt window, states, tenant, handler), its rate cap, its state
// (running, interrupted, cancelled, done), its cursor and its counts. A
// second item, pk = "JOBS", sk = <id>, lists the jobs newest first ([Jobs.List]).
// Both expire (TTL) [DefaultRetain] after the job's last change.
//
// [Jobs.Run] takes the job under a lease (one process at a time), counts
// what the filter selects once (for the progress and the ETA), then pages
// through the table with a bounded Scan (PageSize items a page, the page's
// matches processed in order; nothing is held in memory beyond a page)
// starting at the job's cursor. Each record is sent back with
// [store.Table.Replay] restricted to the job's states (ReplayOptions.From):
// a fenced write pinned to the version and state read, so a record that
// is no longer FAILED (SUCCEEDED since, or replayed by another run) is
// skipped and nothing is ever replayed twice. Before each replay the
// record's target gives a token ([Limiter], the gate's per-target bucket,
// and the job's own rate cap). The replayed records are enqueued in
// batches, one hookwall.event.recovered operational event each, and the
// cursor and counts are saved after each batch (at least once a second),
// fenced on the lease.
//
// So a job is resumable (Ctrl-C saves the cursor and leaves it
// interrupted; a crash leaves it running under a lease that runs out),
// cancellable from anywhere ([Jobs.Cancel]: the runner stops at its next
// save, and a wait for a token saves at least once a second, so nothing is
// replayed more than a second after a cancel; a cancelled job can be
// resumed), and idempotent (a second run
// of the same window finds nothing in the states selected, and a record
// replayed just before a crash is no longer FAILED when the job resumes).
//
// A job runs in the foreground ([Jobs.Run], `hookwall recover`) or in the
// background: [Jobs.Detach] (`hookwall recover --detach`) marks it
// detached and flags its list entry, and each sweep run
// ([Jobs.Continue], called by the sweeper after its own work) continues
// the detached jobs, oldest first, under their lease, for the sweeper's
// time budget: no record is started and no token waited for past it, the
// cursor is saved, and the job stays running without a lease for the next
// run. A cancel stops it at its next save whoever runs it; a job found
// done or cancelled leaves the flagged list.
package recovery
