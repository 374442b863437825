/*
 * hookwall.pml: Hookwall's delivery protocol for ONE event key, checked
 * exhaustively by spin.
 *
 * What it is
 *   A platform that delivers one event at least once (retrying every 5xx or
 *   timeout until it gets a 2xx, plus one concurrent duplicate), two receiver
 *   Lambdas running intake.(*Handler).admit, the DynamoDB record of the key,
 *   the SQS main queue and its dead-letter queue (redrive after
 *   maxReceiveCount), two processor Lambdas running
 *   process.(*Dispatcher).process with one handler of one Step, one
 *   compensator on the DLQ running compensate.(*Compensator).compensate (undo
 *   of the journaled step, COMPENSATED / DEAD; or, for a record the
 *   processor never finished and nothing journaled, (*Compensator).requeue:
 *   RETRY and back to the main queue, at most MAXREQ times), one sweeper running
 *   sweep.(*run).record (re-enqueue or dead-letter a stuck record, fenced by
 *   store.(*Table).MarkRequeued), an outside system that deduplicates by
 *   Idempotency-Key (the step's key and the undo's own key), and an
 *   environment process for the passage of time (the re-enqueue grace, lease
 *   expiry, the outside system's dedup memory lapsing).
 *   Issue #19 adds: the target the step calls, which may go down for a while
 *   and come back (OUTAGES times); its shared breaker (shared/state/targets: closed
 *   or open, MINCALLS failures open it, one probe slot per ProbeInterval,
 *   other events' probes and failures); an operator who pauses the event's
 *   handler/tenant and resumes it, draining what was held (PAUSES times); the
 *   processor's admission before the call (open or paused => HELD: attempt
 *   refunded, message acknowledged) and after a failed call that leaves the
 *   breaker open; the sweeper releasing a due HELD record once its scope is
 *   unblocked, or as the probe carrier when a probe is due.
 *   Issue #20 adds the sweep index read from a cursor: the terminal writes
 *   keep the record's index entry, the sweeper reads each shard from a
 *   persistent cursor, passes terminal records and sees a record only while
 *   its entry is ahead of the cursor (the ghost sidx, set by every write
 *   that sets sweepAt: the claim, MarkRequeued, Resweep, Hold, Release).
 *
 * The abstraction (see model/README.md for the full list)
 *   - Every DynamoDB / SQS call is one atomic step whose outcome is chosen
 *     nondeterministically: applied and answered, applied but the answer lost
 *     (the client saw a timeout), or not applied (error). A crash of a Lambda
 *     can happen between any two calls.
 *   - Everything that goes wrong (an error, a lost answer, a crash, a lease that
 *     expires under a live holder, a handler error) spends one unit of a shared
 *     fault budget MAXFAULTS. Faults are finite in every run, which is what the
 *     liveness property assumes; with the budget spent, every call succeeds.
 *   - Time is abstract. enqueuedAt is an epoch id, fresh for every claim and
 *     take-over (the smallest id nobody refers to, so the state space is
 *     finite); claimId is folded into it (a fresh epoch per claim makes
 *     "claimId = c AND enqueuedAt = e" equivalent to "enqueuedAt = e").
 *     "The grace has passed for the current epoch" is one event that may
 *     happen only once the receiver that made the epoch (claim or take-over)
 *     is past its budget: answered, crashed, or into its undo, which runs after
 *     the budget. This is the configuration rule ReenqueueGrace > Budget and
 *     nothing more (in particular not grace > Budget + UndoTimeout).
 *   - SQS: visible messages are counted by their receive count; a receive of a
 *     message already received MAXRECV times redrives it to the DLQ. A message
 *     not deleted comes back (visibility timeout) at once; a message answered
 *     "busy" comes back once the lease it met is no longer live.
 *   - The outside system remembers a key from its first call for as long as
 *     any attempt that could call it is alive; after the event settles and all
 *     attempts are over its memory may lapse. effects counts the calls it did
 *     not deduplicate; two is a violation.
 *
 * How to run (scripts/model.sh does all of this in a temp dir; the defaults
 * of OUTAGES, PAUSES, MAXFAULTS and MAXDUPS together are too big for one
 * search, so its runs 1-6 add -DOUTAGES=0 -DPAUSES=0 to the commands below)
 *   spin -a hookwall.pml
 *   gcc -O2 -DSAFETY -DNOCLAIM -o pan pan.c && ./pan            # safety
 *   gcc -O2 -DNFAIR=4 -o pan pan.c && ./pan -a -f -N settles    # liveness
 *   spin -DNO_GRACE_FIX -DNO_SWEEPER -a hookwall.pml; gcc -O2 -DNFAIR=4 -o pan pan.c
 *   ./pan -a -f -A -N settles; spin -DNO_GRACE_FIX -DNO_SWEEPER -t -p hookwall.pml
 *   spin -DNO_REQUEUE -a hookwall.pml; gcc -O2 -DSAFETY -DNOCLAIM -o pan pan.c
 *   ./pan; spin -DNO_REQUEUE -t -p hookwall.pml     # the old compensator: DEAD
 *
 * Flags: -DNO_GRACE_FIX (the old intake: a duplicate inside the grace answers
 * 2xx without sending; a claim of unknown outcome is not undone),
 * -DSTRICT_SUCCEEDED (assert no step call at all once the record is
 * SUCCEEDED, even by a stale attempt the outside deduplicates),
 * -DMAXFAULTS=n (default 2), -DNO_SWEEPER (no sweeper: it rescues the
 * stranded claim of NO_GRACE_FIX), -DSWEEPMSGS=n (the sweeper acts while
 * fewer than n messages exist, default 1), -DSTRICT_DEAD (assert that the
 * compensator's "nothing to compensate" leaves no applied effect: fails),
 * -DMAXREQ=n (the compensator's MaxRequeues, default 2 as in the code),
 * -DNO_REQUEUE (the compensator before commit 08948cd: "nothing to
 * compensate" is always DEAD; the "requeues remain" assertion fails),
 * -DOUTAGES=n (default 1), -DPAUSES=n (default 1), -DMINCALLS=n (default 2 =
 * MAXATT), -DNO_HOLD_GUARD (the admission ignored: a call while open is
 * found), -DNO_HOLD_AFTER_CALL (hold at admission only: FAILED for an outage
 * alone is found), -DWINDOW_ROLLS (the breaker's window may restart between
 * an event's calls: FAILED for an outage alone is found), -DNO_CLAIM_INDEX
 * (the claim writes no sweep-index entry, the processor's first write
 * does: with -DNO_GRACE_FIX the stranded claim is lost again),
 * -DSWEEP_CURSOR_SKIPS (the cursor passes a due record not stuck yet
 * without a Resweep: the same), -DMOVED_ON_PASSES (the cursor passes a
 * record that moved on between the sweeper's read and its MarkRequeued or
 * Release: the same, after a take-over whose receiver dies).
 */

#ifndef MAXFAULTS
#define MAXFAULTS 2
#endif
#ifndef MAXDUPS
#define MAXDUPS   1   /* duplicate deliveries the platform may add */
#endif
#define MAXATT    2   /* process MAX_ATTEMPTS */
#ifndef SWEEPMSGS
#define SWEEPMSGS 1   /* the sweeper acts only while fewer messages exist (bound; 1: none) */
#endif
#define MAXRECV   3   /* the queue's maxReceiveCount (above MAX_ATTEMPTS) */

