// Package audit is the read-only view of one event that operators inspect:
// its record (the stored payload included, as JSON), the journal entries of
// its current claim (forward steps and the compensator's "$undo:" steps),
// its history of transitions, the outside calls its handlers made and the
// deliveries of it that reached the table. The receiver's events API
// (GET /events/{provider}/{tenant}/{key}) serves it as JSON and the hookwall
// CLI (`hookwall events get`) prints it, so both show the same thing.
package audit
