package reach

import (
	"fmt"
	"go/constant"
	"go/token"
	"go/types"
	"sort"
	"strings"

	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/ssa"
)

// LambdaPackage is the Lambda runtime's Go package; its Start functions
// call the handler they are given by reflection.
const LambdaPackage = "github.com/aws/aws-lambda-go/lambda"

// tracer follows a value backwards to where it was made: through
// conversions, φ-nodes, the parameters of its function (to the arguments
// of every reachable call of it in the graph) and the results of calls (to
// the returned values of every callee). It is a small, flow-insensitive
// backward slice over SSA; what it cannot follow (a load from memory, a
// field, a global) it reports as unknown.
type tracer struct {
	g     *callgraph.Graph
	reach map[*ssa.Function]bool
	seen  map[ssa.Value]bool
	// visited lists every value met on the way (for the stores into the
	// fields of a pointer met under another name).
	visited []ssa.Value
	origins []ssa.Value
	unknown []ssa.Value
}

func newTracer(g *callgraph.Graph, reach map[*ssa.Function]bool) *tracer {
	return &tracer{g: g, reach: reach, seen: map[ssa.Value]bool{}}
}

func (t *tracer) trace(v ssa.Value) {
	if v == nil || t.seen[v] {
		return
	}
	t.seen[v] = true
	t.visited = append(t.visited, v)
	switch v := v.(type) {
	case *ssa.MakeInterface:
		t.trace(v.X)
	case *ssa.ChangeType:
		t.trace(v.X)
	case *ssa.ChangeInterface:
		t.trace(v.X)
	case *ssa.TypeAssert:
		t.trace(v.X)
	case *ssa.Phi:
		for _, e := range v.Edges {
			t.trace(e)
		}
	case *ssa.Parameter:
		t.traceParameter(v)
	case *ssa.Call:
		t.traceResult(v, 0, false)
	case *ssa.Extract:
		if call, ok := v.Tuple.(*ssa.Call); ok {
			t.traceResult(call, v.Index, true)
		} else {
			t.unknown = append(t.unknown, v)
		}
	case *ssa.Alloc, *ssa.MakeClosure, *ssa.Function, *ssa.Const:
		t.origins = append(t.origins, v)
	default:
		t.unknown = append(t.unknown, v)
	}
}

// traceParameter follows p to the matching argument of every reachable
// call of its function.
func (t *tracer) traceParameter(p *ssa.Parameter) {
	fn := p.Parent()
	idx := -1
	for i, q := range fn.Params {
		if q == p {
			idx = i
		}
	}
	if fn.Signature.Recv() != nil {
		idx-- // the receiver: not an argument of the signature
	}
	n := t.g.Nodes[fn]
	if idx < 0 || n == nil {
		t.unknown = append(t.unknown, p)
		return
	}
	nparams := fn.Signature.Params().Len()
	callers := 0
	for _, in := range n.In {
		if in.Site == nil || !t.reach[in.Caller.Func] {
			continue
		}
		args := in.Site.Common().Args
		if len(args) < nparams {
			t.unknown = append(t.unknown, p)
			continue
		}
		callers++
		t.trace(args[len(args)-nparams+idx])
	}
	if callers == 0 {
		t.unknown = append(t.unknown, p)
	}
}

// traceResult follows result i of call to what every callee returns there.
func (t *tracer) traceResult(call *ssa.Call, i int, tuple bool) {
	n := t.g.Nodes[call.Parent()]
	callees := 0
	if n != nil {
		for _, e := range n.Out {
			if e.Site != call {
				continue
			}
			fn := e.Callee.Func
			if len(fn.Blocks) == 0 {
				t.unknown = append(t.unknown, call)
				continue
			}
			callees++
			for _, b := range fn.Blocks {
				if ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok {
					if !tuple && len(ret.Results) != 1 || i >= len(ret.Results) {
						t.unknown = append(t.unknown, call)
						continue
					}
					t.trace(ret.Results[i])
				}
			}
		}
	}
	if callees == 0 {
		t.unknown = append(t.unknown, call)
	}
}