/* record status (webhook.Status); ABSENT: no live item */
#define ABSENT     0
#define RECEIVED   1
#define PROCESSING 2
#define RETRY      3
#define SUCCEEDED  4
#define FAILED     5
#define COMPENSATING 6
#define COMPENSATED  7
#define DEAD         8
#define HELD         9   /* webhook.StatusHeld: waits for its scope (heldOn); not terminal */
#define terminal(s)  (s == SUCCEEDED || s == COMPENSATED || s == DEAD)  /* webhook.Status.Terminal */
#define CMAXATT   2   /* compensate MaxAttempts */
#ifndef MAXREQ
#define MAXREQ    2   /* compensate MaxRequeues (as DefaultMaxRequeues): requeue while compensations <= MAXREQ */
#endif
#define CP        3   /* the compensator's lease owner id */
#ifndef OUTAGES
#define OUTAGES   1   /* times the target may go down (each outage ends: the target returns) */
#endif
#ifndef PAUSES
#define PAUSES    1   /* times the operator may pause the event's scope (each pause ends: resume) */
#endif
#ifndef MINCALLS
#define MINCALLS  2   /* targets.Config.MinCalls: failed calls in a window that open the breaker (<= MAXATT) */
#endif
/* the admission's verdicts (targets.Verdict) a processor's attempt runs under */
#define ALLOW     1
#define PROBE     2
/* heldOn, the scope a HELD record waits for (targets.Scope) */
#define ONPAUSE   1   /* handler#h / tenant#t: the paused scope */
#define ONTARGET  2   /* target#x: the target's breaker */

/* ---- the record (store.Record), sk = EVENT ---- */
byte st = ABSENT;
byte ver;          /* version */
byte enq;          /* enqueuedAt, as an epoch id (and the claimId, see above) */
byte owner;        /* leaseOwner: processor id 1..2, 0 none */
bool live;         /* leaseUntil not yet passed */
byte attempts;
bool journaled;    /* the journal item STEP#h#s of this claim */

/* ---- time ---- */
bool gracePassed;  /* now - enqueuedAt >= ReenqueueGrace, for the current epoch */
byte maker;        /* receiver whose budget covers the current epoch, 0 none */

byte faults = MAXFAULTS;
byte tmp;          /* scratch of fresh() */

/* ---- the platform ---- */
bool got2xx;
byte outstanding;  /* deliveries sent and not yet answered */
byte dups = MAXDUPS;

/* epochs a receiver still refers to: its claim's / take-over's enqueuedAt
   (for Unclaim / RevertEnqueue) and the one it saw (take-over CAS, revert) */
byte r_enq[3];
byte r_prev[3];

/* ---- SQS ---- */
byte vis[MAXRECV+1];   /* visible messages, by receive count so far */
byte park[MAXRECV+1];  /* answered "busy": visible again once that lease is not live */
byte pm[4];            /* receive count of the message processor p holds, 0 none;
                          pm[CP] = 1: the compensator holds a dead letter */
bool stale[4];         /* p's message became visible again while p still runs */
/* ---- the DLQ ---- */
byte dlqn;             /* visible dead letters */
byte dpark;            /* dead letters answered "busy": back once that lease is not live */
byte comps;            /* compensations (the record's compensations counter) */
bool undone;           /* the journal item STEP#h#s~undo (process.UndoStep) */
byte c_from;           /* webhook.Acquisition.Status: what AcquireCompensation took the record from, 0 none */
bool everfailed;       /* ghost: the record was once FAILED (store.(*Table).Fail landed) */
/* ---- the sweeper ---- */
byte s_st, s_ver, s_enq;  /* the record the sweeper read (store.(*Table).Get) */
bool sidx;             /* ghost: the record's sweep-index entry is ahead of the
                          sweeper's cursor (issue #20: sweepAt > the shard's
                          cursor). Set by every write that sets sweepAt (Claim,
                          MarkRequeued, Resweep, Hold, Release), kept by the
                          terminal writes (they leave the entry alone), cleared
                          when the sweeper's cursor passes the entry. The
                          sweeper sees only records with sidx. */

/* ---- processors ---- */
byte att_ver[4];       /* version of the lease p's attempt runs under, 0: no attempt */
byte last_acq;         /* ghost: the processor of the latest Acquire */
byte last_ver;         /* ghost: the version it set */

/* ---- the target (the outside system's availability) and shared/state/targets ---- */
bool tdown;            /* the target is down: every call to it fails, nothing applied */
byte outs = OUTAGES;   /* outages left */
bool bopen;            /* TARGET#x BREAKER: open */
byte bfails;           /* failed calls in the breaker's current window (closed) */
byte pslot;            /* open: 0 no probe due, 1 a probe due (ProbeAt <= now), 2 taken */
bool paused;           /* CONTROL PAUSE#<kind>#<name> of the event's handler/tenant */
byte pauses = PAUSES;  /* pauses left */
byte tok[3];           /* Admission.Verdict of processor p's attempt: 0 none, ALLOW, PROBE */
bool osince[3];        /* the breaker opened since p's attempt was admitted Allow (the
                          Admission's Token names the breaker state it saw; Report compares) */
byte hon;              /* heldOn of the record: 0 (not HELD), ONPAUSE, ONTARGET */
byte d_ver;            /* the held record's version the operator's drain read */

/* ---- the outside system ---- */
bool ext_seen;         /* has seen the step's Idempotency-Key */
bool ext_forgot;       /* its dedup memory of the key lapsed */
byte effects;          /* calls it applied without deduplicating */
bool ext_useen;        /* has seen the undo's own Idempotency-Key */
bool ext_uforgot;
byte ueffects;         /* undo calls it applied without deduplicating */

#define held(p)   ((owner == p) && (ver == att_ver[p]) && (st == PROCESSING))
#define msgs      (vis[0]+vis[1]+vis[2]+vis[3]+park[0]+park[1]+park[2]+park[3]+ \
                   (pm[1] > 0 && !stale[1])+(pm[2] > 0 && !stale[2]))
#define dmsgs     (dlqn+dpark+(pm[CP] > 0 && !stale[CP]))

/* the breaker opens (Transition.Opened, published hookwall.circuit.opened):
   a new window, the first probe due after ProbeInterval; attempts admitted
   Allow and still running learn it from their Report */
#define bopen_()  bopen = true; bfails = 0; pslot = 0; \
                  osince[1] = (osince[1] || tok[1] == ALLOW); osince[2] = (osince[2] || tok[2] == ALLOW)

/* the smallest epoch id nobody refers to */
inline fresh() {
  tmp = 1;
  do
  :: (tmp == enq || tmp == r_enq[1] || tmp == r_enq[2] || tmp == r_prev[1] || tmp == r_prev[2] || tmp == s_enq) -> tmp++
  :: else -> break
  od;
  assert(tmp <= 7)
}

/* the record's next version. Versions are compared for equality only (the
   fences and CASes), except that version 2 is the first lease taken on a
   fresh claim (dispatch's journal is not read for it: Attempt <= 1 and
   Version <= 2). So the successor of 1 is 2, and any other successor is the
   smallest id >= 3 nobody refers to: a hold/release cycle, which repeats for
   as long as the target is down, does not make the state space infinite. */
