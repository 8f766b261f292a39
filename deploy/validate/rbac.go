package main

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// The RBAC a Mooring consumer's pods may hold: components/client-rack's init container reads its
// own Node's zone label, one GET, so a ClusterRole grants get on nodes and nothing else. The
// bindings and the StatefulSet's serviceAccountName must refer to objects of the same rendering
// (a typo there is a pod that cannot start or an init container refused with 403).
func checkRBAC(objs []Object) []error {
	var errs []error
	fail := func(o Object, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", o, fmt.Sprintf(format, args...)))
	}
	accounts := map[string]bool{} // namespace/name
	clusterRoles := map[string]bool{}
	for _, o := range objs {
		switch v := o.Obj.(type) {
		case *corev1.ServiceAccount:
			accounts[v.Namespace+"/"+v.Name] = true
		case *rbacv1.ClusterRole:
			clusterRoles[v.Name] = true
		}
	}
	for _, o := range objs {
		switch v := o.Obj.(type) {
		case *rbacv1.Role:
			fail(o, "a consumer needs no namespaced permissions")
		case *rbacv1.RoleBinding:
			fail(o, "a consumer needs no namespaced permissions")
		case *rbacv1.ClusterRole:
			if !onlyGetNodes(v) {
				fail(o, "a consumer's ClusterRole grants get on nodes (apiGroups [\"\"]) and nothing else; got rules %+v, aggregationRule %v", v.Rules, v.AggregationRule)
			}
		case *rbacv1.ClusterRoleBinding:
			if v.RoleRef.APIGroup != rbacv1.GroupName || v.RoleRef.Kind != "ClusterRole" || !clusterRoles[v.RoleRef.Name] {
				fail(o, "roleRef %s/%s %q is no ClusterRole of this rendering", v.RoleRef.APIGroup, v.RoleRef.Kind, v.RoleRef.Name)
			}
			if len(v.Subjects) == 0 {
				fail(o, "no subjects")
			}
			for _, s := range v.Subjects {
				if s.Kind != rbacv1.ServiceAccountKind || !accounts[s.Namespace+"/"+s.Name] {
					fail(o, "subject %s %s/%s is no ServiceAccount of this rendering", s.Kind, s.Namespace, s.Name)
				}
			}
		case *appsv1.StatefulSet:
			sa := v.Spec.Template.Spec.ServiceAccountName
			if sa != "" && !accounts[v.Namespace+"/"+sa] {
				fail(o, "serviceAccountName %q is no ServiceAccount of this rendering", sa)
			}
		}
	}
	return errs
}

func onlyGetNodes(r *rbacv1.ClusterRole) bool {
	if r.AggregationRule != nil || len(r.Rules) != 1 {
		return false
	}
	rule := r.Rules[0]
	return slices.Equal(rule.APIGroups, []string{""}) &&
		slices.Equal(rule.Resources, []string{"nodes"}) &&
		slices.Equal(rule.Verbs, []string{"get"}) &&
		len(rule.ResourceNames) == 0 && len(rule.NonResourceURLs) == 0
}
