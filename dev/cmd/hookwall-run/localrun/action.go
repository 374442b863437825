package localrun

import (
	"encoding/json"
	"net/http"
)

// openAction opens a POST of the page's controls (pause and resume, a
// recovery job and its cancel): it answers the request itself, with failed's
// answer, when the method is not POST, the control header is missing, the
// action is not available (unavailable says why) or the form does not
// parse, and then reports false. Otherwise the form is parsed (its body
// bounded) and answer writes the action's JSON answer.
func openAction[A any](w http.ResponseWriter, r *http.Request, available bool, unavailable string, failed func(string) A) (answer func(int, A), ok bool) {
	answer = func(status int, a A) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(a)
	}
	switch {
	case r.Method != http.MethodPost:
		answer(http.StatusMethodNotAllowed, failed("POST only"))
		return nil, false
	case r.Header.Get(ControlHeader) == "":
		answer(http.StatusForbidden, failed("missing "+ControlHeader+" header"))
		return nil, false
	case !available:
		answer(http.StatusNotImplemented, failed(unavailable))
		return nil, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxControlBody)
	if err := r.ParseForm(); err != nil {
		answer(http.StatusBadRequest, failed("bad form: "+err.Error()))
		return nil, false
	}
	return answer, true
}