inline nextver() {
  if
  :: ver == 1 -> ver = 2
  :: else ->
       tmp = 3;
       do
       :: (tmp == ver || tmp == att_ver[1] || tmp == att_ver[2] || tmp == att_ver[CP] ||
           tmp == last_ver || tmp == s_ver || tmp == d_ver) -> tmp++
       :: else -> break
       od;
       assert(tmp <= 10);
       ver = tmp; tmp = 0
  fi
}

inline fault() { faults > 0 -> faults-- }

/* ======================= receivers (shared/engine/intake) ======================= */

proctype Receiver(byte me) {
end_idle:
  /* the platform delivers (a retry once the last delivery was answered
     without a 2xx, or a duplicate beside one in flight) */
  atomic {
    (!got2xx && outstanding == 0) || (outstanding == 1 && dups > 0) ->
    if
    :: outstanding == 1 -> dups--
    :: else
    fi;
    outstanding++;
    printf("@ R%d: the platform delivers the event\n", me)
  }

  /* intake.(*Handler).admit: claim -- store.(*Table).Claim, PutItem IF
     attribute_not_exists(pk) OR expiresAt < now */
  if
  :: atomic { st == ABSENT ->
       fresh(); st = RECEIVED; ver = 1; enq = tmp; r_enq[me] = tmp; tmp = 0;
       attempts = 0; gracePassed = false; maker = me;
#ifndef NO_CLAIM_INDEX
       sidx = true;                     /* sweepAt = now + SweepAfter */
#endif
       if
       :: printf("@ R%d: claim applied: RECEIVED, epoch %d\n", me, enq); goto send  /* Claimed */
       :: fault(); printf("@ R%d: claim applied, answer lost (timeout)\n", me); goto claim_unknown
       fi }
  :: atomic { fault(); printf("@ R%d: claim failed, not applied\n", me); goto r503 }
       /* not applied (error). admit also undoes it by its claim id, whose
          condition fails: that id was never written. */
  :: atomic { st != ABSENT ->           /* Duplicate (or Conflict): the old record */
       if
       :: st != RECEIVED -> printf("@ R%d: duplicate, record past RECEIVED\n", me); goto r2xx
       :: st == RECEIVED && !gracePassed -> printf("@ R%d: duplicate, RECEIVED inside the grace\n", me); goto in_grace
       :: st == RECEIVED && gracePassed -> printf("@ R%d: duplicate, RECEIVED past the grace\n", me); r_prev[me] = enq; goto takeover
       fi }
  fi;

claim_unknown:
#ifdef NO_GRACE_FIX
  goto r503                             /* old: an unknown outcome was not undone */
#else
  atomic { if :: maker == me -> maker = 0 :: else fi; goto undo }
    /* it.res.Record != nil && Outcome == 0: undo by claim id */
#endif

in_grace:
#ifdef NO_GRACE_FIX
  goto r2xx                             /* old: "duplicate acknowledged", nothing sent */
#else
  goto r503                             /* it.inFlight: 503, the platform retries */
#endif

takeover:
  /* store.(*Table).TakeOverEnqueue: swapEnqueuedAt, UpdateItem SET enqueuedAt
     IF status = RECEIVED AND enqueuedAt = <seen> */
  if
  :: atomic { st == RECEIVED && enq == r_prev[me] ->
       fresh(); enq = tmp; r_enq[me] = tmp; tmp = 0; gracePassed = false; maker = me;
       if
       :: printf("@ R%d: take-over won, epoch %d\n", me, enq); goto send   /* won: this delivery sends */
       :: fault(); printf("@ R%d: take-over applied, answer lost\n", me); r_enq[me] = 0; goto r503   /* it.err, no undo */
       fi }
  :: atomic { !(st == RECEIVED && enq == r_prev[me]) ->   /* lost the CAS */
       if
       :: st == RECEIVED || st == ABSENT -> printf("@ R%d: take-over lost, still RECEIVED or gone\n", me); goto r503  /* it.inFlight */
       :: else -> printf("@ R%d: take-over lost, record moved on\n", me); goto r2xx
       fi }
  :: atomic { fault(); printf("@ R%d: take-over failed, not applied\n", me); goto r503 }
  fi;

send:
  /* Queue.Send -- queue.(*Queue).Send, SendMessageBatch */
  if
  :: atomic { vis[0]++; printf("@ R%d: sent\n", me); goto r2xx }
  :: atomic { fault(); printf("@ R%d: send failed, nothing sent\n", me);
       if :: maker == me -> maker = 0 :: else fi; goto undo }
  :: atomic { fault(); vis[0]++; printf("@ R%d: sent, but the client saw a timeout\n", me);
       if :: maker == me -> maker = 0 :: else fi; goto undo }
  :: atomic { fault(); printf("@ R%d: dies before sending\n", me); goto crash }
  :: atomic { fault(); vis[0]++; printf("@ R%d: sent, then dies before answering\n", me); goto crash }
  fi;

undo:
  /* intake.(*Handler).undo: after the budget, on its own context */
  if
  :: r_prev[me] != 0 -> goto revert
  :: else
  fi;
  /* store.(*Table).Unclaim: DeleteItem IF status = RECEIVED AND version = 1
     AND claimId = c AND enqueuedAt = e */
  if
  :: atomic { st == RECEIVED && ver == 1 && enq == r_enq[me] ->
       /* deleted (answered, or the answer lost: the same state) */
       st = ABSENT; ver = 0; enq = 0; attempts = 0; gracePassed = false; maker = 0;
       sidx = false;                    /* the item and its index entry are gone */
       printf("@ R%d: Unclaim deleted the record\n", me); goto r503 }
  :: atomic { !(st == RECEIVED && ver == 1 && enq == r_enq[me]) ->
       printf("@ R%d: Unclaim: condition failed, left in place\n", me); goto r503 }
  :: atomic { fault(); printf("@ R%d: Unclaim failed, not applied\n", me); goto r503 }
  fi;

revert:
  /* store.(*Table).RevertEnqueue: swapEnqueuedAt back to the epoch seen */
  if
  :: atomic { st == RECEIVED && enq == r_enq[me] ->
       enq = r_prev[me]; gracePassed = true;  /* that epoch's grace had passed */
       printf("@ R%d: take-over reverted to epoch %d\n", me, enq); goto r503 }
  :: atomic { !(st == RECEIVED && enq == r_enq[me]) -> printf("@ R%d: revert: condition failed\n", me); goto r503 }
  :: atomic { fault(); printf("@ R%d: revert failed, not applied\n", me); goto r503 }
  fi;

r2xx:
  /* the provider's success reply. What a 2xx promises: a message sent (on
     the queue, held by a processor, or already redriven to the DLQ) or a
     record past RECEIVED. */
  atomic {
    assert(st != RECEIVED || msgs > 0 || dmsgs > 0);
    got2xx = true; outstanding--;
    printf("@ R%d: answers 2xx (record status %d, messages %d)\n", me, st, msgs);
    if :: maker == me -> maker = 0 :: else fi;
    r_enq[me] = 0; r_prev[me] = 0;
    goto end_idle
  }
r503:
  atomic {
    outstanding--;
    printf("@ R%d: answers 503\n", me);
    if :: maker == me -> maker = 0 :: else fi;
    r_enq[me] = 0; r_prev[me] = 0;
    goto end_idle
  }
crash:
  /* no answer: the platform times out and retries */
  atomic {
    outstanding--;
    printf("@ R%d: no answer (the platform times out)\n", me);
    if :: maker == me -> maker = 0 :: else fi;
    r_enq[me] = 0; r_prev[me] = 0;
    goto end_idle
  }
}

