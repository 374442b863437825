package approvals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/config/setting"
	"github.com/hookwall/hookwall/shared/engine/platform"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/protocol/provider/wecom"
	"github.com/hookwall/hookwall/shared/state/store"
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

// Table is the approvals team's one setting: its DynamoDB table, keyed by
// pk = SpNo. The handler and its undo only update rows (UpdateItem): that
// is all `make generate` grants the roles on the table.
var Table = setting.Setting{
	Name:    "APPROVALS_TABLE",
	Kind:    setting.KindString,
	Doc:     "the example approvals handlers' DynamoDB table (empty: they are off); the processor's and compensator's roles get dynamodb:UpdateItem on it",
	Pattern: `[A-Za-z0-9_.-]{3,255}`,
	Example: "approvals",
	Grants:  []string{"dynamodb:UpdateItem"},
}

// config is the approvals team's dependencies.
type config struct {
	// DB is the DynamoDB client (required).
	DB store.UpdateItemAPI
	// Table is the approvals table, keyed by pk = SpNo (required).
	Table string
}

// Team is the approvals team: its setting and its handler.
// functions/processor/handlers lists it.
var Team = platform.Team{Owner: "functions/processor/handlers/approvals", Settings: []setting.Setting{Table}, Register: Register}

// Register adds the approvals team's handlers to r when [Table] is set,
// with the platform's DynamoDB client (d.DynamoDB). It panics when the
// table is set and d has no client (a start-up error).
func Register(r *process.Registry, d platform.Deps) {
	table := r.String(Table)
	if table == "" {
		return
	}
	if d.DynamoDB == nil {
		panic("approvals: Register: APPROVALS_TABLE is set but the platform gave no DynamoDB client")
	}
	h := &handler{cfg: config{DB: d.DynamoDB, Table: table}}
	process.Handle(r, HandlerName, wecom.ApprovalChanged, h.statusFromWeCom, process.Compensate(h.undo))
}

// stepMoveRow is the handler's one step; its journaled result is the
// transition's outcome ("applied", "already-in-target", "conflict").
const stepMoveRow = "move-row"

// Attributes the handler writes besides the status.
const (
	attrDecidedBy  = "decidedBy"  // the event key that moved the row
	attrRevertedBy = "revertedBy" // the event key whose compensation moved it back
)

// target returns the row state for WeCom's SpStatus ("" for a state not tracked).
func target(spStatus string) string {
	switch spStatus {
	case spApproved:
		return StatusApproved
	case spRejected:
		return StatusRejected
	}
	return ""
}

type handler struct {
	cfg config
}

// statusFromWeCom moves the approval's row to the state WeCom reports.
func (h *handler) statusFromWeCom(ctx context.Context, ev *process.Event[wecom.ApprovalChange]) error {
	info := ev.Data.ApprovalInfo
	to := target(info.SpStatus)
	if to == "" {
		ev.Log.DebugContext(ctx, "approval state not tracked", slog.String("sp_no", info.SpNo), slog.String("sp_status", info.SpStatus))
		return nil
	}
	if info.SpNo == "" {
		return process.Permanent(errors.New("approvals: approval change without SpNo"))
	}
	outcome, err := process.StepResult(ctx, ev, stepMoveRow, func(ctx context.Context, _ string) (string, error) {
		res, err := store.ApplyTransition(ctx, h.cfg.DB, store.Transition{
			Table: h.cfg.Table,
			Key:   map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: info.SpNo}},
			From:  []string{StatusSubmitted},
			To:    to,
			Set: map[string]types.AttributeValue{
				attrDecidedBy: &types.AttributeValueMemberS{Value: ev.Key},
			},
		})
		if err != nil {
			return "", fmt.Errorf("approvals: move %s to %s: %w", info.SpNo, to, err)
		}
		switch res.Outcome {
		case store.TransitionAlreadyInTarget:
			if by, _ := res.Item[attrDecidedBy].(*types.AttributeValueMemberS); by != nil && by.Value == ev.Key {
				// An earlier attempt of this event moved it and died before
				// journaling: the move is this event's, for its compensation.
				return store.TransitionApplied.String(), nil
			}
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

// undo is the handler's compensation: when the event's move-row step moved
// the row ("applied"), it moves the row back from that state to SUBMITTED
// with the same conditional transition (store.ApplyTransition), recording
// the event in revertedBy. A row found SUBMITTED already (an earlier undo
// that was not journaled) is done; a row that moved on elsewhere since, or
// is gone, is left alone: the business state is no longer this event's to
// revert. A step that found the row already moved, or in conflict, changed
// nothing and has nothing to undo.
func (h *handler) undo(ctx context.Context, u *process.Undo) error {
	if u.Step != stepMoveRow {
		return nil
	}
	outcome, err := process.UndoResult[string](u)
	if err != nil {
		return err
	}
	if outcome != store.TransitionApplied.String() {
		u.Log.InfoContext(ctx, "approval row not moved by this event; nothing to revert", slog.String("outcome", outcome))
		return nil
	}
	var ch wecom.ApprovalChange
	if err := json.Unmarshal(u.Envelope.Payload, &ch); err != nil {
		return process.Permanent(fmt.Errorf("approvals: undo: decode payload: %w", err))
	}
	info := ch.ApprovalInfo
	from := target(info.SpStatus)
	if info.SpNo == "" || from == "" {
		return process.Permanent(fmt.Errorf("approvals: undo: payload names no tracked approval (SpNo %q, SpStatus %q)", info.SpNo, info.SpStatus))
	}
	res, err := store.ApplyTransition(ctx, h.cfg.DB, store.Transition{
		Table: h.cfg.Table,
		Key:   map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: info.SpNo}},
		From:  []string{from},
		To:    StatusSubmitted,
		Set:   map[string]types.AttributeValue{attrRevertedBy: &types.AttributeValueMemberS{Value: u.Envelope.Key}},
	})
	if err != nil {
		return fmt.Errorf("approvals: revert %s to %s: %w", info.SpNo, StatusSubmitted, err)
	}
	log := u.Log.With(slog.String("sp_no", info.SpNo), slog.String("outcome", res.Outcome.String()))
	switch res.Outcome {
	case store.TransitionConflict, store.TransitionNotFound:
		log.WarnContext(ctx, "approval row moved on elsewhere; not reverted", slog.String("row_status", res.State))
	default:
		log.InfoContext(ctx, "approval row reverted", slog.String("from", from))
	}
	return nil
}
