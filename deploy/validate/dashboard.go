package main

// Grafana dashboards: each JSON file is decoded strictly into the dashboard types of the Grafana
// Foundation SDK (github.com/grafana/grafana-foundation-sdk/go, Apache-2.0, generated from
// Grafana's own schemas), with the panel plugins' option types and the Prometheus query type
// registered: an unknown or misspelt field, a wrongly typed value or a missing required field of
// the dashboard, a panel, its options or a target is an error, as Grafana's schema says.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

var registerPlugins sync.Once

// minSchemaVersion is Grafana 11.0's dashboard schemaVersion.
const minSchemaVersion = 39

// ValidateDashboard decodes one dashboard file strictly and prints one line for it.
func ValidateDashboard(path string, w io.Writer) []error {
	registerPlugins.Do(plugins.RegisterDefaultPlugins)
	raw, err := os.ReadFile(path)
	if err != nil {
		return []error{err}
	}
	var d dashboard.Dashboard
	var errs []error
	if err := d.UnmarshalJSONStrict(raw); err != nil {
		// The SDK returns its (possibly empty) error list as an error value.
		var list cog.BuildErrors
		if !errors.As(err, &list) || len(list) > 0 {
			if len(list) > 0 {
				for _, e := range list {
					errs = append(errs, e)
				}
			} else {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) == 0 {
		if d.SchemaVersion < minSchemaVersion {
			errs = append(errs, fmt.Errorf("schemaVersion is not Grafana 11's (>= %d)", minSchemaVersion))
		}
		if d.Uid == nil || *d.Uid == "" {
			errs = append(errs, errors.New("no uid: a re-import would create a second dashboard"))
		}
	}
	if len(errs) == 0 {
		fmt.Fprintf(w, "ok   %s: Grafana dashboard %q, %d top-level panels\n", path, deref(d.Title), len(d.Panels))
	}
	return errs
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