/* ===================== processors (shared/engine/process) ====================== */

/* the message comes back (not acknowledged: a batch item failure, or the
   Lambda died); a stale receipt handle returns nothing */
#define giveback() if :: !stale[me] -> vis[pm[me]]++ :: else fi; \
                   pm[me] = 0; stale[me] = false; att_ver[me] = 0; tok[me] = 0; osince[me] = false
/* acknowledged: DeleteMessage (a stale receipt handle deletes nothing) */
#define ack()      pm[me] = 0; stale[me] = false; att_ver[me] = 0; tok[me] = 0; osince[me] = false

inline take(k) {
  if
  :: k < MAXRECV -> pm[me] = k + 1
  :: else -> dlqn++; printf("@ P%d: message redriven to the DLQ\n", me); goto end_idle  /* SQS redrive policy: maxReceiveCount exceeded */
  fi
}

proctype Processor(byte me) {
  byte on;   /* the scope the attempt is held on (ONPAUSE, ONTARGET), 0 none */
end_idle:
  /* SQS ReceiveMessage (the Lambda event source; one message is enough) */
  atomic {
    if
    :: vis[0] > 0 -> vis[0]--; take(0)
    :: vis[1] > 0 -> vis[1]--; take(1)
    :: vis[2] > 0 -> vis[2]--; take(2)
    :: vis[3] > 0 -> vis[3]--; take(3)
    :: park[0] > 0 && !(st == PROCESSING && live) -> park[0]--; take(0)
    :: park[1] > 0 && !(st == PROCESSING && live) -> park[1]--; take(1)
    :: park[2] > 0 && !(st == PROCESSING && live) -> park[2]--; take(2)
    :: park[3] > 0 && !(st == PROCESSING && live) -> park[3]--; take(3)
    fi
  }

  /* process.(*Dispatcher).process: store.(*Table).Acquire, UpdateItem IF
     status IN (RECEIVED, RETRY) OR (PROCESSING AND leaseUntil < now) */
  if
  :: atomic {
       if
       :: st == RECEIVED || st == RETRY || (st == PROCESSING && !live) ->
            st = PROCESSING; nextver(); attempts++; owner = me; live = true; att_ver[me] = ver;
#ifdef NO_CLAIM_INDEX
            sidx = true;   /* the defect: the index entry paid by the processor's first write */
#endif
            last_acq = me; last_ver = ver;
            printf("@ P%d: lease acquired, attempt %d\n", me, attempts)
       :: terminal(st) -> printf("@ P%d: already terminal (%d): ack\n", me, st); ack(); goto end_idle  /* AcquireDone */
       :: st == PROCESSING && live ->                    /* AcquireBusy: ChangeVisibility(lease left + 1 s) */
            printf("@ P%d: busy elsewhere\n", me); park[pm[me]]++; pm[me] = 0; goto end_idle
       :: st == FAILED || st == COMPENSATING -> printf("@ P%d: record FAILED or COMPENSATING: dead-letter\n", me); goto dlq  /* AcquireFailedState */
       :: st == ABSENT -> printf("@ P%d: no record: ack\n", me); ack(); goto end_idle  /* AcquireMissing */
       :: st == HELD ->   /* AcquireHeld: acknowledged; the drain or the sweeper sends it again */
            printf("@ P%d: record HELD: ack\n", me); ack(); goto end_idle
       fi }
  :: atomic { fault(); printf("@ P%d: acquire failed or died\n", me); giveback(); goto end_idle }
  fi;

  /* process.(*handlerRun).step: attempt.load reads the journal once per
     attempt, not on attempt 1 (att_ver == 2 is attempt 1: RECEIVED v1 -> v2) */
  if
  :: atomic { att_ver[me] > 2 && journaled -> goto complete }  /* journaled: skipped */
  :: atomic { !(att_ver[me] > 2 && journaled) -> skip }
  :: atomic { fault(); goto retry_or_fail }                    /* load failed */
  fi;

  /* dispatch, before the handler run (not journaled done): targets.Gate.Admit
     for Subject{handler, tenant, target}: a paused scope (handler, tenant,
     target) => Hold; the breaker open => Probe for the one caller that wins
     the interval's probe slot (a conditional write on ProbeAt), else Hold;
     closed => Allow. The pause and breaker reads are one atomic step here
     (the code caches them <= 2 s / 1 s: a call right after a pause is
     allowed; no property below depends on it) */
  if
  :: atomic { fault(); printf("@ P%d: admission failed\n", me); goto retry_or_fail }   /* Admit errored: a retryable error */
  :: atomic {
#ifdef NO_HOLD_GUARD
       tok[me] = ALLOW                                     /* the defect: the admission is ignored */
#else
       if
       :: paused -> printf("@ P%d: admission: paused: hold\n", me); on = ONPAUSE; goto hold
       :: !paused && bopen && pslot == 1 -> pslot = 2; tok[me] = PROBE; printf("@ P%d: admission: the probe of this interval\n", me)
       :: !paused && bopen && pslot != 1 -> printf("@ P%d: admission: circuit open: hold\n", me); on = ONTARGET; goto hold
       :: !paused && !bopen -> tok[me] = ALLOW
       fi
#endif
     }
  fi;

  /* the step's fn: the outside call with Idempotency-Key =
     process.IdempotencyKey(event key, handler, step) (through the call
     recorder's transport) */
  if
  :: atomic { fault(); printf("@ P%d: step call failed, not applied\n", me); goto report_fail }   /* error (5xx, reset), not applied */
  :: atomic { fault(); goto permanent }                   /* process.Permanent, not applied */
  :: atomic { fault(); giveback(); goto end_idle }        /* died before the call */
  :: atomic { tdown ->                                    /* the target is down: the call fails, nothing applied */
       printf("@ P%d: step call fails: the target is down\n", me);
       assert(tok[me] == PROBE || !bopen || osince[me]);  /* no call admitted while open, but the probe */
       goto report_fail }
  :: atomic { !tdown ->
#ifdef STRICT_SUCCEEDED
       assert(st != SUCCEEDED);
#endif
       if
       :: !ext_seen -> ext_seen = true; effects++
       :: ext_seen && ext_forgot -> ext_forgot = false; effects++
       :: else                                          /* deduplicated by key */
       fi;
       printf("@ P%d: step call (record status %d); effects %d\n", me, st, effects);
       assert(tok[me] == PROBE || !bopen || osince[me]);  /* no call admitted while open, but the probe */
       assert(effects <= 1);
       if
       :: skip                                          /* done */
       :: fault(); goto report_fail                     /* applied, client saw a timeout */
       fi }
  fi;

  /* targets.Gate.Report(ok): a probe's success closes the breaker
     (Transition.Closed, published hookwall.circuit.closed); an Allow's
     success changes nothing here (successes are not counted: the breaker
     of the model opens at least as easily as the code's rate rule) */
  if
  :: atomic { tok[me] == PROBE ->
       if
       :: bopen -> bopen = false; bfails = 0; pslot = 0; printf("@ P%d: probe ok: circuit closed\n", me)
       :: else
       fi }
  :: atomic { tok[me] == PROBE && faults > 0 -> faults--; printf("@ P%d: report failed\n", me) }   /* the breaker stays open */
  :: else
  fi;

  /* attempt.save -- store.(*Table).SaveStep: TransactWriteItems(ConditionCheck
     leaseOwner, version, PROCESSING; Put STEP#h#s) */
  if
  :: atomic {
       if
       :: held(me) ->
            assert(last_acq == me && last_ver == att_ver[me]);  /* only the latest lease writes */
            assert(!journaled);                                 /* never journaled twice */
            journaled = true; printf("@ P%d: step journaled\n", me)
       :: else -> printf("@ P%d: journal write fenced off: lease lost\n", me); giveback(); goto end_idle
       fi }
  :: atomic { fault(); goto retry_or_fail }                     /* error, not applied */
  :: atomic { fault();                                          /* applied, answer lost */
       if
       :: held(me) -> assert(last_acq == me && last_ver == att_ver[me]); assert(!journaled); journaled = true
       :: else
       fi;
       goto retry_or_fail }
  :: atomic { fault(); giveback(); goto end_idle }              /* died */
  fi;

complete:
  /* process.(*Dispatcher).finish, herr == nil: store.(*Table).Complete, fenced */
  if
  :: atomic {
       if
       :: held(me) ->
            assert(last_acq == me && last_ver == att_ver[me]);
            assert(journaled);
            st = SUCCEEDED; nextver(); owner = 0; live = false; printf("@ P%d: SUCCEEDED\n", me)
       :: else -> printf("@ P%d: complete fenced off: lease lost\n", me); giveback(); goto end_idle
       fi }
  :: atomic { fault(); giveback(); goto end_idle }              /* error (not applied) or died: Errored */
  :: atomic { fault(); if :: held(me) -> st = SUCCEEDED; nextver(); owner = 0; live = false :: else fi;
       giveback(); goto end_idle }                              /* applied, answer lost: Errored */
  fi;
  goto acked;

report_fail:
  /* targets.Gate.Report(failed): the target was unavailable (timeout,
     connection error, 429, 5xx). A failed probe keeps the breaker open until
     the next interval; an Allow's failure counts in the window and may open
     the breaker (Transition.Opened). When the breaker is open after this
     report, or was opened since the admission (the probe failed, this
     failure opened it, or others opened it while the call ran: the
     Admission's Token carries the breaker state seen; Report compares),
     the attempt settles HELD on the target like a held admission, its
     attempt refunded: the outage is the breaker's, not the event's (with
     -DNO_HOLD_AFTER_CALL, the plan's §3 read literally, it settles
     RETRY/FAILED as any retryable error). */
  if
  :: atomic { fault(); printf("@ P%d: report failed\n", me); goto retry_or_fail }   /* not counted */
  :: atomic {
       if
       :: tok[me] == PROBE && bopen -> pslot = 0; printf("@ P%d: probe failed: still open\n", me)
#ifndef NO_HOLD_AFTER_CALL
            ; on = ONTARGET; goto hold
#endif
       :: tok[me] == ALLOW && !bopen && !osince[me] && bfails + 1 >= MINCALLS ->
            bopen_(); printf("@ P%d: circuit opened\n", me)
#ifndef NO_HOLD_AFTER_CALL
            ; on = ONTARGET; goto hold
#endif
       :: tok[me] == ALLOW && !bopen && !osince[me] && bfails + 1 < MINCALLS -> bfails++
       :: tok[me] == ALLOW && (bopen || osince[me]) ->   /* others opened it since the admission */
            printf("@ P%d: the circuit is open (opened by others)\n", me)
#ifndef NO_HOLD_AFTER_CALL
            ; on = ONTARGET; goto hold
#endif
       :: else                                           /* a probe after others closed the breaker: nothing */
       fi;
       goto retry_or_fail }
  fi;

hold:
  /* store.(*Table).Hold(lease, webhook.Hold{Reason, On, Target, RecheckAt,
     RetainUntil}), fenced on the lease: PROCESSING -> HELD, attempts - 1 (no
     call made, or a call the breaker took), lease cleared, heldOn/heldSince/
     recheckAt set, sweepAt = recheckAt, expiresAt >= now + retention; the
     message is acknowledged (kernel verdict Held) */
  if
  :: atomic {
       if
       :: held(me) ->
            assert(last_acq == me && last_ver == att_ver[me]);
            st = HELD; hon = on; on = 0; nextver(); owner = 0; live = false; attempts--; sidx = true;
            printf("@ P%d: HELD on %d (attempts %d)\n", me, hon, attempts)
       :: else -> printf("@ P%d: hold fenced off: lease lost\n", me); on = 0; giveback(); goto end_idle
       fi }
  :: atomic { fault(); on = 0; giveback(); goto end_idle }      /* error (not applied) or died: Errored */
  :: atomic { fault();                                          /* applied, answer lost: Errored */
       if
       :: held(me) -> assert(last_acq == me && last_ver == att_ver[me]); st = HELD; hon = on; nextver(); owner = 0; live = false; attempts--; sidx = true
       :: else
       fi;
       on = 0; giveback(); goto end_idle }
  fi;
  goto acked;

retry_or_fail:
  /* finish with a retryable error: RETRY (with backoff) below MaxAttempts */
  if
  :: atomic { held(me) && attempts >= MAXATT -> goto fail }
  :: atomic { held(me) && attempts < MAXATT ->
       /* store.(*Table).Retry, fenced; ChangeVisibility(Backoff): the message comes back */
       assert(last_acq == me && last_ver == att_ver[me]);
       st = RETRY; nextver(); owner = 0; live = false; printf("@ P%d: RETRY\n", me);
       giveback(); goto end_idle }
  :: atomic { !held(me) -> giveback(); goto end_idle }          /* lease lost */
  :: atomic { fault(); giveback(); goto end_idle }              /* error or died */
  fi;

permanent:
  if
  :: atomic { held(me) -> goto fail }
  :: atomic { !held(me) -> giveback(); goto end_idle }
  :: atomic { fault(); giveback(); goto end_idle }
  fi;

fail:
  /* store.(*Table).Fail, fenced: FAILED with lastError */
  atomic {
    if
    :: held(me) ->
         assert(last_acq == me && last_ver == att_ver[me]);
         assert(faults < MAXFAULTS);   /* an outage or a pause alone never makes it FAILED */
         st = FAILED; nextver(); owner = 0; live = false; everfailed = true; printf("@ P%d: FAILED\n", me)
    :: else -> giveback(); goto end_idle
    fi
  }
dlq:
  /* DLQ.SendDeadLetter, then acknowledge; if the send fails the message
     comes back and the next delivery finds FAILED and dead-letters it */
  if
  :: atomic { dlqn++; printf("@ P%d: dead letter sent\n", me); ack(); goto end_idle }
  :: atomic { fault(); giveback(); goto end_idle }              /* send failed, or died */
  :: atomic { fault(); dlqn++; giveback(); goto end_idle }      /* sent, answer lost (or died before the ack) */
  fi;

acked:
  /* not a batch item failure: the event source deletes the message */
  if
  :: atomic { ack(); goto end_idle }
  :: atomic { fault(); giveback(); goto end_idle }              /* died before the batch response */
  fi
}

