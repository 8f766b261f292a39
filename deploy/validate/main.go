// Command validate renders kustomizations and checks every object they produce, offline.
//
//	go run . DIR|DASHBOARD.json [...]
//
// For each DIR (a kustomization: a base, an overlay) it renders the objects with kustomize's own
// Go API (sigs.k8s.io/kustomize/api/krusty, on the disk file system, no plugins, no network) and
// decodes each one strictly into the official Go type of its kind: k8s.io/api for the core kinds,
// the Prometheus Operator's monitoring/v1 types for PodMonitor and PrometheusRule, KEDA's v1alpha1
// types for ScaledObject. Strictly means
// an unknown field, a misspelt or wrongly capitalised field, a duplicate field or a value of the
// wrong type is an error, and so is a kind this program has no type for. Then it checks what
// the schema cannot see: selectors match the pod labels they are meant to select, named ports
// exist, referenced ConfigMaps and Services are part of the output, and the Mooring rules for the
// consumer's StatefulSet (see deploy/README.md). An argument ending in .json is a Grafana
// dashboard, decoded strictly into Grafana's schema types (dashboard.go). One line per object;
// exit status 1 on any error.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	kedav1alpha1 "github.com/kedacore/keda/v2/apis/keda/v1alpha1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// kinds maps "apiVersion/kind" to a fresh value of its Go type. A kind missing here is an error:
// nothing passes unchecked.
var kinds = map[string]func() any{
	"v1/ConfigMap":                                    func() any { return &corev1.ConfigMap{} },
	"v1/Service":                                      func() any { return &corev1.Service{} },
	"v1/ServiceAccount":                               func() any { return &corev1.ServiceAccount{} },
	"v1/Secret":                                       func() any { return &corev1.Secret{} },
	"apps/v1/StatefulSet":                             func() any { return &appsv1.StatefulSet{} },
	"apps/v1/Deployment":                              func() any { return &appsv1.Deployment{} },
	"policy/v1/PodDisruptionBudget":                   func() any { return &policyv1.PodDisruptionBudget{} },
	"networking.k8s.io/v1/NetworkPolicy":              func() any { return &networkingv1.NetworkPolicy{} },
	"rbac.authorization.k8s.io/v1/Role":               func() any { return &rbacv1.Role{} },
	"rbac.authorization.k8s.io/v1/RoleBinding":        func() any { return &rbacv1.RoleBinding{} },
	"rbac.authorization.k8s.io/v1/ClusterRole":        func() any { return &rbacv1.ClusterRole{} },
	"rbac.authorization.k8s.io/v1/ClusterRoleBinding": func() any { return &rbacv1.ClusterRoleBinding{} },
	"monitoring.coreos.com/v1/PodMonitor":             func() any { return &monitoringv1.PodMonitor{} },
	"monitoring.coreos.com/v1/PrometheusRule":         func() any { return &monitoringv1.PrometheusRule{} },
	"keda.sh/v1alpha1/ScaledObject":                   func() any { return &kedav1alpha1.ScaledObject{} },
}

// Object is one rendered, decoded object.
type Object struct {
	Key  string // apiVersion/kind
	Name string
	Obj  any
}

func (o Object) String() string {
	return fmt.Sprintf("%s %s", o.Key, o.Name)
}

// Render runs kustomize on dir and decodes every object strictly. Decoding errors are returned
// per object, so one run reports all of them.
func Render(dir string) ([]Object, []error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, []error{fmt.Errorf("%s: kustomize: %w", dir, err)}
	}
	var objs []Object
	var errs []error
	for _, r := range m.Resources() {
		doc, err := r.AsYAML()
		name := r.GetName()
		if ns := r.GetNamespace(); ns != "" {
			name = ns + "/" + name
		}
		key := r.GetApiVersion() + "/" + r.GetKind()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", key, name, err))
			continue
		}
		obj, err := DecodeStrict(key, doc)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", key, name, err))
			continue
		}
		objs = append(objs, Object{Key: key, Name: name, Obj: obj})
	}
	return objs, errs
}

// DecodeStrict decodes one YAML document into the Go type of key ("apiVersion/kind"): duplicate
// keys, unknown fields and fields in the wrong case are errors (sigs.k8s.io/json is the
// case-sensitive decoder the API server itself uses; encoding/json would accept "Replicas").
func DecodeStrict(key string, doc []byte) (any, error) {
	mk, ok := kinds[key]
	if !ok {
		known := make([]string, 0, len(kinds))
		for k := range kinds {
			known = append(known, k)
		}
		sort.Strings(known)
		return nil, fmt.Errorf("no Go type for %s (known: %s)", key, strings.Join(known, ", "))
	}
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, err
	}
	obj := mk()
	strictErrs, err := kjson.UnmarshalStrict(j, obj)
	if err != nil {
		return nil, err
	}
	if len(strictErrs) > 0 {
		msgs := make([]string, len(strictErrs))
		for i, e := range strictErrs {
			msgs[i] = e.Error()
		}
		return nil, fmt.Errorf("%s", strings.Join(msgs, "; "))
	}
	return obj, nil
}

