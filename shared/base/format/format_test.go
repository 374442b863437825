package format

import "testing"

func TestMissingVersionIsThePreviousAndReadable(t *testing.T) {
	for _, f := range Families {
		if Newer(f, 0) || Newer(f, Current(f)-1) || Newer(f, Current(f)) {
			t.Errorf("%s: a missing, previous or current version counts as newer", f)
		}
		if !Newer(f, Current(f)+1) {
			t.Errorf("%s: version %d is not newer than %d", f, Current(f)+1, Current(f))
		}
	}
}

func TestOverrideAndRestore(t *testing.T) {
	restore := Override(Message, MessageVersion+1, 0)
	if Written(Message) != MessageVersion+1 || Known(Message) != MessageVersion {
		t.Errorf("override: written %d known %d", Written(Message), Known(Message))
	}
	inner := Override(Message, 0, MessageVersion+1)
	if Written(Message) != MessageVersion || !Newer(Message, MessageVersion+2) || Newer(Message, MessageVersion+1) {
		t.Errorf("inner override: written %d known %d", Written(Message), Known(Message))
	}
	inner()
	if Written(Message) != MessageVersion+1 {
		t.Errorf("after the inner restore: written %d, want %d", Written(Message), MessageVersion+1)
	}
	restore()
	if Written(Message) != MessageVersion || Known(Message) != MessageVersion || Written(Item) != ItemVersion {
		t.Errorf("after restore: written %d known %d", Written(Message), Known(Message))
	}
}

func TestCountNewer(t *testing.T) {
	before := NewerCount(Event)
	CountNewer(Event)
	if got := NewerCount(Event) - before; got != 1 {
		t.Errorf("counted %d, want 1", got)
	}
}
