package reports

import (
	"net/url"

	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/store"
)

// storeOf describes the run's store for a report: its prefix included, user information
// removed from the endpoint URL.
func storeOf(run *outcome.Summary) store.Info {
	s := run.Store
	s.Prefix = run.Prefix
	s.Endpoint = redactEndpoint(s.Endpoint)
	return s
}

func redactEndpoint(ep string) string {
	u, err := url.Parse(ep)
	if err != nil || u.User == nil {
		return ep
	}
	u.User = url.User("REDACTED")
	return u.String()
}
