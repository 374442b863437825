// Package compensatetest is the test kit for compensations, the
// compensator's counterpart of shared/engine/processtest: it runs an event
// through the real processor until the handlers fail it, then delivers its
// dead letter to the real compensator, several copies at once and with a
// crash after every compensation step if asked, and reports what happened.
//
//	srv := processtest.NewEffectServer(t, crmAPI)
//	reg := processtest.NewRegistry(t, crm.Team, processtest.Env{"CRM_LEADS_URL": srv.URL}, platform.Deps{})
//	rep := compensatetest.Run(t, reg, line.Follow, followJSON,
//		compensatetest.Redeliver(3), compensatetest.CrashAfterEachUndo())
//	// rep.Status == COMPENSATED; rep.Undone lists the undos, newest first
//
// Like processtest it runs on the in-memory store by default and on fresh
// tables in DynamoDB Local with HOOKWALL_TEST_STORE=dynamodb.
package compensatetest