// Check runs the cross-object and Mooring checks over one rendering.
func Check(objs []Object) []error {
	var errs []error
	fail := func(o Object, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", o, fmt.Sprintf(format, args...)))
	}
	configMaps := map[string]bool{}
	services := map[string]bool{}
	var sets []*appsv1.StatefulSet
	for _, o := range objs {
		switch v := o.Obj.(type) {
		case *corev1.ConfigMap:
			configMaps[v.Name] = true
		case *corev1.Service:
			services[v.Name] = true
		case *appsv1.StatefulSet:
			sets = append(sets, v)
		}
	}
	// podLabels of every StatefulSet, for the selectors of PDBs and PodMonitors.
	matchesAPod := func(sel *metav1.LabelSelector) (*appsv1.StatefulSet, error) {
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return nil, err
		}
		if s.Empty() {
			return nil, fmt.Errorf("empty selector selects every pod of the namespace")
		}
		for _, set := range sets {
			if s.Matches(labels.Set(set.Spec.Template.Labels)) {
				return set, nil
			}
		}
		return nil, fmt.Errorf("selector %q matches no pod template here", s.String())
	}
	guarded := map[string]bool{}
	for _, o := range objs {
		switch v := o.Obj.(type) {
		case *appsv1.Deployment:
			fail(o, "a Mooring consumer runs as a StatefulSet, not a Deployment (stable pod names give stable group.instance.id; see deploy/README.md)")
		case *corev1.Secret:
			fail(o, "Secrets are referenced, never committed: create it outside the repository")
		case *appsv1.StatefulSet:
			for _, e := range checkStatefulSet(v, configMaps, services) {
				fail(o, "%s", e)
			}
		case *policyv1.PodDisruptionBudget:
			if _, err := matchesAPod(v.Spec.Selector); err != nil {
				fail(o, "spec.selector: %v", err)
			}
		case *networkingv1.NetworkPolicy:
			set, err := matchesAPod(&v.Spec.PodSelector)
			if err != nil {
				fail(o, "spec.podSelector: %v", err)
				continue
			}
			guarded[set.Name] = true
			for _, e := range checkNetworkPolicy(v, set) {
				fail(o, "%s", e)
			}
		case *monitoringv1.PodMonitor:
			set, err := matchesAPod(&v.Spec.Selector)
			if err != nil {
				fail(o, "spec.selector: %v", err)
				continue
			}
			for i, ep := range v.Spec.PodMetricsEndpoints {
				if ep.Port == nil || !hasPort(set.Spec.Template.Spec, *ep.Port) {
					fail(o, "spec.podMetricsEndpoints[%d].port names no container port of %s", i, set.Name)
				}
			}
		case *kedav1alpha1.ScaledObject:
			for _, e := range checkScaledObject(v, sets) {
				fail(o, "%s", e)
			}
		case *monitoringv1.PrometheusRule:
			if len(v.Spec.Groups) == 0 {
				fail(o, "no rule groups")
			}
			for _, g := range v.Spec.Groups {
				for _, r := range g.Rules {
					if r.Expr.String() == "" {
						fail(o, "group %s: a rule without expr", g.Name)
					}
					if (r.Alert == "") == (r.Record == "") {
						fail(o, "group %s: each rule has exactly one of alert and record", g.Name)
					}
				}
			}
		}
	}
	for _, set := range sets {
		if !guarded[set.Name] {
			errs = append(errs, fmt.Errorf("apps/v1/StatefulSet %s: no NetworkPolicy selects its pods: the sidecar's metrics listener is open to the whole cluster network", set.Name))
		}
	}
	return append(errs, checkRBAC(objs)...)
}

// instanceIDEnv is the consumer's environment override of group.instance.id.
const instanceIDEnv = "MOORING__GROUP_INSTANCE_ID"

