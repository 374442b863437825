package approvals

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/process"
	"github.com/hookwall/hookwall/shared/provider/wecom"
	"github.com/hookwall/hookwall/shared/store"
)

// HandlerName is the stable name of the approval handler.
const HandlerName = "approvals.status-from-wecom"

// Row states of the approvals table's status attribute.
const (
	StatusSubmitted = "SUBMITTED"
	StatusApproved  = "APPROVED"
	StatusRejected  = "REJECTED"
)

// WeCom's SpStatus values this handler acts on
// (https://developer.work.weixin.qq.com/document/path/90376): 1 in approval,
// 2 approved, 3 rejected; the others (4 revoked, 6 revoked after approval,
// 7 deleted, 10 paid) are left to other handlers.
const (
	spApproved = "2"
	spRejected = "3"
)

// Config is the approvals team's dependencies.
type Config struct {
	// DB is the DynamoDB client (required).
	DB store.UpdateItemAPI
	// Table is the approvals table, keyed by pk = SpNo (required).
	Table string
}

// Register adds the approvals team's handlers to r. It panics on a missing
// dependency (a start-up error).
func Register(r *process.Registry, cfg Config) {
	if cfg.DB == nil || cfg.Table == "" {
		panic("approvals: Register: DB and Table are required")
	}
	h := &handler{cfg: cfg}
	process.Handle(r, HandlerName, wecom.ApprovalChanged, h.statusFromWeCom)
}

type handler struct {
	cfg Config
}

// statusFromWeCom moves the approval's row to the state WeCom reports.
func (h *handler) statusFromWeCom(ctx context.Context, ev *process.Event[wecom.ApprovalChange]) error {
	info := ev.Data.ApprovalInfo
	var to string
	switch info.SpStatus {
	case spApproved:
		to = StatusApproved
	case spRejected:
		to = StatusRejected
	default:
		ev.Log.DebugContext(ctx, "approval state not tracked", slog.String("sp_no", info.SpNo), slog.String("sp_status", info.SpStatus))
		return nil
	}
	if info.SpNo == "" {
		return process.Permanent(errors.New("approvals: approval change without SpNo"))
	}
	outcome, err := process.StepResult(ctx, ev, "move-row", func(ctx context.Context, _ string) (string, error) {
		res, err := store.ApplyTransition(ctx, h.cfg.DB, store.Transition{
			Table: h.cfg.Table,
			Key:   map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: info.SpNo}},
			From:  []string{StatusSubmitted},
			To:    to,
			Set: map[string]types.AttributeValue{
				"decidedBy": &types.AttributeValueMemberS{Value: ev.Key},
			},
		})
		if err != nil {
			return "", fmt.Errorf("approvals: move %s to %s: %w", info.SpNo, to, err)
		}
		switch res.Outcome {
		case store.TransitionNotFound:
			// The business app may not have written the row yet: retried with backoff.
			return "", fmt.Errorf("approvals: approval %s: no row yet", info.SpNo)
		case store.TransitionConflict:
			ev.Log.WarnContext(ctx, "approval row moved on elsewhere; left alone",
				slog.String("sp_no", info.SpNo), slog.String("row_status", res.State), slog.String("wanted", to))
		}
		return res.Outcome.String(), nil
	})
	if err != nil {
		return err
	}
	ev.Log.InfoContext(ctx, "approval row", slog.String("sp_no", info.SpNo), slog.String("to", to), slog.String("outcome", outcome))
	return nil
}
