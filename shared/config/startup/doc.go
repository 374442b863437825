// Package startup is the cold start every Hookwall Lambda function shares:
// read the function's settings from the environment, log JSON to standard
// output at the settings' LOG_LEVEL (with the load's deprecation warnings),
// build the function's handler, log the start-up line "<name>: started"
// with the release it runs (release.Version) and hand the handler to the
// Lambda runtime. A failure to load or to build is logged once and exits
// with status 1. Each functions/<name>/main.go is one call of [Run].
package startup
