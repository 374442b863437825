// Package reach finds, by static analysis, every AWS SDK operation the code
// of each Lambda function can reach from its main package, and where.
//
// [Load] loads the functions' main packages and all their dependencies in
// one go/packages load, builds one SSA program (generics instantiated) and
// one call graph of the whole program: CHA first, refined by VTA (variable
// type analysis). [Program.Analyze] then, for each function, takes the part
// of that graph reachable from the function's roots (its main and init, and
// the handler the Lambda runtime calls by reflection: see [handlerRoots]),
// refines it once more with VTA over that part alone (the flows of the other
// functions' code no longer widen this one's), and collects every call edge
// into an operation method of an SDK service client, a method of
// *github.com/aws/aws-sdk-go-v2/service/<service>.Client.
//
// A call reaches the client through an interface (store.UpdateItemAPI,
// bus.PutEventsAPI, recovery.DB) as often as directly: VTA resolves such a
// call to (*dynamodb.Client).UpdateItem when a *dynamodb.Client flows into
// the interface, and to nothing when only a test fake does.
//
// The site of a call is where the function's own code makes it. Synthetic
// wrappers (bound method values, interface thunks) and the helpers of the
// client's own package that call the client for their caller (paginators,
// waiters) are walked back to their callers outside the SDK; a call from
// anywhere else in the SDK (the credential providers, a client's endpoint
// discovery) is reported where the SDK makes it, for the bindings to judge.
package reach

