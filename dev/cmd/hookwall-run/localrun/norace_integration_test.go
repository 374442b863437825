//go:build integration && !race

package localrun

// raceEnabled says the tests run with -race, so the runner they build does too.
const raceEnabled = false
