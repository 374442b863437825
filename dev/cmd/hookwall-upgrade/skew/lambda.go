package skew

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/rpc"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/lambda/messages"
)

// Function is one function of one release running as a process in
// aws-lambda-go's RPC mode: the Go runtime's (go1.x) protocol, which a
// binary built without the lambda.norpc tag serves on _LAMBDA_SERVER_PORT.
type Function struct {
	// Name is "<role>@<version>", as the report and the logs name it.
	Name string

	cmd    *exec.Cmd
	client *rpc.Client
	port   int
	seq    atomic.Int64 // invocations so far
	exited chan struct{}
}

// StartFunction starts bin with env (on top of none of this process's
// environment but PATH and HOME) serving on 127.0.0.1:port, its output
// appended to logFile, and waits until it answers a ping.
func StartFunction(ctx context.Context, name, bin string, port int, env map[string]string, logFile *os.File) (*Function, error) {
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "_LAMBDA_SERVER_PORT=" + strconv.Itoa(port),
		"AWS_LAMBDA_FUNCTION_NAME=" + name}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("skew: start %s: %w", name, err)
	}
	f := &Function{Name: name, cmd: cmd, port: port, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(f.exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := rpc.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			if err = c.Call("Function.Ping", &messages.PingRequest{}, &messages.PingResponse{}); err == nil {
				f.client = c
				return f, nil
			}
			c.Close()
		}
		select {
		case <-f.exited:
			return nil, fmt.Errorf("skew: %s exited before it served (see its log %s)", name, logFile.Name())
		case <-ctx.Done():
			f.Stop()
			return nil, fmt.Errorf("skew: start %s: %w", name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			f.Stop()
			return nil, fmt.Errorf("skew: %s does not answer on port %d: %w", name, port, err)
		}
	}
}

// Invocations is how many times the function was invoked.
func (f *Function) Invocations() int64 { return f.seq.Load() }

// Port is the port the function serves on.
func (f *Function) Port() int { return f.port }

// Invoke calls the function with payload under ctx's deadline (the
// function's timeout) and returns its answer. A function error (the
// handler failed or panicked) is an error with its message.
func (f *Function) Invoke(ctx context.Context, payload []byte) (json.RawMessage, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(60 * time.Second)
	}
	req := &messages.InvokeRequest{
		Payload:            payload,
		RequestId:          f.Name + "-" + strconv.FormatInt(f.seq.Add(1), 10),
		Deadline:           messages.InvokeRequest_Timestamp{Seconds: deadline.Unix(), Nanos: int64(deadline.Nanosecond())},
		InvokedFunctionArn: "arn:aws:lambda:us-east-1:000000000000:function:" + f.Name,
	}
	var resp messages.InvokeResponse
	call := f.client.Go("Function.Invoke", req, &resp, make(chan *rpc.Call, 1))
	select {
	case <-call.Done:
	case <-ctx.Done():
		return nil, fmt.Errorf("skew: %s: task timed out: %w", f.Name, ctx.Err())
	}
	if call.Error != nil {
		return nil, fmt.Errorf("skew: invoke %s: %w", f.Name, call.Error)
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("skew: %s failed: %s: %s", f.Name, resp.Error.Type, resp.Error.Message)
	}
	return resp.Payload, nil
}

// Handler is Invoke as a raw JSON handler (localrun.JSONHandler's shape).
func (f *Function) Handler() func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		out, err := f.Invoke(ctx, raw)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

// Stop ends the process (SIGTERM, then SIGKILL after 5 s), as Lambda
// retires a container.
func (f *Function) Stop() {
	if f.client != nil {
		f.client.Close()
	}
	if f.cmd.Process == nil {
		return
	}
	_ = f.cmd.Process.Signal(os.Interrupt)
	kill := time.AfterFunc(5*time.Second, func() { _ = f.cmd.Process.Kill() })
	<-f.exited
	kill.Stop()
}

// errStopped reports a role with no function running.
var errStopped = errors.New("skew: no function runs this role")
