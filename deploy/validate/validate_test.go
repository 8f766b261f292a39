package main

import (
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The real overlays render and pass every check.
func TestOverlaysPass(t *testing.T) {
	for _, dir := range []string{
		"../kubernetes/base",
		"../kubernetes/overlays/example",
		"../kubernetes/overlays/example-plain-sidecar",
		"../kubernetes/overlays/example-keda",
		"testdata/client-rack-downward",
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
		{"testdata/clusterrole-wide", "grants get on nodes"},
		{"testdata/clusterrole-wide", "subject ServiceAccount orders/consumer is no ServiceAccount of this rendering"},
		{"testdata/networkpolicy-open", "from[0]: no pod selector (or an empty one)"},
		{"testdata/networkpolicy-open", "no ports: every port is open"},
		{"testdata/networkpolicy-missing", "no NetworkPolicy selects its pods"},
		{"testdata/keda-misread", `threshold is "10": it must be "1"`},
		{"testdata/keda-misread", "stabilizationWindowSeconds must be 0"},
		{"testdata/keda-misread", `scaleTargetRef.name "orders-consumr" names no StatefulSet`},
		{"testdata/keda-misspelt", `unknown field "spec.triggers[0].metricTyp"`},
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
	statefulSet := func(dir string) *appsv1.StatefulSet { return renderedStatefulSet(t, dir) }
	native := statefulSet("../kubernetes/overlays/example").Spec.Template.Spec
	if len(native.InitContainers) != 2 || native.InitContainers[0].Name != "sidecar" ||
		native.InitContainers[0].RestartPolicy == nil ||
		*native.InitContainers[0].RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Errorf("native: want the sidecar as an init container with restartPolicy Always, got %+v", native.InitContainers)
	}
	plain := statefulSet("../kubernetes/overlays/example-plain-sidecar").Spec.Template.Spec
	if len(plain.InitContainers) != 1 || plain.InitContainers[0].Name != "client-rack" ||
		len(plain.Containers) != 2 || plain.Containers[1].Name != "sidecar" {
		t.Fatalf("plain: want init containers [client-rack] and containers [consumer sidecar], got %d and %d",
			len(plain.InitContainers), len(plain.Containers))
	}
	if rp := plain.Containers[1].RestartPolicy; rp != nil {
		t.Errorf("plain: the sidecar container keeps restartPolicy %v", *rp)
	}
}

func renderedStatefulSet(t *testing.T, dir string) *appsv1.StatefulSet {
	t.Helper()
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

// Both examples run components/client-rack: RBAC exactly get on nodes, bound to the pod's own
// ServiceAccount in the pod's namespace; the init container has the node name and the only
// token, and writes the file the consumer reads as its second --config.
func TestClientRack(t *testing.T) {
	for _, dir := range []string{"../kubernetes/overlays/example", "../kubernetes/overlays/example-plain-sidecar"} {
		objs, errs := Render(dir)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		var roles []*rbacv1.ClusterRole
		var bindings []*rbacv1.ClusterRoleBinding
		for _, o := range objs {
			switch v := o.Obj.(type) {
			case *rbacv1.ClusterRole:
				roles = append(roles, v)
			case *rbacv1.ClusterRoleBinding:
				bindings = append(bindings, v)
			case *rbacv1.Role, *rbacv1.RoleBinding:
				t.Errorf("%s: unexpected %s", dir, o)
			}
		}
		want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"}}}
		if len(roles) != 1 || !reflect.DeepEqual(roles[0].Rules, want) || roles[0].AggregationRule != nil {
			t.Fatalf("%s: want one ClusterRole with rules %+v, got %+v", dir, want, roles)
		}
		set := renderedStatefulSet(t, dir)
		spec := set.Spec.Template.Spec
		wantSubject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: spec.ServiceAccountName, Namespace: set.Namespace}}
		if len(bindings) != 1 || bindings[0].RoleRef.Name != roles[0].Name ||
			!reflect.DeepEqual(bindings[0].Subjects, wantSubject) || spec.ServiceAccountName == "" {
			t.Fatalf("%s: want one ClusterRoleBinding of %s to %+v, got %+v", dir, roles[0].Name, wantSubject, bindings)
		}
		if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
			t.Errorf("%s: automountServiceAccountToken must stay false (only the init container gets a token)", dir)
		}
		var tokenVolumes []string
		for _, v := range spec.Volumes {
			if v.Projected != nil {
				for _, src := range v.Projected.Sources {
					if src.ServiceAccountToken != nil {
						tokenVolumes = append(tokenVolumes, v.Name)
					}
				}
			}
		}
		if len(tokenVolumes) != 1 {
			t.Fatalf("%s: want one projected token volume, got %v", dir, tokenVolumes)
		}
		var rack *corev1.Container
		for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
			mountsToken := false
			for _, m := range c.VolumeMounts {
				mountsToken = mountsToken || m.Name == tokenVolumes[0]
			}
			if c.Name == "client-rack" {
				rack = &c
			}
			if mountsToken != (c.Name == "client-rack") {
				t.Errorf("%s: container %s mounts the token: %v; only client-rack may", dir, c.Name, mountsToken)
			}
		}
		if rack == nil || rack.RestartPolicy != nil {
			t.Fatalf("%s: want a run-to-completion init container client-rack", dir)
		}
		nodeName := false
		for _, e := range rack.Env {
			nodeName = nodeName || (e.Name == "NODE_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
				e.ValueFrom.FieldRef.FieldPath == "spec.nodeName")
		}
		if !nodeName {
			t.Errorf("%s: client-rack needs NODE_NAME from spec.nodeName", dir)
		}
		script := strings.Join(rack.Args, "\n")
		for _, want := range []string{"/etc/mooring-rack/client-rack.toml", "topology\\.kubernetes\\.io\\/zone", "exit 0"} {
			if !strings.Contains(script, want) {
				t.Errorf("%s: the client-rack script lacks %q", dir, want)
			}
		}
		consumer := spec.Containers[0]
		wantArgs := []string{"--config", "/etc/mooring/consumer.toml", "--config", "/etc/mooring-rack/client-rack.toml"}
		if consumer.Name != "consumer" || !reflect.DeepEqual(consumer.Args, wantArgs) {
			t.Errorf("%s: consumer args %v, want %v", dir, consumer.Args, wantArgs)
		}
	}
}

