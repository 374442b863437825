package process

import (
	"errors"
	"fmt"
	"testing"
)

func TestHTTPStatus(t *testing.T) {
	tests := []struct {
		code      int
		wantErr   bool
		permanent bool
	}{
		{200, false, false}, {201, false, false}, {204, false, false}, {299, false, false},
		{408, true, false}, {429, true, false}, {500, true, false}, {502, true, false}, {503, true, false}, {599, true, false},
		{400, true, true}, {401, true, true}, {403, true, true}, {404, true, true}, {409, true, true}, {422, true, true},
		{100, true, true}, {301, true, true}, {302, true, true}, {304, true, true},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			err := HTTPStatus(tc.code)
			if (err != nil) != tc.wantErr || IsPermanent(err) != tc.permanent {
				t.Fatalf("got %v (permanent %v), want error %v, permanent %v", err, IsPermanent(err), tc.wantErr, tc.permanent)
			}
			if err == nil {
				return
			}
			wrapped := fmt.Errorf("team: POST /x: %w", err)
			var se *StatusError
			if !errors.As(wrapped, &se) || se.Code != tc.code {
				t.Errorf("got %v, want a *StatusError with code %d", wrapped, tc.code)
			}
			if IsPermanent(wrapped) != tc.permanent {
				t.Errorf("wrapped: permanent %v, want %v", IsPermanent(wrapped), tc.permanent)
			}
			if want := fmt.Sprintf("status %d", tc.code); se.Error() != want {
				t.Errorf("got message %q, want %q", se.Error(), want)
			}
		})
	}
}