/* ===================== the compensator (shared/engine/compensate) ===================== */

#define cheld     ((owner == CP) && (ver == att_ver[CP]) && (st == COMPENSATING))
/* Result.Ack false: the dead letter comes back (a stale handle returns nothing) */
#define cgiveback() if :: !stale[CP] -> dlqn++ :: else fi; pm[CP] = 0; stale[CP] = false; att_ver[CP] = 0; c_from = 0
/* Result.Ack true: the dead letter is deleted */
#define cack()      pm[CP] = 0; stale[CP] = false; att_ver[CP] = 0; c_from = 0
/* (*Compensator).requeueable: the processor never finished the record (it
   was not FAILED, nor being compensated already) and the requeues are not
   used up (lease.Attempt = compensations <= MaxRequeues) */
#define requeueable ((c_from == RECEIVED || c_from == RETRY || c_from == PROCESSING) && comps <= MAXREQ)
/* the fenced writes of the compensator land only under the latest lease */
#define cfence()    assert(last_acq == CP && last_ver == att_ver[CP])

proctype Compensator(byte me) {
end_idle:
  /* SQS ReceiveMessage on the DLQ (the compensator Lambda's event source) */
  atomic {
    if
    :: dlqn > 0 -> dlqn--
    :: dpark > 0 && !(live && (st == PROCESSING || st == COMPENSATING)) -> dpark--
    fi;
    pm[CP] = 1
  }

  /* compensate.(*Compensator).compensate: store.(*Table).AcquireCompensation,
     UpdateItem IF status IN (FAILED, RECEIVED, RETRY) OR (status IN
     (PROCESSING, COMPENSATING) AND leaseUntil < now) */
  if
  :: atomic {
       if
       :: st == FAILED || st == RECEIVED || st == RETRY || ((st == PROCESSING || st == COMPENSATING) && !live) ->
            printf("@ C: compensation lease acquired from status %d\n", st);
            c_from = st;                                        /* Acquisition.Status */
            st = COMPENSATING; nextver(); comps++; owner = CP; live = true; att_ver[CP] = ver;
            last_acq = CP; last_ver = ver
       :: terminal(st) -> printf("@ C: record terminal (%d): dead letter acknowledged\n", st); cack(); goto end_idle  /* AcquireDone */
       :: (st == PROCESSING || st == COMPENSATING) && live ->   /* AcquireBusy: ChangeVisibility(lease left + 1 s) */
            printf("@ C: busy elsewhere\n"); dpark++; pm[CP] = 0; goto end_idle
       :: st == ABSENT -> printf("@ C: no record: acknowledged\n"); cack(); goto end_idle   /* AcquireMissing */
       :: st == HELD ->   /* AcquireHeld (not in AcquireCompensation's condition): acknowledged */
            printf("@ C: record HELD: acknowledged\n"); cack(); goto end_idle
       fi }
  :: atomic { fault(); printf("@ C: acquire failed or died\n"); cgiveback(); goto end_idle }   /* Errored */
  fi;

  /* compensate.(*run).run: store.(*Table).Journal, then (*run).plan */
  if
  :: atomic { !journaled -> printf("@ C: nothing to compensate (from status %d, compensations %d, effects %d)\n", c_from, comps, effects);
#ifndef NO_REQUEUE
       /* (*Compensator).finish, herr == nil && nothing: requeueable -> requeue */
       if
       :: requeueable -> goto crequeue
       :: else
       fi;
#endif
       /* Dead "nothing to compensate". An event the processor never failed
          (never FAILED) is not given up this way while requeues remain,
          unless a compensation of it was already under way (from
          COMPENSATING: not requeueable, the code's choice). Fails with
          -DNO_REQUEUE (the compensator before 08948cd). */
       assert(everfailed || c_from == COMPENSATING || comps > MAXREQ);
#ifdef STRICT_DEAD
       assert(effects == 0);   /* no applied effect is left behind un-journaled */
#endif
       goto cdead }                                               /* nothing: Dead with a reason */
  :: atomic { journaled && undone -> printf("@ C: undo already journaled: skipped\n"); goto compensated }
  :: atomic { journaled && !undone -> skip }
  :: atomic { fault(); goto cretry }                              /* load journal failed */
  fi;

  /* compensate.(*run).undo: the registration's Compensation, calling the
     outside with the undo's own Idempotency-Key */
  if
  :: atomic { fault(); goto cretry }                              /* error, not applied */
  :: atomic { fault(); printf("@ C: undo failed permanently\n"); goto cdead }   /* process.Permanent: Dead */
  :: atomic { fault(); cgiveback(); goto end_idle }               /* died before the call */
  :: atomic {
       if
       :: !ext_useen -> ext_useen = true; ueffects++
       :: ext_useen && ext_uforgot -> ext_uforgot = false; ueffects++
       :: else                                                    /* deduplicated by key */
       fi;
       printf("@ C: undo call (record status %d); undo effects %d\n", st, ueffects);
       assert(ueffects <= 1);
       if
       :: skip
       :: fault(); goto cretry                                    /* applied, client saw a timeout */
       fi }
  fi;

  /* store.(*Table).SaveStep of process.UndoStep, fenced on owner, version, COMPENSATING */
  if
  :: atomic {
       if
       :: cheld -> cfence(); assert(!undone); undone = true; printf("@ C: undo journaled\n")
       :: else -> printf("@ C: undo journal fenced off: lease lost\n"); cgiveback(); goto end_idle   /* leaseLost */
       fi }
  :: atomic { fault(); goto cretry }                              /* error, not applied */
  :: atomic { fault();                                            /* applied, answer lost */
       if :: cheld -> cfence(); assert(!undone); undone = true :: else fi;
       goto cretry }
  :: atomic { fault(); cgiveback(); goto end_idle }               /* died */
  fi;

compensated:
  /* compensate.(*Compensator).finish: store.(*Table).Compensated, fenced */
  if
  :: atomic {
       if
       :: cheld -> cfence(); assert(journaled && undone);
            st = COMPENSATED; nextver(); owner = 0; live = false; printf("@ C: COMPENSATED\n")
       :: else -> printf("@ C: compensated fenced off\n"); cgiveback(); goto end_idle
       fi }
  :: atomic { fault(); cgiveback(); goto end_idle }               /* error or died: Errored */
  :: atomic { fault(); if :: cheld -> st = COMPENSATED; nextver(); owner = 0; live = false :: else fi;
       cgiveback(); goto end_idle }                               /* applied, answer lost */
  fi;
  goto cacked;

crequeue:
  /* (*Compensator).requeue: store.(*Table).RequeueCompensation, fenced on
     owner, version, COMPENSATING: COMPENSATING -> RETRY, the lease cleared,
     lastError = "requeued by the compensator ..." */
  if
  :: atomic {
       if
       :: cheld -> cfence(); st = RETRY; nextver(); owner = 0; live = false; printf("@ C: requeue: RETRY\n")
       :: else -> printf("@ C: requeue fenced off: lease lost\n"); cgiveback(); goto end_idle   /* leaseLost */
       fi }
  :: atomic { fault(); cgiveback(); goto end_idle }               /* error (not applied) or died: Errored */
  :: atomic { fault(); if :: cheld -> cfence(); st = RETRY; nextver(); owner = 0; live = false :: else fi;
       cgiveback(); goto end_idle }                               /* applied, answer lost: Errored */
  fi;
  /* Config.Requeue.Send (queue.(*Queue).Send to the MAIN queue) of the
     dead letter's original envelope; Ack only when it was sent */
  if
  :: atomic { vis[0]++; printf("@ C: requeued on the main queue\n"); goto cacked }   /* Requeued: Ack */
  :: atomic { fault(); printf("@ C: requeue send failed: the dead letter comes back\n"); cgiveback(); goto end_idle }  /* Errored */
  :: atomic { fault(); vis[0]++; printf("@ C: requeue sent, answer lost\n"); cgiveback(); goto end_idle }  /* Errored, yet sent */
  fi;

cretry:
  /* finish with a retryable error: (*Compensator).retry below MaxAttempts
     (store.(*Table).RetryCompensation: COMPENSATING, lease released;
     ChangeVisibility(Backoff)), else Dead "attempts exhausted" */
  if
  :: atomic { cheld && comps >= CMAXATT -> goto cdead }
  :: atomic { cheld && comps < CMAXATT -> cfence();
       nextver(); owner = 0; live = false; printf("@ C: compensation retried\n"); cgiveback(); goto end_idle }
  :: atomic { !cheld -> cgiveback(); goto end_idle }              /* leaseLost */
  :: atomic { fault(); cgiveback(); goto end_idle }               /* error or died */
  fi;

cdead:
  /* store.(*Table).Dead, fenced: DEAD with lastError = the reason */
  if
  :: atomic {
       if
       :: cheld -> cfence(); st = DEAD; nextver(); owner = 0; live = false; printf("@ C: DEAD\n")
       :: else -> cgiveback(); goto end_idle
       fi }
  :: atomic { fault(); cgiveback(); goto end_idle }
  :: atomic { fault(); if :: cheld -> st = DEAD; nextver(); owner = 0; live = false :: else fi;
       cgiveback(); goto end_idle }
  fi;

cacked:
  /* Ack: the event source deletes the dead letter */
  if
  :: atomic { cack(); goto end_idle }
  :: atomic { fault(); cgiveback(); goto end_idle }               /* died before the batch response */
  fi
}

