package netpath

import (
	"testing"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// A toxic applied again with the attributes it has is left alone (an update would race with
// its running pipes); any other attribute is a change.
func TestSameAttributes(t *testing.T) {
	lat := &toxics.LatencyToxic{Latency: 200, Jitter: 0}
	for _, c := range []struct {
		toxic any
		attrs string
		same  bool
	}{
		{lat, `{"latency":200,"jitter":0}`, true},
		{lat, `{"latency":300,"jitter":0}`, false},
		{lat, `{"latency":200,"jitter":5}`, false},
		{&toxics.ResetToxic{Timeout: 0}, `{"timeout":0}`, true},
		{&toxics.ResetToxic{Timeout: 10}, `{"timeout":0}`, false},
		{&toxics.TimeoutToxic{Timeout: 0}, `{"timeout":0}`, true},
		{lat, `not json`, false},
	} {
		if got := sameAttributes(c.toxic, c.attrs); got != c.same {
			t.Errorf("sameAttributes(%#v, %s) = %v, want %v", c.toxic, c.attrs, got, c.same)
		}
	}
}
