package strictbox

import (
	"context"
	"os"

	"github.com/aisan-dev/aisan/jail"
)

// StartEgress starts the host service of every built-in endpoint, before
// the box starts.
func StartEgress(ctx context.Context, eps []jail.Endpoint) (*jail.EgressRun, error) {
	return startEgress(ctx, eps)
}

// ResumeEgress is a keeper's side of StartEgress.
func ResumeEgress(ctx context.Context, eps []jail.Endpoint, files []*os.File, state []byte) (func(), error) {
	return resumeEgress(ctx, eps, files, state)
}

// PlanModels decides the model endpoints of a strict launch.
func PlanModels(kind jail.Kind, apiKey, net bool, r *jail.StrictRequest, explainOnly bool) error {
	return models.plan(kind, apiKey, net, r, explainOnly)
}

// HasBackend reports whether a built-in backend has a host side.
func HasBackend(name string) bool { return egressBackends[name] != nil }

// AuditPath is where a slot's egress decisions are logged.
func AuditPath(slotName string) (string, error) { return egressAuditPath(slotName) }
