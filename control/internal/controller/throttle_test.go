package controller

import (
	"testing"
	"time"
)

func TestThrottle(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	th := newThrottle(5 * time.Second)
	steps := []struct {
		name string
		at   time.Time
		want time.Duration // wait() at `at`
		run  bool          // then a repair runs at at+want
	}{
		{"first change: at once", ms(0), 0, true},
		{"next within the hold waits for it", ms(50), 50 * time.Millisecond, true},
		{"hold doubled to 200 ms", ms(100), 200 * time.Millisecond, true},
		{"then 400 ms", ms(300), 400 * time.Millisecond, true},
		{"after the hold has passed: at once", ms(5000), 0, true},
		{"quiet for 10 s resets the hold", ms(15001), 0, true},
		{"back to 100 ms", ms(15001), 100 * time.Millisecond, false},
	}
	for _, s := range steps {
		if got := th.wait(s.at); got != s.want {
			t.Fatalf("%s: wait = %v, want %v", s.name, got, s.want)
		}
		if s.run {
			th.ran(s.at.Add(s.want))
		}
	}
	// The hold stops growing at max.
	th = newThrottle(5 * time.Second)
	now := t0
	for i := 0; i < 20; i++ {
		now = now.Add(th.wait(now))
		th.ran(now)
	}
	if th.hold != th.max {
		t.Fatalf("hold %v after a long burst, want max %v", th.hold, th.max)
	}
	// Off: every repair at once.
	th = newThrottle(-1)
	th.ran(t0)
	if d := th.wait(t0); d != 0 {
		t.Fatalf("disabled throttle waits %v", d)
	}
}
