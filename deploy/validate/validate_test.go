package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// The real overlays render and pass every check.
func TestOverlaysPass(t *testing.T) {
	for _, dir := range []string{
		"../kubernetes/base",
		"../kubernetes/overlays/example",
		"../kubernetes/overlays/example-plain-sidecar",
	} {
		if errs := Validate(dir, io.Discard); len(errs) > 0 {
			t.Errorf("%s: %v", dir, errs)
		}
	}
}

// Broken manifests in testdata/ must fail, each with a message naming what is wrong.
func TestBrokenManifestsFail(t *testing.T) {
	for _, c := range []struct{ dir, want string }{
		{"testdata/misspelt-field", `unknown field "spec.template.spec.terminationGracePeriodSecond"`},
		{"testdata/wrong-case", `unknown field "spec.ServiceName"`},
		{"testdata/podmonitor-misspelt", `unknown field "spec.podMetricEndpoints"`},
		{"testdata/unknown-kind", "no Go type for monitoring.coreos.com/v1/ServiceMonitr"},
		{"testdata/deployment", "not a Deployment"},
	} {
		errs := Validate(c.dir, io.Discard)
		if len(errs) == 0 {
			t.Errorf("%s: passed, want an error containing %q", c.dir, c.want)
			continue
		}
		var all []string
		for _, e := range errs {
			all = append(all, e.Error())
		}
		joined := strings.Join(all, "\n")
		if !strings.Contains(joined, c.want) {
			t.Errorf("%s: errors\n%s\ndo not contain %q", c.dir, joined, c.want)
		}
		t.Logf("%s fails as it must:\n%s", c.dir, joined)
	}
}

// The native variant runs the sidecar as an init container with restartPolicy Always; the
// plain-sidecar variant moves it into the containers without it.
func TestSidecarVariants(t *testing.T) {
	statefulSet := func(dir string) *appsv1.StatefulSet {
		objs, errs := Render(dir)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		for _, o := range objs {
			if s, ok := o.Obj.(*appsv1.StatefulSet); ok {
				return s
			}
		}
		t.Fatalf("%s: no StatefulSet rendered", dir)
		return nil
	}
	native := statefulSet("../kubernetes/overlays/example").Spec.Template.Spec
	if len(native.InitContainers) != 1 || native.InitContainers[0].Name != "sidecar" ||
		native.InitContainers[0].RestartPolicy == nil ||
		*native.InitContainers[0].RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Errorf("native: want the sidecar as an init container with restartPolicy Always, got %+v", native.InitContainers)
	}
	plain := statefulSet("../kubernetes/overlays/example-plain-sidecar").Spec.Template.Spec
	if len(plain.InitContainers) != 0 || len(plain.Containers) != 2 || plain.Containers[1].Name != "sidecar" {
		t.Fatalf("plain: want no init containers and [consumer sidecar], got %d and %d",
			len(plain.InitContainers), len(plain.Containers))
	}
	if rp := plain.Containers[1].RestartPolicy; rp != nil {
		t.Errorf("plain: the sidecar container keeps restartPolicy %v", *rp)
	}
}

// The Grafana dashboards decode strictly into Grafana's schema types.
func TestDashboardsPass(t *testing.T) {
	files, err := filepath.Glob("../../dashboards/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards found: %v", err)
	}
	for _, f := range files {
		if errs := ValidateDashboard(f, io.Discard); len(errs) > 0 {
			t.Errorf("%s: %v", f, errs)
		}
	}
}

// A misspelt field of a panel's Prometheus target fails, naming the field.
func TestBrokenDashboardFails(t *testing.T) {
	errs := ValidateDashboard("testdata/dashboard-misspelt/dashboard.json", io.Discard)
	want := "unexpected field 'legendFormatt'"
	var all []string
	for _, e := range errs {
		all = append(all, e.Error())
	}
	if joined := strings.Join(all, "\n"); !strings.Contains(joined, want) {
		t.Errorf("errors\n%s\ndo not contain %q", joined, want)
	}
}
