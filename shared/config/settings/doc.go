// Package settings reads the environment of every Hookwall function into
// typed, validated settings, once per cold start: [LoadReceiver] for the
// receiver, [LoadProcessor] for the processor, [LoadCompensator] for the
// compensator (dead-letter and sweep modes), and [LoadCLI] for the hookwall
// command (cmd/hookwall), which needs only some of them per subcommand. It is
// the only place that knows the variables' names; functions/*/main.go passes
// os.Getenv and the wiring consumes the result. It imports no AWS SDK and calls no os.Getenv.
//
// Conventions:
//
//   - The contract names are fixed: TABLE_NAME, QUEUE_URL, DLQ_URL,
//     EVENT_BUS_NAME, HOOKWALL_TENANTS_FILE / TENANTS_SECRET_ARN, LOG_LEVEL
//     (the SDK reads its own AWS_ENDPOINT_URL_* itself).
//   - The business handlers' settings (the examples' CRM_LEADS_URL and
//     APPROVALS_TABLE) are not read here: each team package declares its
//     own (shared/config/setting) and the wiring reads them through the getenv
//     kept in [Processor] and [Compensator].
//   - Every tuning variable is HOOKWALL_<NAME>; durations are Go durations
//     ("60s", "15m", "168h"), counts are decimal integers, switches are
//     strconv.ParseBool values.
//   - An unset or empty variable takes its default. The defaults are not
//     stated here: the caller passes the consuming package's exported
//     constants ([ReceiverDefaults] from intake.Defaults,
//     [ProcessorDefaults] from the processor's wiring.Defaults, which reads
//     shared/engine/dispatch, [CompensatorDefaults] from the compensator's
//     wiring.Defaults), so each default is stated once.
//   - Every variable is validated; the error joins one error per variable at
//     fault, each naming it.
//   - The processor's tuning variables had older names (LEASE_SECONDS,
//     RETENTION_DAYS, RETRY_BASE_SECONDS, RETRY_CAP_SECONDS, MAX_ATTEMPTS,
//     PROCESSOR_CONCURRENCY, UNHANDLED_TO_DLQ), in whole seconds or days.
//     They are deprecated and still read, in their old form, when the new
//     name is unset; each use comes back as one of the returned [Warnings],
//     which main logs once.
package settings
