/*
 * poison.pml: poison events and a target's breaker (issue #29 item 1, the
 * rule of item 10), checked exhaustively by spin. A companion of
 * hookwall.pml (see model/README.md, "Poison events"): hookwall.pml has one
 * event key, and a poison event is only told from an outage beside others.
 *
 * What it is
 *   NPOISON poison events (their call always fails: the target answers 500
 *   to their payload only) and one healthy event to the same target, which
 *   stays up; two processors (dispatch: the admission, the attempt counted at
 *   the lease, the call, the Report to the breaker); the target's breaker
 *   (shared/state/targets: MINCALLS failures in a window open it; while open, one
 *   probe at a time); the drain that hands the probe to a held event (the
 *   code takes the oldest; here any held event, which covers it) and, on a
 *   successful probe, closes the breaker and releases the held events.
 *
 * The rule (guard)
 *   - the admission holds an event while the breaker is open: no attempt
 *     spent (as in hookwall.pml);
 *   - a failed call that leaves the breaker open holds the event; its attempt
 *     is given back at most once per event (the give-back for the call that
 *     opened the breaker); after that, the attempt is spent: FAILED and
 *     dead-lettered once the attempts are spent, else held;
 *   - a failed probe spends the carrier's attempt: FAILED and dead-lettered
 *     once the attempts are spent, else held again.
 *   So a poison event makes at most MAXATT + 1 calls (the bound: one call
 *   given back), and ends FAILED.
 *
 * Properties
 *   - assertion "calls[e] <= MAXATT + 1" at each call of a poison event;
 *   - ltl settles: <> [] (every poison event FAILED and the healthy one
 *     SUCCEEDED).
 *
 * Flags: -DPROBE_GIVES_BACK (the code before: a failed probe gives the
 * attempt back and re-holds the carrier: the poison events carry the probes
 * forever, an acceptance cycle, never FAILED; with the assertion the bound
 * is broken too), -DGIVE_BACK_ALWAYS (the give-back of a failed call that
 * leaves the breaker open not limited to once per event: the bound is
 * broken), -DNPOISON=n (1 or 2, default 2), -DMAXATT=n (default 2),
 * -DMINCALLS=n (default 1: every failure of a poison event opens the breaker,
 * the worst case for give-backs).
 */

#ifndef NPOISON
#define NPOISON 2
#endif
#ifndef MAXATT
#define MAXATT 2
#endif
#ifndef MINCALLS
#define MINCALLS 1
#endif
#define NEV (NPOISON+1)   /* events 0..NPOISON-1 poison, NPOISON healthy */
#define H NPOISON
#define CAP (MAXATT+3)    /* calls saturate here (finite states) */

#define READY  1   /* RECEIVED / RETRY, its message visible */
#define RUN    2   /* PROCESSING, admitted Allow */
#define PROBE  3   /* PROCESSING, the probe carrier */
#define HELD   4
#define OK     5   /* SUCCEEDED */
#define FAILED 6   /* FAILED, dead-lettered */

byte est[NEV];
byte att[NEV];     /* attempts spent */
byte calls[NEV];   /* calls made (saturating at CAP) */
bool gb[NEV];      /* the event's attempt was given back once */
bool bopen;
byte bfails;       /* failures in the closed breaker's window */
bool probing;      /* a probe is out */

#define poison(e) (e < NPOISON)
#define called(e) calls[e] = (calls[e] < CAP -> calls[e] + 1 : calls[e])

/* the attempt's end after a failed call: spent, FAILED when none remain */
#define spend(e) if \
  :: att[e] >= MAXATT -> est[e] = FAILED; printf("@ event %d: FAILED after %d calls, dead-lettered\n", e, calls[e]) \
  :: else -> est[e] = HELD \
  fi

#ifdef NOBOUND
#define bound(e) skip
#else
#define bound(e) assert(!poison(e) || calls[e] <= MAXATT + 1)
#endif

proctype Processor(byte me) {
  byte e;
  bool mine;        /* this processor's attempt runs e */
end_idle:
  do
  :: atomic {
       (est[0] == READY || est[1] == READY || (NEV > 2 && est[NEV-1] == READY)) ->
       if
       :: est[0] == READY -> e = 0
       :: est[1] == READY -> e = 1
       :: NEV > 2 && est[NEV-1] == READY -> e = NEV-1
       fi;
       if
       :: bopen -> est[e] = HELD; printf("@ P%d: event %d held at admission (breaker open)\n", me, e)
       :: else -> est[e] = RUN; att[e]++; mine = true
       fi
     }
     if
     :: mine ->
          atomic {
            called(e); bound(e);
            if
            :: !poison(e) -> est[e] = OK; printf("@ P%d: event %d SUCCEEDED\n", me, e)
            :: poison(e) ->
                 if
                 :: !bopen -> bfails++;
                      if
                      :: bfails >= MINCALLS -> bopen = true; bfails = 0; printf("@ P%d: event %d's failure opens the breaker\n", me, e)
                      :: else
                      fi
                 :: else
                 fi;
                 if
                 :: bopen ->        /* the breaker is open after the call: hold */
#ifdef GIVE_BACK_ALWAYS
                      if :: true ->
#else
                      if :: !gb[e] ->
#endif
                           gb[e] = true; att[e]--; est[e] = HELD;
                           printf("@ P%d: event %d held, attempt given back\n", me, e)
                      :: else -> spend(e)
                      fi
                 :: else ->
                      if
                      :: att[e] >= MAXATT -> est[e] = FAILED; printf("@ P%d: event %d FAILED\n", me, e)
                      :: else -> est[e] = READY   /* RETRY */
                      fi
                 fi
            fi;
            e = 0; mine = false
          }
     :: else -> e = 0
     fi
  od
}

/* the drain and the probe: a held event carries the probe; a success closes
   the breaker and releases every held event */
proctype Prober() {
  byte e;
end_idle:
  do
  :: atomic {
       bopen && !probing && (est[0] == HELD || est[1] == HELD || (NEV > 2 && est[NEV-1] == HELD)) ->
       if
       :: est[0] == HELD -> e = 0
       :: est[1] == HELD -> e = 1
       :: NEV > 2 && est[NEV-1] == HELD -> e = NEV-1
       fi;
       est[e] = PROBE; att[e]++; probing = true;
       printf("@ D: event %d carries the probe (attempt %d)\n", e, att[e])
     }
     atomic {
       called(e); bound(e); probing = false;
       if
       :: !poison(e) -> est[e] = OK; bopen = false; bfails = 0;
            if :: est[0] == HELD -> est[0] = READY :: else fi;
            if :: est[1] == HELD -> est[1] = READY :: else fi;
            if :: NEV > 2 && est[NEV-1] == HELD -> est[NEV-1] = READY :: else fi;
            printf("@ D: probe succeeded: breaker closed, held events released\n")
       :: poison(e) ->
#ifdef PROBE_GIVES_BACK
            att[e]--; est[e] = HELD; printf("@ D: probe of event %d failed: attempt given back, held\n", e)
#else
            printf("@ D: probe of event %d failed: attempt spent\n", e);
            spend(e)
#endif
       fi;
       e = 0
     }
  od
}

init {
  atomic {
    byte i;
    for (i : 0 .. NEV-1) { est[i] = READY }
    run Processor(1); run Processor(2); run Prober()
  }
}

#define allpoisonfailed (est[0] == FAILED && (NPOISON < 2 || est[1] == FAILED))
ltl settles { <> [] (allpoisonfailed && est[H] == OK) }