/* ========================= the sweeper (shared/engine/sweep) ========================= */

proctype Sweeper() {
end_idle:
  /* sweep.(*run).shard/record. Issue #20: per shard, store.(*Table).Stuck
     reads the index entries with cursor < sweepAt <= now - SweepLag from
     the shard's persistent cursor (SweepCursor / AdvanceSweepCursor): the
     sweeper sees a record only while its entry is ahead of the cursor
     (sidx). It reads the record (GetMany, then Get) and passes a terminal
     one: the cursor moves past its entry (sidx = false). Otherwise
     sweep.(*Sweeper).verdict: stuck means RECEIVED past its grace,
     PROCESSING or COMPENSATING with its lease run out, RETRY or FAILED long
     overdue (abstract time: always, once the status is reached). Due but
     not stuck yet (RECEIVED inside its grace, a live lease): Resweep moves
     sweepAt to when it would be stuck, ahead of the cursor (sidx stays; no
     state of the model changes, so it is not a step here). The cursor
     passes the entry of the record it handles (sidx = false) and stays
     before it when the handling fails (sidx = true again: read next run);
     a write that sets sweepAt (MarkRequeued, Resweep, Hold, Release, a new
     claim) puts the entry ahead again. Bound: the sweeper acts only while
     fewer than SWEEPMSGS messages exist (main queue and DLQ together),
     which keeps the queues finite. */
  if
  :: atomic {
       (msgs + dmsgs < SWEEPMSGS) && sidx && terminal(st) ->
       sidx = false; printf("@ S: terminal record passed\n"); goto end_idle }
  :: atomic {
       (msgs + dmsgs < SWEEPMSGS) && sidx &&
       ((st == RECEIVED && gracePassed) || (st == PROCESSING && !live) || st == RETRY ||
        st == FAILED || (st == COMPENSATING && !live)) ->
       s_st = st; s_ver = ver; s_enq = enq; sidx = false;
       printf("@ S: record stuck in status %d\n", st) }
  /* a due HELD record (sweepAt = recheckAt): sweep.verdict asks
     targets.Gate.Blocked(heldOn). Still blocked: recheckAt/sweepAt (and
     expiresAt) pushed, ahead of the cursor, nothing else (not stuck; no
     state of the model changes, so it is not a step here). Unblocked, or
     its target's probe is due (the probe carrier: one held record of the
     target): released */
  :: atomic {
       (msgs + dmsgs < SWEEPMSGS) && sidx && st == HELD &&
       ((hon == ONPAUSE && !paused) || (hon == ONTARGET && (!bopen || pslot == 1))) ->
       s_ver = ver; sidx = false; printf("@ S: HELD record due, scope unblocked or probe due\n"); goto srelease }
#ifdef SWEEP_CURSOR_SKIPS
  /* the defect: a record due but not stuck yet is passed without a Resweep */
  :: atomic {
       (msgs + dmsgs < SWEEPMSGS) && sidx &&
       ((st == RECEIVED && !gracePassed) || ((st == PROCESSING || st == COMPENSATING) && live)) ->
       sidx = false; printf("@ S: due, not stuck yet: passed without a resweep (status %d)\n", st); goto end_idle }
#endif
  fi;
  /* store.(*Table).MarkRequeued: SET enqueuedAt = now, sweepAt = now +
     SweepAfter IF version = v AND status = s AND claimId = c AND
     enqueuedAt = e */
  if
  :: atomic { st == s_st && ver == s_ver && enq == s_enq ->
       fresh(); enq = tmp; tmp = 0; sidx = true;
       if :: st == RECEIVED -> gracePassed = false :: else fi;
       printf("@ S: marked requeued, epoch %d\n", enq) }
  :: atomic { !(st == s_st && ver == s_ver && enq == s_enq) ->
#ifndef MOVED_ON_PASSES
       sidx = true;   /* not handled: the cursor stays before it, read again next run */
#endif
       printf("@ S: record moved on: left alone\n"); s_st = 0; s_ver = 0; s_enq = 0; goto end_idle }
  :: atomic { fault(); sidx = true; s_st = 0; s_ver = 0; s_enq = 0; goto end_idle }   /* error (or applied, answer lost: the same) */
  fi;
  /* sweep.(*run).resend: Queue.Send (requeue) or DLQ.SendDeadLetter
     (FAILED, COMPENSATING); a failed send only resweeps (stays due) */
  if
  :: atomic {
       if
       :: s_st == FAILED || s_st == COMPENSATING -> dlqn++; printf("@ S: dead-lettered again\n")
       :: else -> vis[0]++; printf("@ S: re-enqueued\n")
       fi;
       s_st = 0; s_ver = 0; s_enq = 0; goto end_idle }
  :: atomic { fault(); printf("@ S: send failed or died\n"); s_st = 0; s_ver = 0; s_enq = 0; goto end_idle }
  fi

srelease:
  /* the drain's store.(*Table).Release: HELD -> RETRY IF version = v AND
     status = HELD (heldOn removed, sweepAt = now + grace: a lost send is
     re-enqueued by a later sweep) */
  if
  :: atomic { st == HELD && ver == s_ver -> st = RETRY; hon = 0; nextver(); s_ver = 0; sidx = true; printf("@ S: released: RETRY\n") }
  :: atomic { !(st == HELD && ver == s_ver) ->
#ifndef MOVED_ON_PASSES
       sidx = true;   /* not handled: the cursor stays before it */
#endif
       s_ver = 0; printf("@ S: held record moved on\n"); goto end_idle }
  :: atomic { fault(); sidx = true; s_ver = 0; goto end_idle }   /* error, not applied (applied with its answer lost = a failed send below) */
  fi;
  /* Queue.Send (DelaySeconds spreads a batch over its tokens' due times) */
  if
  :: atomic { vis[0]++; printf("@ S: held record sent\n"); goto end_idle }
  :: atomic { fault(); printf("@ S: send of the released record failed\n"); goto end_idle }   /* RETRY, due at now + grace */
  fi
}