func checkStatefulSet(s *appsv1.StatefulSet, configMaps, services map[string]bool) []string {
	var out []string
	spec := s.Spec.Template.Spec
	if s.Spec.Selector == nil {
		out = append(out, "spec.selector missing")
	} else if sel, err := metav1.LabelSelectorAsSelector(s.Spec.Selector); err != nil || !sel.Matches(labels.Set(s.Spec.Template.Labels)) {
		out = append(out, "spec.selector does not match the pod template's labels")
	}
	if s.Spec.ServiceName != "" && !services[s.Spec.ServiceName] {
		out = append(out, fmt.Sprintf("spec.serviceName %q is no Service of this rendering", s.Spec.ServiceName))
	}
	if t := s.Spec.UpdateStrategy.Type; t != "" && t != appsv1.RollingUpdateStatefulSetStrategyType {
		out = append(out, fmt.Sprintf("spec.updateStrategy.type is %s; RollingUpdate replaces one pod at a time", t))
	}
	if spec.TerminationGracePeriodSeconds == nil {
		out = append(out, "terminationGracePeriodSeconds unset (the default 30 s is not derived from the consumer's shutdown timeouts)")
	}
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil && !configMaps[v.ConfigMap.Name] {
			out = append(out, fmt.Sprintf("volume %s: ConfigMap %q is no ConfigMap of this rendering", v.Name, v.ConfigMap.Name))
		}
	}
	all := append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
	instanceIDs := 0
	for _, c := range all {
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
			out = append(out, fmt.Sprintf("container %s: needs cpu and memory requests and a memory limit", c.Name))
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef == nil && e.ValueFrom.ConfigMapKeyRef != nil && !configMaps[e.ValueFrom.ConfigMapKeyRef.Name] {
				out = append(out, fmt.Sprintf("container %s env %s: ConfigMap %q is no ConfigMap of this rendering", c.Name, e.Name, e.ValueFrom.ConfigMapKeyRef.Name))
			}
			if e.Name == instanceIDEnv {
				instanceIDs++
				if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.name" {
					out = append(out, fmt.Sprintf("container %s: %s must come from the pod's name (valueFrom.fieldRef.fieldPath: metadata.name)", c.Name, instanceIDEnv))
				}
			}
		}
		for _, p := range []*corev1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
			// The kubelet resolves a probe's named port among the probed container's own ports.
			if p != nil && p.HTTPGet != nil && p.HTTPGet.Port.StrVal != "" && !containerHasPort(c, p.HTTPGet.Port.StrVal) {
				out = append(out, fmt.Sprintf("container %s: probe port %q names none of its own ports", c.Name, p.HTTPGet.Port.StrVal))
			}
			if p != nil && p.TCPSocket != nil && p.TCPSocket.Port.StrVal != "" && !containerHasPort(c, p.TCPSocket.Port.StrVal) {
				out = append(out, fmt.Sprintf("container %s: probe port %q names none of its own ports", c.Name, p.TCPSocket.Port.StrVal))
			}
		}
	}
	if instanceIDs == 0 {
		out = append(out, "no container sets "+instanceIDEnv+" (static membership needs the pod's name as group.instance.id)")
	}
	probed := false
	for _, c := range spec.Containers {
		if c.LivenessProbe != nil && c.ReadinessProbe != nil && c.StartupProbe != nil {
			probed = true
		}
	}
	if !probed {
		out = append(out, "no container has startup, liveness and readiness probes")
	}
	return out
}

// checkNetworkPolicy: the policy governs ingress, admits only named peers (an empty peer list
// or an empty selector admits the whole cluster) and only on ports the pods have.
func checkNetworkPolicy(p *networkingv1.NetworkPolicy, set *appsv1.StatefulSet) []string {
	var out []string
	ingress := false
	for _, t := range p.Spec.PolicyTypes {
		ingress = ingress || t == networkingv1.PolicyTypeIngress
	}
	if !ingress {
		out = append(out, "spec.policyTypes lacks Ingress: the pods stay open to the cluster network")
	}
	for i, rule := range p.Spec.Ingress {
		if len(rule.From) == 0 {
			out = append(out, fmt.Sprintf("spec.ingress[%d]: no from: every peer is admitted", i))
		}
		for j, peer := range rule.From {
			if peer.IPBlock == nil && (peer.PodSelector == nil || isEmpty(peer.PodSelector)) {
				out = append(out, fmt.Sprintf("spec.ingress[%d].from[%d]: no pod selector (or an empty one): every pod of the namespaces is admitted", i, j))
			}
		}
		if len(rule.Ports) == 0 {
			out = append(out, fmt.Sprintf("spec.ingress[%d]: no ports: every port is open to its peers", i))
		}
		for j, port := range rule.Ports {
			if port.Port == nil || (port.Port.StrVal != "" && !hasPort(set.Spec.Template.Spec, port.Port.StrVal)) {
				out = append(out, fmt.Sprintf("spec.ingress[%d].ports[%d] names no container port of %s", i, j, set.Name))
			}
		}
	}
	return out
}

func isEmpty(sel *metav1.LabelSelector) bool {
	return len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0
}

func hasPort(spec corev1.PodSpec, name string) bool {
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		if containerHasPort(c, name) {
			return true
		}
	}
	return false
}

func containerHasPort(c corev1.Container, name string) bool {
	for _, p := range c.Ports {
		if p.Name == name {
			return true
		}
	}
	return false
}

// Validate renders and checks one kustomization, printing one line per object.
func Validate(dir string, w io.Writer) []error {
	objs, errs := Render(dir)
	for _, o := range objs {
		fmt.Fprintf(w, "ok   %s: %s\n", dir, o)
	}
	return append(errs, Check(objs)...)
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: validate KUSTOMIZATION_DIR|DASHBOARD.json [...]")
		os.Exit(2)
	}
	failed := 0
	for _, dir := range os.Args[1:] {
		validate := Validate
		if strings.HasSuffix(dir, ".json") {
			validate = ValidateDashboard
		}
		for _, e := range validate(dir, os.Stdout) {
			fmt.Fprintf(os.Stdout, "FAIL %s: %v\n", dir, e)
			failed++
		}
	}
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "validate: %d error(s)\n", failed)
		os.Exit(1)
	}
}