// handlerRoots returns the functions that the calls of the Lambda
// runtime's Start functions among the reachable functions are given: the
// runtime calls them by reflection, which no call graph sees. It fails when
// a handler cannot be traced to the function it is.
func handlerRoots(g *callgraph.Graph, reach map[*ssa.Function]bool) ([]*ssa.Function, error) {
	var roots []*ssa.Function
	seen := map[*ssa.Function]bool{}
	var fns []*ssa.Function
	for fn := range reach {
		fns = append(fns, fn)
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].String() < fns[j].String() })
	for _, fn := range fns {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				call, ok := instr.(ssa.CallInstruction)
				if !ok {
					continue
				}
				callee := call.Common().StaticCallee()
				if callee == nil || callee.Pkg == nil || callee.Pkg.Pkg.Path() != LambdaPackage ||
					!token.IsExported(callee.Name()) || pkgPath(fn) == LambdaPackage {
					continue // the runtime's own calls pass on what its entry points were given
				}
				sig := callee.Signature
				for i := 0; i < sig.Params().Len(); i++ {
					param := sig.Params().At(i)
					iface, isIface := param.Type().Underlying().(*types.Interface)
					if !isIface || !iface.Empty() || !strings.HasPrefix(param.Name(), "handler") {
						continue // a lambda.Handler is an interface VTA follows
					}
					t := newTracer(g, reach)
					t.trace(call.Common().Args[i])
					if len(t.unknown) > 0 {
						return nil, fmt.Errorf("cannot trace the handler given to %s at %s to a function (%v)",
							callee.Name(), fn.Prog.Fset.Position(call.Pos()), t.unknown[0])
					}
					for _, o := range t.origins {
						var f *ssa.Function
						switch o := o.(type) {
						case *ssa.MakeClosure:
							f = o.Fn.(*ssa.Function)
						case *ssa.Function:
							f = o
						case *ssa.Const:
							continue // a nil handler
						default:
							return nil, fmt.Errorf("the handler given to %s at %s is not a function (%v)",
								callee.Name(), fn.Prog.Fset.Position(call.Pos()), o)
						}
						if !seen[f] {
							seen[f] = true
							roots = append(roots, f)
						}
					}
				}
			}
		}
	}
	return roots, nil
}

// indexNames returns the IndexName values the input of the Query or Scan
// call can carry: the constants stored into the IndexName field of the
// QueryInput/ScanInput it was made as ("" when none is stored), or "?"
// when the input cannot be traced.
func indexNames(g *callgraph.Graph, reach map[*ssa.Function]bool, call *ssa.CallCommon, callee *ssa.Function) []string {
	args := call.Args
	nparams := callee.Signature.Params().Len()
	if len(args) < nparams || nparams < 2 {
		return []string{"?"}
	}
	t := newTracer(g, reach)
	t.trace(args[len(args)-nparams+1]) // (ctx, in, optFns...)
	names := map[string]bool{}
	if len(t.unknown) > 0 {
		names["?"] = true
	}
	for _, o := range t.origins {
		if _, ok := o.(*ssa.Alloc); !ok {
			names["?"] = true
		}
	}
	stored := false
	for _, v := range t.visited {
		refs := v.Referrers()
		if refs == nil {
			continue
		}
		for _, r := range *refs {
			fa, ok := r.(*ssa.FieldAddr)
			if !ok || fa.X != v {
				continue
			}
			st := fa.X.Type().Underlying().(*types.Pointer).Elem().Underlying().(*types.Struct)
			if st.Field(fa.Field).Name() != "IndexName" {
				continue
			}
			for _, fr := range *fa.Referrers() {
				s, ok := fr.(*ssa.Store)
				if !ok || s.Addr != fa {
					continue
				}
				stored = true
				names[constString(s.Val)] = true
			}
		}
	}
	if !stored {
		names[""] = true
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// constString returns the constant string v points to (aws.String("x"),
// or a nil pointer: ""), or "?".
func constString(v ssa.Value) string {
	switch v := v.(type) {
	case *ssa.Const:
		if v.IsNil() {
			return ""
		}
	case *ssa.Call:
		callee := v.Call.StaticCallee()
		if callee != nil && callee.Pkg != nil && callee.Pkg.Pkg.Path() == SDKModule+"/aws" && callee.Name() == "String" && len(v.Call.Args) == 1 {
			if c, ok := v.Call.Args[0].(*ssa.Const); ok && c.Value != nil && c.Value.Kind() == constant.String {
				return constant.StringVal(c.Value)
			}
		}
	}
	return "?"
}