/* ====================== the target and the operator ====================== */

/* the target goes down, for a while, then comes back (a process of its own:
   under weak fairness it does come back) */
proctype Target() {
end:
  do
  :: atomic { outs > 0 && !tdown -> outs--; tdown = true; printf("@ the target goes down\n") }
  :: atomic { tdown -> tdown = false; printf("@ the target is back\n") }
  od
}

/* an operator: hookwall pause handler/<h> (or tenant/<t>), and later
   hookwall resume, which drains: targets.Gate.Resume, then the drain's
   Release(scope) queries the held index (GSI held, heldOn = scope) and, per
   record, takes a token from the target's bucket (the rate limit: a delay,
   not modelled), releases it and sends it */
proctype Operator() {
end:
  do
  :: atomic { pauses > 0 && !paused -> pauses--; paused = true; printf("@ O: pause\n") }
  :: atomic { paused -> paused = false; printf("@ O: resume\n") };
     /* the held index (eventually consistent) */
     if
     :: atomic { st == HELD && hon == ONPAUSE -> d_ver = ver; printf("@ O: drain finds the held record\n") }
     :: atomic { !(st == HELD && hon == ONPAUSE) -> printf("@ O: drain finds nothing (not held, or the index lags)\n"); goto end }
     fi;
     /* store.(*Table).Release, as the sweeper's */
     if
     :: atomic { st == HELD && ver == d_ver -> st = RETRY; hon = 0; nextver(); d_ver = 0; sidx = true; printf("@ O: released: RETRY\n") }
     :: atomic { !(st == HELD && ver == d_ver) -> d_ver = 0; printf("@ O: held record moved on\n"); goto end }
     :: atomic { fault(); d_ver = 0; goto end }      /* error, or the CLI dies: the sweeper releases it */
     fi;
     if
     :: atomic { vis[0]++; printf("@ O: held record sent\n") }
     :: atomic { fault(); printf("@ O: send failed\n") }   /* RETRY, due at now + grace: the sweeper re-enqueues it */
     fi
  od
}

