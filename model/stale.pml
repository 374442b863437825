/*
 * stale.pml: a replay racing its own dead letter (issue #29 item 4), checked
 * exhaustively by spin. A companion of hookwall.pml (see model/README.md,
 * "Lives of an event"): hookwall.pml counts the messages of the queues
 * without telling them apart, so the generation they carry is modelled here,
 * on one event key, with everything else of the protocol cut down to what
 * the race needs.
 *
 * What it is
 *   The record of one event (store.Record: status, generation, attempts),
 *   the main queue and the dead-letter queue as counts of messages BY
 *   GENERATION (webhook.Envelope.Generation: absent is 0), two processors
 *   (dispatch on the kernel: AcquireGeneration, the handler, Retry / Fail and
 *   the dead letter of the message's own body), the compensator
 *   (AcquireCompensationGeneration, the undo of the journaled step, or the
 *   requeue of a record the processor never finished), the operator who
 *   fixes the target and then replays the finished event (store.Table.Replay,
 *   as the recovery job, the page's Replay and `hookwall replay` do: a new
 *   life, generation + 1, and a send of rec.Envelope(), which may fail), and
 *   the sweeper, which re-sends the record's current envelope when a
 *   RECEIVED or RETRY record has no message of its generation (the replay's
 *   failed send).
 *   The handler is the redo tests' (shared/ops/recovery): create-lead (a step
 *   journaled with its result, undone by deleting the lead), then a call that
 *   fails while the target is broken. The target is broken in the first life
 *   and fixed before the replay, so every later life succeeds: nothing of it
 *   may ever be compensated.
 *
 * Abstraction: every store and queue call is one atomic step; leases do not
 * run out and calls do not fail (hookwall.pml checks those faults); the
 * processor's message of a settled attempt is deleted, a RETRY's comes back.
 *
 * Properties
 *   - assertion "never a later life compensated" (gen == 0 when the
 *     compensator takes the record): a dead letter of the first life must
 *     not compensate the replayed event;
 *   - ltl replayed_succeeds: <> [] (st == SUCCEEDED): the replayed event is
 *     processed (not dropped as a duplicate of a COMPENSATED record).
 *
 * Flags: -DNO_GENERATION (the processor and the compensator before the
 * generation: a message of any generation takes the record; the assertion
 * fails and the liveness property has a counterexample: the stale dead
 * letter compensates the replayed RECEIVED record as a redrive, the replay's
 * message is then acknowledged as a duplicate of a COMPENSATED event),
 * -DREPLAYS=n (default 1), -DDUPS=n (extra first-life messages on the main
 * queue, a take-over's or the sweeper's duplicate send, default 1),
 * -DMAXATT=n (default 2), -DNO_ASSERT (the assertion left out, so that a
 * liveness search shows the cycle rather than the assertion).
 */

#ifndef REPLAYS
#define REPLAYS 1
#endif
#ifndef DUPS
#define DUPS 1
#endif
#ifndef MAXATT
#define MAXATT 2
#endif
#define GENS (REPLAYS+1)

#define RECEIVED     1
#define PROCESSING   2
#define RETRY        3
#define SUCCEEDED    4
#define FAILED       5
#define COMPENSATING 6
#define COMPENSATED  7
#define DEAD         8
#define terminal(s)  (s == SUCCEEDED || s == COMPENSATED || s == DEAD)

/* the record */
byte st = RECEIVED;
byte gen;            /* store.AttrGeneration: absent (0) from the claim */
byte att;            /* attempts */
byte c_from;         /* the status AcquireCompensation took the record from */
/* the journal of create-lead and the outside system */
bool jdone;          /* STEP#crm.lead#create-lead journaled */
bool jundone;        /* its $undo journaled: the step is not done (JournalEntry.Run) */
byte leads;          /* live leads the CRM holds */
bool broken = true;  /* the target refuses (the welcome mail's 400) */
/* the queues: messages by generation */
byte mq[GENS];       /* main queue */
byte dq[GENS];       /* dead-letter queue */
byte replays = REPLAYS;
bool sendfail = true; /* one replay's send may fail (the sweeper's job then) */

/* the kernel's acquisition of a message of generation g: stale when the
   record lives a newer life (store.Record.StaleFor) */
#ifdef NO_GENERATION
#define stalefor(g) false
#else
#define stalefor(g) (gen > g)
#endif

/* pick a message from q (one of the generations holding one) into g */
#define pick(q, g) \
  if \
  :: q[0] > 0 -> q[0]--; g = 0 \
  :: GENS > 1 && q[1] > 0 -> q[1]--; g = 1 \
  :: GENS > 2 && q[2] > 0 -> q[2]--; g = 2 \
  fi