// components/client-rack-downward: the consumer's MOORING__CLIENT_RACK from the pod's zone label,
// nothing else (no init container, no RBAC).
func TestClientRackDownward(t *testing.T) {
	dir := "testdata/client-rack-downward"
	objs, errs := Render(dir)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, o := range objs {
		switch o.Obj.(type) {
		case *corev1.ServiceAccount, *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding:
			t.Errorf("%s: unexpected %s", dir, o)
		}
	}
	spec := renderedStatefulSet(t, dir).Spec.Template.Spec
	if len(spec.InitContainers) != 1 {
		t.Errorf("%s: want only the sidecar as an init container, got %d", dir, len(spec.InitContainers))
	}
	var found bool
	for _, e := range spec.Containers[0].Env {
		if e.Name == "MOORING__CLIENT_RACK" {
			found = e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
				e.ValueFrom.FieldRef.FieldPath == "metadata.labels['topology.kubernetes.io/zone']"
		}
	}
	if !found {
		t.Errorf("%s: the consumer lacks MOORING__CLIENT_RACK from metadata.labels['topology.kubernetes.io/zone']", dir)
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

// The rendered policy admits Prometheus pods of namespace monitoring on the metrics port, and
// nothing else: kustomize's labels must not have reached the peer's selector (they would select
// no Prometheus, and every scrape would fail).
func TestNetworkPolicyAdmitsPrometheusOnly(t *testing.T) {
	objs, errs := Render("../kubernetes/overlays/example")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var policy *networkingv1.NetworkPolicy
	for _, o := range objs {
		if p, ok := o.Obj.(*networkingv1.NetworkPolicy); ok {
			policy = p
		}
	}
	if policy == nil {
		t.Fatal("no NetworkPolicy rendered")
	}
	if len(policy.Spec.Ingress) != 1 || len(policy.Spec.Ingress[0].From) != 1 {
		t.Fatalf("want one rule with one peer, got %+v", policy.Spec.Ingress)
	}
	rule := policy.Spec.Ingress[0]
	peer := rule.From[0]
	selects := func(sel *metav1.LabelSelector, set labels.Set) bool {
		s, err := metav1.LabelSelectorAsSelector(sel)
		return err == nil && s.Matches(set)
	}
	prometheus := labels.Set{"app.kubernetes.io/name": "prometheus"}
	if !selects(peer.PodSelector, prometheus) || !selects(peer.NamespaceSelector, labels.Set{"kubernetes.io/metadata.name": "monitoring"}) {
		t.Errorf("the peer does not admit Prometheus in monitoring: %+v", peer)
	}
	if selects(peer.PodSelector, labels.Set{"app.kubernetes.io/name": "grafana"}) || selects(peer.NamespaceSelector, labels.Set{"kubernetes.io/metadata.name": "orders"}) {
		t.Errorf("the peer admits more than Prometheus in monitoring: %+v", peer)
	}
	if len(rule.Ports) != 1 || rule.Ports[0].Port == nil || rule.Ports[0].Port.StrVal != "metrics" {
		t.Errorf("want the metrics port only, got %+v", rule.Ports)
	}
}