import (
	"fmt"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/callgraph/vta"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// SDKModule is the import path prefix of the AWS SDK for Go v2, and
// ServicePrefix that of its service clients.
const (
	SDKModule     = "github.com/aws/aws-sdk-go-v2"
	ServicePrefix = SDKModule + "/service/"
)

// Config says what to load.
type Config struct {
	// Dir is the root of the module to analyze (the repository root).
	Dir string
	// Mains maps each function name to its main package, relative to Dir
	// ("receiver": "./functions/receiver").
	Mains map[string]string
	// Overlay replaces or adds files (absolute paths) for the load, as
	// packages.Config.Overlay: a test adds a call without touching the tree.
	Overlay map[string][]byte
	// CHAOnly skips VTA: the call graph is CHA's alone (every method of
	// every type that satisfies an interface, every function whose address
	// is taken). For comparison only: far less precise.
	CHAOnly bool
}

// Program is the loaded, analyzed whole program of every function.
type Program struct {
	root    string
	fset    *token.FileSet
	prog    *ssa.Program
	graph   *callgraph.Graph
	mains   map[string]*ssa.Package
	chaOnly bool
	Timings Timings
}

// Timings says how long each phase took.
type Timings struct {
	Load, SSA, CHA, VTA time.Duration
	// PerFunction is the refinement and collection of each function.
	PerFunction map[string]time.Duration
}

// Load loads cfg's main packages in one packages.Load and builds the SSA
// program and its CHA+VTA call graph.
func Load(cfg Config) (*Program, error) {
	root, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, err
	}
	p := &Program{root: root, mains: map[string]*ssa.Package{}, Timings: Timings{PerFunction: map[string]time.Duration{}}}
	names := make([]string, 0, len(cfg.Mains))
	for name := range cfg.Mains {
		names = append(names, name)
	}
	sort.Strings(names)
	patterns := make([]string, len(names))
	for i, name := range names {
		patterns[i] = cfg.Mains[name]
	}

	t := time.Now()
	pcfg := &packages.Config{
		Mode:    packages.LoadAllSyntax,
		Dir:     root,
		Overlay: cfg.Overlay,
		// The repository's own module, whatever go.work or GOFLAGS the
		// caller's environment has.
		Env: append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly"),
	}
	pkgs, err := packages.Load(pcfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	var errs []string
	packages.Visit(pkgs, nil, func(pkg *packages.Package) {
		for _, e := range pkg.Errors {
			errs = append(errs, e.Error())
		}
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("load: %s", strings.Join(errs, "; "))
	}
	p.Timings.Load = time.Since(t)

	t = time.Now()
	prog, ssaPkgs := ssautil.AllPackages(pkgs, ssa.InstantiateGenerics)
	prog.Build()
	p.prog, p.fset = prog, prog.Fset
	for i, sp := range ssaPkgs {
		if sp == nil || sp.Pkg.Name() != "main" || sp.Func("main") == nil {
			return nil, fmt.Errorf("load: %s (function %s) is not a main package", patterns[i], names[i])
		}
		p.mains[names[i]] = sp
	}
	p.Timings.SSA = time.Since(t)

	t = time.Now()
	all := ssautil.AllFunctions(prog)
	initial := cha.CallGraph(prog)
	p.Timings.CHA = time.Since(t)
	p.graph, p.chaOnly = initial, cfg.CHAOnly
	if !cfg.CHAOnly {
		t = time.Now()
		p.graph = vta.CallGraph(all, initial)
		p.Timings.VTA = time.Since(t)
	}
	return p, nil
}

// Site is one call of an SDK operation that a function's code can make.
type Site struct {
	// Function is the Lambda function ("receiver").
	Function string
	// Service is the SDK service package's name ("dynamodb"), Operation the
	// client method ("UpdateItem").
	Service, Operation string
	// Package is the import path of the function making the call, and
	// Enclosing its short name ("(*store.Table).GetMany").
	Package, Enclosing string
	// File is the file of the call relative to the repository root (or,
	// outside it, the module cache: "github.com/aws/aws-sdk-go-v2/credentials@v1.21.0/..."),
	// Line its line.
	File string
	Line int
	// Indexes are, for Query and Scan, the IndexName values the input can
	// carry: "" for the base table, "?" when the analysis cannot tell.
	Indexes []string
	// Items are, for TransactWriteItems and BatchWriteItem, the request
	// kinds the enclosing function builds ("ConditionCheck", "Put"; for
	// BatchWriteItem "PutRequest", "DeleteRequest"); empty when it builds
	// none itself (the caller does: the analysis cannot tell).
	Items []string
	// Callers are the import paths of the packages of the direct callers
	// of the enclosing function (for bindings that depend on the caller,
	// such as a shared helper writing a team's table).
	Callers []string
	// InSDK is set for a call the SDK makes itself (not on behalf of a
	// paginator or waiter the code called).
	InSDK bool
}

// Where is the site as the inventory writes it: "file:line enclosing".
func (s Site) Where() string { return fmt.Sprintf("%s:%d %s", s.File, s.Line, s.Enclosing) }

// Analysis is what one function's code reaches.
type Analysis struct {
	// Function is the Lambda function.
	Function string
	// Sites are the SDK calls it can make, sorted by operation and site.
	Sites []Site
	// Roots are where its code starts: main, the package initializers and
	// the handlers it gives the Lambda runtime.
	Roots []string

	graph *callgraph.Graph
	roots []*ssa.Function
	reach map[*ssa.Function]bool
}

// Path returns a shortest chain of calls from the function's roots to the
// site's enclosing function, as "file:line caller -> callee" steps (empty
// when there is none), to explain why a site is reachable.
func (a *Analysis) Path(s Site) []string {
	from := map[*callgraph.Node]*callgraph.Edge{}
	var queue []*callgraph.Node
	for _, r := range a.roots {
		if n := a.graph.Nodes[r]; n != nil {
			from[n] = nil
			queue = append(queue, n)
		}
	}
	var target *callgraph.Node
	for len(queue) > 0 && target == nil {
		n := queue[0]
		queue = queue[1:]
		if ShortName(n.Func) == s.Enclosing && pkgPath(n.Func) == s.Package {
			target = n
			break
		}
		for _, e := range n.Out {
			if _, ok := from[e.Callee]; !ok && a.reach[e.Callee.Func] {
				from[e.Callee] = e
				queue = append(queue, e.Callee)
			}
		}
	}
	var out []string
	for n := target; n != nil; {
		e := from[n]
		if e == nil {
			out = append(out, ShortName(n.Func)+" (root)")
			break
		}
		pos := e.Caller.Func.Prog.Fset.Position(e.Pos())
		out = append(out, fmt.Sprintf("%s:%d %s -> %s", filepath.Base(pos.Filename), pos.Line, ShortName(e.Caller.Func), ShortName(n.Func)))
		n = e.Caller
	}
	slices.Reverse(out)
	return out
}

// Analyze returns what the function name can reach.
func (p *Program) Analyze(name string) (*Analysis, error) {
	t := time.Now()
	defer func() { p.Timings.PerFunction[name] = time.Since(t) }()
	mainPkg := p.mains[name]
	if mainPkg == nil {
		return nil, fmt.Errorf("reach: no main package loaded for %s", name)
	}
	base := []*ssa.Function{mainPkg.Func("main")}
	if init := mainPkg.Func("init"); init != nil {
		base = append(base, init)
	}
	handlers, err := handlerRoots(p.graph, reachable(p.graph, base))
	if err != nil {
		return nil, fmt.Errorf("reach: %s: %w", name, err)
	}
	// Refine: VTA again over what this function reaches, then find its
	// handlers again in the refined graph.
	g := p.graph
	if !p.chaOnly {
		g = vta.CallGraph(reachable(p.graph, append(slices.Clone(base), handlers...)), p.graph)
		if handlers, err = handlerRoots(g, reachable(g, base)); err != nil {
			return nil, fmt.Errorf("reach: %s: %w", name, err)
		}
	}
	if len(handlers) == 0 {
		return nil, fmt.Errorf("reach: %s: no handler passed to the Lambda runtime (lambda.Start) is reachable from main", name)
	}
	roots := append(base, handlers...)
	reach := reachable(g, roots)

	seen := map[string]bool{}
	var sites []Site
	for fn := range reach {
		n := g.Nodes[fn]
		if n == nil {
			continue
		}
		for _, e := range n.Out {
			service, op, ok := clientOperation(e.Callee.Func)
			if !ok {
				continue
			}
			for _, call := range callSites(reach, e) {
				s := p.site(g, reach, name, service, op, call)
				key := fmt.Sprint(s)
				if !seen[key] {
					seen[key] = true
					sites = append(sites, s)
				}
			}
		}
	}
	sort.Slice(sites, func(i, j int) bool {
		x, y := sites[i], sites[j]
		if x.Service+x.Operation != y.Service+y.Operation {
			return x.Service+x.Operation < y.Service+y.Operation
		}
		return fmt.Sprint(x) < fmt.Sprint(y)
	})
	a := &Analysis{Function: name, graph: g, roots: roots, reach: reach, Sites: sites}
	for _, r := range roots {
		a.Roots = append(a.Roots, ShortName(r))
	}
	return a, nil
}

// reachable returns the functions reachable in g from roots. An anonymous
// function counts as reachable only once its enclosing function is: its
// value is made by that function's code, so no call can reach it before
// that code runs. This prunes the spurious edges of VTA's
// context-insensitivity where two callers pass their closures to one
// higher-order helper (batch.Send, fanout.Map): the helper's call of its
// parameter resolves to both closures, but a function that never runs the
// other caller never makes that caller's closure.
func reachable(g *callgraph.Graph, roots []*ssa.Function) map[*ssa.Function]bool {
	seen := map[*ssa.Function]bool{}
	blocked := map[*ssa.Function][]*callgraph.Node{} // by the enclosing function they wait for
	var queue []*callgraph.Node
	visit := func(n *callgraph.Node) {
		f := n.Func
		if seen[f] {
			return
		}
		if parent := f.Parent(); parent != nil && !seen[parent] {
			blocked[parent] = append(blocked[parent], n)
			return
		}
		seen[f] = true
		queue = append(queue, n)
		if waiting := blocked[f]; waiting != nil {
			delete(blocked, f)
			queue = append(queue, waiting...)
		}
	}
	for _, r := range roots {
		if n := g.Nodes[r]; n != nil {
			visit(n)
		}
	}
	for len(queue) > 0 {
		n := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if !seen[n.Func] { // released from blocked
			seen[n.Func] = true
			if waiting := blocked[n.Func]; waiting != nil {
				delete(blocked, n.Func)
				queue = append(queue, waiting...)
			}
		}
		for _, e := range n.Out {
			visit(e.Callee)
		}
	}
	return seen
}

// clientOperation reports whether fn is an operation method of an SDK
// service client, and which.
func clientOperation(fn *ssa.Function) (service, op string, ok bool) {
	recv := fn.Signature.Recv()
	if recv == nil || fn.Pkg == nil || fn.Synthetic != "" {
		return "", "", false
	}
	path := fn.Pkg.Pkg.Path()
	if !strings.HasPrefix(path, ServicePrefix) || strings.Contains(strings.TrimPrefix(path, ServicePrefix), "/") {
		return "", "", false
	}
	ptr, isPtr := recv.Type().(*types.Pointer)
	if !isPtr {
		return "", "", false
	}
	named, isNamed := ptr.Elem().(*types.Named)
	if !isNamed || named.Obj().Name() != "Client" || !token.IsExported(fn.Name()) || fn.Name() == "Options" {
		return "", "", false
	}
	return fn.Pkg.Pkg.Name(), fn.Name(), true
}

// transparent reports whether a call from fn into a client of the service
// package is made on behalf of fn's caller: fn is a synthetic wrapper, or a
// helper of the service package that is not a client method (a paginator's
// NextPage, a waiter's Wait).
func transparent(fn *ssa.Function, servicePkg string) bool {
	if isWrapper(fn) {
		return true
	}
	if fn.Synthetic != "" || fn.Pkg == nil || fn.Pkg.Pkg.Path() != servicePkg {
		return false
	}
	if recv := fn.Signature.Recv(); recv != nil {
		if ptr, ok := recv.Type().(*types.Pointer); ok {
			if named, ok := ptr.Elem().(*types.Named); ok && named.Obj().Name() == "Client" {
				return false
			}
		}
	}
	return true
}

// isWrapper reports whether fn is a synthetic wrapper around another
// function (a bound method value, an interface or embedding thunk, an
// instantiation wrapper), as opposed to a function with code of its own
// (an instance of a generic function, the body of a range-over-func loop).
func isWrapper(fn *ssa.Function) bool {
	for _, prefix := range []string{"bound method wrapper", "thunk", "wrapper", "instantiation wrapper"} {
		if strings.HasPrefix(fn.Synthetic, prefix) {
			return true
		}
	}
	return false
}

// callSites returns the call edges that make the call of e: e itself, or,
// when its caller is transparent, the edges into that caller from
// non-transparent reachable callers, transitively.
func callSites(reach map[*ssa.Function]bool, e *callgraph.Edge) []*callgraph.Edge {
	servicePkg := e.Callee.Func.Pkg.Pkg.Path()
	var out []*callgraph.Edge
	seen := map[*callgraph.Node]bool{}
	var walk func(e *callgraph.Edge)
	walk = func(e *callgraph.Edge) {
		if !transparent(e.Caller.Func, servicePkg) {
			out = append(out, e)
			return
		}
		if seen[e.Caller] {
			return
		}
		seen[e.Caller] = true
		for _, in := range e.Caller.In {
			if reach[in.Caller.Func] {
				walk(in)
			}
		}
	}
	walk(e)
	return out
}

// site describes the call edge e of the operation.
func (p *Program) site(g *callgraph.Graph, reach map[*ssa.Function]bool, function, service, op string, e *callgraph.Edge) Site {
	fn := e.Caller.Func
	pos := p.fset.Position(e.Pos())
	s := Site{
		Function:  function,
		Service:   service,
		Operation: op,
		Package:   pkgPath(fn),
		Enclosing: ShortName(fn),
		File:      p.relFile(pos.Filename),
		Line:      pos.Line,
		InSDK:     strings.HasPrefix(pkgPath(fn), SDKModule+"/") || pkgPath(fn) == SDKModule,
	}
	callers := map[string]bool{}
	if n := g.Nodes[fn]; n != nil {
		for _, in := range n.In {
			if reach[in.Caller.Func] {
				callers[pkgPath(in.Caller.Func)] = true
			}
		}
	}
	for c := range callers {
		s.Callers = append(s.Callers, c)
	}
	sort.Strings(s.Callers)
	switch op {
	case "Query", "Scan":
		// The input is traced only at a call of the client itself; through a
		// paginator (walked back to its NextPage) the analysis cannot tell.
		if _, _, direct := clientOperation(e.Callee.Func); direct && e.Site != nil {
			s.Indexes = indexNames(g, reach, e.Site.Common(), e.Callee.Func)
		} else {
			s.Indexes = []string{"?"}
		}
	case "TransactWriteItems":
		s.Items = builtFields(fn, "TransactWriteItem", "Put", "Update", "Delete", "ConditionCheck")
	case "BatchWriteItem":
		s.Items = builtFields(fn, "WriteRequest", "PutRequest", "DeleteRequest")
	}
	return s
}

// relFile returns filename relative to the repository root, or to the
// module cache for a file of a dependency.
func (p *Program) relFile(filename string) string {
	if rel, err := filepath.Rel(p.root, filename); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	if i := strings.LastIndex(filename, "/pkg/mod/"); i >= 0 {
		return filename[i+len("/pkg/mod/"):]
	}
	return filepath.ToSlash(filename)
}

// builtFields returns which of fields the function fn (or a closure in it)
// sets on a value of the SDK type named typeName: the kinds of the
// requests it builds.
func builtFields(fn *ssa.Function, typeName string, fields ...string) []string {
	found := map[string]bool{}
	var visit func(f *ssa.Function)
	visit = func(f *ssa.Function) {
		for _, b := range f.Blocks {
			for _, instr := range b.Instrs {
				fa, ok := instr.(*ssa.FieldAddr)
				if !ok {
					continue
				}
				st, ok := types.Unalias(fa.X.Type().Underlying().(*types.Pointer).Elem()).(*types.Named)
				if !ok || st.Obj().Name() != typeName || st.Obj().Pkg() == nil || !strings.HasPrefix(st.Obj().Pkg().Path(), ServicePrefix) {
					continue
				}
				field := st.Underlying().(*types.Struct).Field(fa.Field).Name()
				if !slices.Contains(fields, field) {
					continue
				}
				for _, r := range *fa.Referrers() {
					if store, ok := r.(*ssa.Store); ok && store.Addr == fa {
						if c, isConst := store.Val.(*ssa.Const); !isConst || !c.IsNil() {
							found[field] = true
						}
					}
				}
			}
		}
		for _, anon := range f.AnonFuncs {
			visit(anon)
		}
	}
	visit(fn)
	out := make([]string, 0, len(found))
	for f := range found {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// pkgPath returns the import path of fn's package ("" for a wrapper
// without one).
func pkgPath(fn *ssa.Function) string {
	if o := origin(fn); o.Pkg != nil {
		return o.Pkg.Pkg.Path()
	}
	if fn.Object() != nil && fn.Object().Pkg() != nil {
		return fn.Object().Pkg().Path()
	}
	return ""
}

// origin returns the generic function fn instantiates, or fn.
func origin(fn *ssa.Function) *ssa.Function {
	if o := fn.Origin(); o != nil {
		return o
	}
	return fn
}

// ShortName returns fn's name qualified by package names instead of import
// paths, without type arguments: "(*store.Table).GetMany",
// "store.queryIndex", "(*sweep.run).requeue$1".
func ShortName(fn *ssa.Function) string {
	fn = origin(fn)
	top := fn
	for top.Parent() != nil {
		top = top.Parent()
	}
	suffix := strings.TrimPrefix(fn.Name(), top.Name())
	qual := func(p *types.Package) string { return p.Name() }
	if recv := top.Signature.Recv(); recv != nil {
		return "(" + types.TypeString(recv.Type(), qual) + ")." + top.Name() + suffix
	}
	if top.Pkg != nil {
		return top.Pkg.Pkg.Name() + "." + top.Name() + suffix
	}
	return top.Name() + suffix
}
