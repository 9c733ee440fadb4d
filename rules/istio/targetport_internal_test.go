package istio

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestTargetPortNumberIsIntValue holds the shortcut for port names to
// IntOrString.IntValue.
func TestTargetPortNumberIsIntValue(t *testing.T) {
	for _, tp := range []intstr.IntOrString{intstr.FromInt32(9090), intstr.FromInt32(0), intstr.FromString("http"), intstr.FromString(""),
		intstr.FromString("8080"), intstr.FromString("+80"), intstr.FromString("-1"), intstr.FromString("0x10"), intstr.FromString(" 80"), intstr.FromString("80a")} {
		if got, want := targetPortNumber(tp), tp.IntValue(); got != want {
			t.Errorf("targetPortNumber(%v) = %d, IntValue = %d", tp.String(), got, want)
		}
	}
}