/* ============================ time and the outside ============================ */

proctype Env() {
end:
  do
  /* the grace passes for the current enqueuedAt, only once the receiver that
     set it is past its budget (config: ReenqueueGrace > Budget) */
  :: atomic { st == RECEIVED && !gracePassed && maker == 0 -> gracePassed = true; printf("@ the grace passes for epoch %d\n", enq) }
  /* the lease runs out: its holder is gone (crashed, or finished without a
     transition) ... */
  :: atomic { (st == PROCESSING || st == COMPENSATING) && live && att_ver[owner] != ver -> live = false; printf("@ the lease of a gone P%d runs out\n", owner) }
  /* ... or still running: heartbeats failed (attempt.heartbeat only logs an
     error) or it overran. Its message's visibility runs out too. */
  :: atomic { (st == PROCESSING || st == COMPENSATING) && live && att_ver[owner] == ver && faults > 0 ->
       faults--; live = false; printf("@ the lease of P%d runs out while it still runs\n", owner);
       if
       :: pm[owner] > 0 && !stale[owner] ->
            if :: owner == CP -> dlqn++ :: else -> vis[pm[owner]]++ fi; stale[owner] = true
       :: else
       fi }
  /* the outside system forgets the key, once the event has settled and no
     attempt that could still call it is alive. COMPENSATING counts as
     settled only when the compensation cannot requeue the event: a
     compensator holding it from RECEIVED/RETRY/PROCESSING may give it back
     to the processor ((*Compensator).requeue), whose next attempt calls
     with the same key. */
  :: atomic { ext_seen && !ext_forgot && (st >= SUCCEEDED) && st != HELD &&
              !(st == COMPENSATING && (c_from == RECEIVED || c_from == RETRY || c_from == PROCESSING)) &&
              att_ver[1] == 0 && att_ver[2] == 0 -> ext_forgot = true }
  /* the breaker's ProbeInterval passes: a probe of the open target is due
     (ProbeAt <= now); a probe slot taken by an attempt that is gone (it
     crashed, or gave up before its report) comes due again too */
  :: atomic { bopen && (pslot == 0 || (pslot == 2 && tok[1] != PROBE && tok[2] != PROBE)) ->
       pslot = 1; printf("@ a probe of the open target is due\n") }
  /* other events bound for the same target: their probe may take the slot
     (and close the breaker when the target is back) ... */
  :: atomic { bopen && pslot == 1 ->
       if
       :: tdown -> pslot = 0; printf("@ another event's probe fails\n")
       :: else -> bopen = false; bfails = 0; pslot = 0; printf("@ another event's probe: circuit closed\n")
       fi }
  /* ... and their calls fail while the target is down: with this event's
     own failures, or alone, they open the breaker (counting them one by one
     adds states and nothing else: the event's Report sees the count) */
  :: atomic { !bopen && tdown -> bopen_(); printf("@ other events' failures open the circuit\n") }
#ifdef WINDOW_ROLLS
  /* the breaker's window (60 s) rolls over between calls: its counts restart */
  :: atomic { !bopen && bfails > 0 -> bfails = 0; printf("@ the breaker's window rolls over\n") }
#endif
  /* ... and the undo's key, once the compensation is over */
  :: atomic { ext_useen && !ext_uforgot && (st == COMPENSATED || st == DEAD) &&
              att_ver[CP] == 0 -> ext_uforgot = true }
  od
}

init {
  atomic {
    run Receiver(1); run Receiver(2);
    run Processor(1); run Processor(2);
    run Compensator(CP);
#ifndef NO_SWEEPER
    run Sweeper();
#endif
    run Target(); run Operator();
    run Env()
  }
}

/* Liveness: an event the platform retries until it is answered 2xx is
   eventually SUCCEEDED (its effect applied: asserted at Complete), COMPENSATED
   (its journaled step undone: asserted at Compensated) or DEAD with lastError.
   FAILED is not an end: the compensator takes it from the DLQ.
   With the assertion at the compensator's "nothing to compensate" DEAD, this
   gives: a dead letter of an event that was never FAILED and has nothing
   journaled does not end it DEAD while requeues remain (unless its
   compensation was already under way, or on a compensation error): the
   event goes back to the processor ((*Compensator).requeue) and settles
   from there. settles alone cannot tell (with -DNO_REQUEUE -A it still
   holds: DEAD is an end). */
ltl settles { <> (st == SUCCEEDED || st == COMPENSATED || st == DEAD) }
