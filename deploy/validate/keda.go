package main

import (
	"fmt"
	"strings"

	kedav1alpha1 "github.com/kedacore/keda/v2/apis/keda/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// scalingSignal is the sidecars' series a ScaledObject must follow (crates/sidecar, scaling).
const scalingSignal = "mooring_scaling_desired_replicas"

// checkScaledObject: the ScaledObject scales a StatefulSet of this rendering on the sidecars'
// scaling signal the way it is meant to be read. The signal is a replica count already held
// and priced by the sidecar, so the HPA must take it as it is: an AverageValue of 1, no
// scale-down stabilization of its own (the two holds would add up), never to zero (no consumer,
// no sidecar, no signal), and no series must not read as zero.
func checkScaledObject(s *kedav1alpha1.ScaledObject, sets []*appsv1.StatefulSet) []string {
	var errs []string
	ref := s.Spec.ScaleTargetRef
	if ref == nil {
		return []string{"spec.scaleTargetRef is missing"}
	}
	if ref.Kind != "StatefulSet" || ref.APIVersion != "apps/v1" {
		errs = append(errs, fmt.Sprintf("spec.scaleTargetRef is %s %s: a Mooring consumer is an apps/v1 StatefulSet", ref.APIVersion, ref.Kind))
	}
	found := false
	for _, set := range sets {
		found = found || set.Name == ref.Name
	}
	if !found {
		errs = append(errs, fmt.Sprintf("spec.scaleTargetRef.name %q names no StatefulSet of this rendering", ref.Name))
	}
	if m := s.Spec.MinReplicaCount; m == nil || *m < 1 {
		errs = append(errs, "spec.minReplicaCount must be at least 1: the signal comes from a sidecar beside a running consumer")
	}
	follows := false
	for i, t := range s.Spec.Triggers {
		if t.Type != "prometheus" || !strings.Contains(t.Metadata["query"], scalingSignal) {
			continue
		}
		follows = true
		if t.MetricType != autoscalingv2.AverageValueMetricType {
			errs = append(errs, fmt.Sprintf("spec.triggers[%d].metricType is %q: the signal is a replica count, read as an AverageValue", i, t.MetricType))
		}
		if t.Metadata["threshold"] != "1" {
			errs = append(errs, fmt.Sprintf("spec.triggers[%d].metadata.threshold is %q: it must be \"1\" for the HPA to ask for the signal's replicas", i, t.Metadata["threshold"]))
		}
		if t.Metadata["ignoreNullValues"] != "false" {
			errs = append(errs, fmt.Sprintf("spec.triggers[%d].metadata.ignoreNullValues must be \"false\": with no series the group would scale down to the minimum", i))
		}
	}
	if !follows {
		errs = append(errs, "no prometheus trigger queries "+scalingSignal)
	}
	adv := s.Spec.Advanced
	if adv == nil || adv.HorizontalPodAutoscalerConfig == nil || adv.HorizontalPodAutoscalerConfig.Behavior == nil ||
		adv.HorizontalPodAutoscalerConfig.Behavior.ScaleDown == nil ||
		adv.HorizontalPodAutoscalerConfig.Behavior.ScaleDown.StabilizationWindowSeconds == nil ||
		*adv.HorizontalPodAutoscalerConfig.Behavior.ScaleDown.StabilizationWindowSeconds != 0 {
		errs = append(errs, "spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleDown.stabilizationWindowSeconds must be 0: the sidecar holds a scale-down already (scaling.scale.down.hold.ms)")
	}
	return errs
}
