// Package control is what an operator does to the targets' shared state:
// pause and resume a handler, a tenant or a target, and read the panel of
// breakers, pauses and held counts. `hookwall pause|resume|targets` and the
// local page's Targets panel both call it, so that each action has one
// meaning wherever it is taken: a pause publishes hookwall.control.paused;
// a resume ends the pause, drains what is held on the scope at the
// target's rate (shared/engine/drain) and publishes hookwall.control.resumed with
// the count released.
package control