proctype Processor(byte me) {
  byte g;
  bool mine;
end_idle:
  do
  :: atomic {
       (mq[0] + mq[1] + (GENS > 2 && mq[2]) > 0) ->
       pick(mq, g);
       mine = false;
       /* store.(*Table).AcquireGeneration */
       if
       :: stalefor(g) ->
            printf("@ P%d: message of generation %d stale (record %d): acknowledged\n", me, g, gen)
       :: !stalefor(g) && (st == RECEIVED || st == RETRY) ->
            st = PROCESSING; att++; mine = true;
            printf("@ P%d: lease on generation %d (message %d), attempt %d\n", me, gen, g, att)
       :: !stalefor(g) && terminal(st) ->
            printf("@ P%d: duplicate of a terminal record (%d): acknowledged\n", me, st)
       :: !stalefor(g) && (st == FAILED || st == COMPENSATING) ->
            dq[g]++;              /* AcquireFailedState: the body to the DLQ */
            printf("@ P%d: record failed: message %d dead-lettered\n", me, g)
       :: !stalefor(g) && st == PROCESSING ->
            mq[g]++               /* busy: comes back */
       fi
     }
     if
     :: mine ->
          atomic {
            /* process.StepResult(create-lead): a step not done (or undone) runs */
            if
            :: !jdone || jundone -> leads++; jdone = true; jundone = false;
                 printf("@ P%d: create-lead: lead made (%d live)\n", me, leads)
            :: else
            fi;
            if
            :: !broken -> st = SUCCEEDED; printf("@ P%d: SUCCEEDED\n", me)
            :: broken && att < MAXATT -> st = RETRY; mq[g]++; printf("@ P%d: RETRY\n", me)
            :: broken && att >= MAXATT -> st = FAILED; dq[g]++;
                 printf("@ P%d: FAILED, dead letter of generation %d sent\n", me, g)
            fi
          }
     :: else
     fi
  od
}

proctype Compensator() {
  byte g;
  bool mine;
end_idle:
  do
  :: atomic {
       (dq[0] + dq[1] + (GENS > 2 && dq[2]) > 0) ->
       pick(dq, g);
       mine = false;
       /* store.(*Table).AcquireCompensationGeneration */
       if
       :: stalefor(g) ->
            printf("@ C: dead letter of generation %d stale (record %d): acknowledged (StaleDeadLetters)\n", g, gen)
       :: !stalefor(g) && (st == FAILED || st == RECEIVED || st == RETRY) ->
            c_from = st; st = COMPENSATING; mine = true;
            printf("@ C: compensation lease from status %d, generation %d (dead letter %d)\n", c_from, gen, g);
#ifndef NO_ASSERT
            assert(gen == 0)      /* never a later life compensated */
#else
            skip
#endif
       :: !stalefor(g) && terminal(st) ->
            printf("@ C: record terminal (%d): acknowledged\n", st)
       :: !stalefor(g) && (st == PROCESSING || st == COMPENSATING) ->
            dq[g]++               /* busy: comes back */
       fi
     }
     if
     :: mine ->
          atomic {
            if
            :: jdone && !jundone -> leads--; jundone = true; st = COMPENSATED;
                 printf("@ C: create-lead undone (%d live): COMPENSATED\n", leads)
            :: !(jdone && !jundone) && c_from != FAILED -> st = RETRY; mq[g]++;
                 printf("@ C: nothing to compensate: requeued\n")
            :: !(jdone && !jundone) && c_from == FAILED -> st = DEAD;
                 printf("@ C: nothing to compensate: DEAD\n")
            fi;
            c_from = 0
          }
     :: else
     fi
  od
}

/* the operator: fixes the target, then replays the finished event (the
   recovery job, the page, `hookwall replay`: store.(*Table).Replay) */
proctype Operator() {
end_idle:
  do
  :: atomic {
       replays > 0 && (st == FAILED || st == COMPENSATED || st == DEAD) ->
       broken = false; replays--;
       st = RECEIVED; att = 0; gen++;
       printf("@ O: target fixed; replayed from the finished record: RECEIVED, generation %d\n", gen);
       if
       :: mq[gen]++; printf("@ O: replay's envelope sent (generation %d)\n", gen)
       :: sendfail -> sendfail = false; printf("@ O: replay's send failed\n")
       fi
     }
  od
}

/* the sweeper: a RECEIVED or RETRY record without a message of its
   generation, no lease (the replay's failed send) gets rec.Envelope() */
proctype Sweeper() {
end_idle:
  do
  :: atomic {
       (st == RECEIVED || st == RETRY) && mq[gen] == 0 ->
       mq[gen]++; printf("@ S: stuck record re-sent (generation %d)\n", gen)
     }
  od
}

init {
  atomic {
    mq[0] = 1 + DUPS;   /* the claim's send and the duplicate sends */
    run Processor(1); run Processor(2); run Compensator(); run Operator(); run Sweeper()
  }
}

ltl replayed_succeeds { <> [] (st == SUCCEEDED) }
