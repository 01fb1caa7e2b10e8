/* SPDX-License-Identifier: MIT */
/*
 * Incident triggers (recorder-attach --trigger RULE): the rules, what each
 * matches, and the limiter that decides whether a rule that matched may save
 * a snapshot. Pure logic: no I/O, no session, no global state; the caller
 * passes the time (CLOCK_MONOTONIC ns) and reports whether a snapshot it was
 * admitted was written.
 *
 * The limiter works per signature (issue 35): a firing's signature is its
 * rule and what it fired on, a key the caller gives (a callsite's address, a
 * reason's hash). After a snapshot it admitted, a signature is in cooldown
 * for cooldown_ns (0: none); each signature is admitted at most sig_per_hour
 * snapshots (0: no cap) in any window of an hour; and all the signatures of
 * a set together at most per_hour (0: no cap): an admission at time t counts
 * against every later one before t + 3600 s. So a flood of one signature
 * cannot starve another: the first firing of a new signature is admitted
 * unless the set's cap is reached (counted in new_capped). A fire that is
 * suppressed starts no cooldown and takes no room in the hour. For each rule
 * and each signature, fired = admitted + cooldown + capped, always.
 *
 * A set holds at most REC_TRIGGER_SIGNATURES_MAX signatures; the firings of
 * one that finds no room are folded into its rule's one "other" signature
 * (key REC_TRIGGER_SIG_FOLD), limited as one, and counted in folded. The table
 * is reserved at the first firing and its pages taken as signatures come: at
 * most about 1 MiB (64 KiB of index, under 1 KiB a signature).
 */
#ifndef REC_TRIGGER_H
#define REC_TRIGGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recorder_abi.h"
#include "wire/callsite.h"
#include "incidents/cond.h"
#include "model/offcpu.h"
#include "output/output.h"

/* What a usage error prints. */
#define REC_TRIGGER_GRAMMAR                                                                        \
	"A trigger RULE is one of:\n"                                                              \
	"  level>=LEVEL        an event at LEVEL or above: trace debug info warn error\n"          \
	"  span:GLOB>DURATION  a span whose name matches GLOB, ended or still open, has\n"         \
	"                      lasted longer than DURATION\n"                                      \
	"  span:GLOB PART>DURATION  a span left whose PART (blocked, cpu or runq, with\n"          \
	"                      --sched) took longer than DURATION\n"                               \
	"  event:GLOB [COND]   an event whose message matches GLOB (and whose fields\n"            \
	"                      satisfy COND)\n"                                                    \
	"  code[:GLOB]         the program called rec_trigger(rec, REASON), with REASON\n"         \
	"                      matching GLOB (any REASON without one)\n"                           \
	"GLOB is a glob (* ? [...]), quoted with '...' or \"...\" if it has blanks.\n"             \
	"DURATION is an integer and a unit, ns us ms s m h: 500ms, 2s, 1m.\n" REC_COND_GRAMMAR     \
	"Examples: level>=error  span:'db *'>500ms  span:handle blocked>200ms\n"                   \
	"          event:'request done' status>=500\n"                                             \
	"          event:timeout*  code:oom*\n"

/* Rules one set holds; --trigger-per-hour at most. */
#define REC_TRIGGER_MAX_RULES 32
#define REC_TRIGGER_PER_HOUR_MAX 1000
/* The window of the per_hour cap. */
#define REC_TRIGGER_WINDOW_NS (3600LL * 1000000000LL)
/* Room for a glob, NUL included. */
#define REC_TRIGGER_GLOB_MAX 256
/* Room for a rule's canonical text, NUL included: "event:", a quoted glob, " ", a condition. */
#define REC_TRIGGER_TEXT_MAX (6 + REC_TRIGGER_GLOB_MAX + 2 + 1 + REC_COND_TEXT_MAX)

enum rec_trigger_kind {
	REC_TRIGGER_LEVEL = 1, /* level>=LEVEL */
	REC_TRIGGER_SPAN,      /* span:GLOB>DURATION */
	REC_TRIGGER_EVENT,     /* event:GLOB [COND] */
	REC_TRIGGER_CODE,      /* code[:GLOB] */
};

/* What of a span a SPAN rule measures: its whole time, or one part of it (--sched). */
enum rec_trigger_part {
	REC_TRIGGER_PART_ALL = 0,
	REC_TRIGGER_PART_CPU,
	REC_TRIGGER_PART_BLOCKED,
	REC_TRIGGER_PART_RUNQ,
};

/* A parsed rule: fixed size, no pointers, copyable. */
struct rec_trigger_rule {
	enum rec_trigger_kind kind;
	enum rec_level level;		 /* LEVEL: the lowest that fires */
	int64_t duration_ns;		 /* SPAN: fires when a span lasts longer */
	enum rec_trigger_part part;	 /* SPAN: what of it lasts longer */
	char glob[REC_TRIGGER_GLOB_MAX]; /* SPAN: name; EVENT: message; CODE: reason ("*": any) */
	bool has_cond;			 /* EVENT: cond must hold too */
	struct rec_cond cond;
};

/*
 * Parses a rule (REC_TRIGGER_GRAMMAR; blanks around it allowed) into *r.
 * Returns 0, or -EINVAL with a message naming the bad part in err (errlen
 * bytes, NUL-terminated when errlen > 0): an unknown kind, an unknown level, a
 * bad duration, a missing or badly quoted glob, a bad condition (cond.h).
 */
int rec_trigger__parse(const char *text, struct rec_trigger_rule *r, char *err, size_t errlen);
/*
 * Writes r's canonical text into buf (len bytes; REC_TRIGGER_TEXT_MAX is
 * always enough): lower-case kind and level, a glob bare unless it needs
 * quotes, the largest unit that gives a whole duration, "code" for "code:*",
 * the condition as rec_cond__format() writes it. rec_trigger__parse() gives r
 * back. Returns 0 or -ENOSPC.
 */
int rec_trigger__format(const struct rec_trigger_rule *r, char *buf, size_t len);

/*
 * Parses a duration: decimal digits and a unit, ns us ms s m h ("500ms",
 * "2s"), or "0" alone. Returns 0 and the nanoseconds in *ns, or -EINVAL with a
 * message naming the text in err: empty, negative, no unit, unknown unit, more
 * than INT64_MAX ns.
 */
int rec_trigger__parse_duration(const char *text, int64_t *ns, char *err, size_t errlen);
/* Writes ns (>= 0) as rec_trigger__parse_duration() reads it: "0", else the largest whole unit. */
int rec_trigger__format_duration(int64_t ns, char *buf, size_t len);

/*
 * Whether event ev fires r: a LEVEL rule if its level (rec_output__level(),
 * the event's own for a REC_LEVEL_RUNTIME callsite) is r's or above; an EVENT
 * rule if its message (the callsite's, or for a printf-style event its string
 * field "message"; "" if none) matches the glob and the condition holds on its
 * fields (named as rec_output__field_name() names them). An event whose
 * callsite is unknown fires neither. Other kinds never match an event.
 */
bool rec_trigger__match_event(const struct rec_trigger_rule *r, const struct rec_event_view *ev);
/*
 * Whether a span of callsite cs that lasted (or, still open, has been open)
 * duration_ns fires r: a SPAN rule whose glob matches cs's name, and
 * duration_ns strictly longer than the rule's.
 */
bool rec_trigger__match_span(const struct rec_trigger_rule *r, const struct rec_callsite *cs,
			     int64_t duration_ns);
/*
 * Whether a span of callsite cs left with kernel time f (NULL or flags 0: not
 * known) fires r: a SPAN rule with a part whose glob matches cs's name, and
 * that part of f strictly longer than the rule's duration. A SPAN rule with a
 * part never fires through rec_trigger__match_span.
 */
bool rec_trigger__match_span_part(const struct rec_trigger_rule *r, const struct rec_callsite *cs,
				  const struct rec_sched_figs *f);
/* Whether rec_trigger(rec, reason) fires r: a CODE rule whose glob matches reason (NULL: ""). */
bool rec_trigger__match_code(const struct rec_trigger_rule *r, const char *reason);

/* Signatures a set holds (issue 35); the firings of more are folded, counted. */
#define REC_TRIGGER_SIGNATURES_MAX 1024
/* --trigger-signature-cap at most: the room for a signature's admissions in the hour. */
#define REC_TRIGGER_SIG_PER_HOUR_MAX 32
/* Room for a signature's text and the path of its first snapshot, NUL included. */
#define REC_TRIGGER_SIG_TEXT_MAX 192
#define REC_TRIGGER_SIG_PATH_MAX 256
/* The key of a rule's signature that holds the firings of those past the table. */
#define REC_TRIGGER_SIG_FOLD UINT64_MAX
/* A signature's short id is this many bits of a hash of its rule's text and its own. */
#define REC_TRIGGER_SIG_ID_BITS 48

/* What happened to a rule's fires. */
struct rec_trigger_counts {
	uint64_t fired;	     /* matched: admitted + cooldown + capped */
	uint64_t admitted;   /* a snapshot may be saved */
	uint64_t cooldown;   /* suppressed: the rule was in its cooldown */
	uint64_t capped;     /* suppressed: the signature's or the set's hourly cap */
	uint64_t saved;	     /* admitted, and the caller wrote the snapshot */
	uint64_t failed;     /* admitted, and the caller could not write it */
	uint64_t new_capped; /* of capped, first firings of a signature (set's cap, no room) */
};

/*
 * One signature of a set: a rule and what it fired on. Times are
 * CLOCK_MONOTONIC: *_seen_ns when recorder-attach saw a firing, *_ns its
 * event's or span's own time.
 */
struct rec_trigger_sig {
	/* What a firing in a storm touches comes first: its cooldown, in one cache line. */
	int64_t last_admitted_ns; /* seen, if admitted_before */
	bool admitted_before;
	uint8_t head, nadmitted; /* the ring admitted[] */
	uint32_t rule_id;	 /* its rule's */
	int64_t last_ns, last_seen_ns;
	struct rec_trigger_counts count;
	uint64_t key; /* the caller's; REC_TRIGGER_SIG_FOLD: the rule's others */
	int64_t first_ns, first_seen_ns;
	uint64_t id; /* its short id (rec_trigger__name_sig()); 0: not named yet */
	/* Its cold part, apart (the table's hot parts stay in the caches): */
	char *text;	   /* REC_TRIGGER_SIG_TEXT_MAX: what it fired on, from the target */
	char *first_path;  /* REC_TRIGGER_SIG_PATH_MAX: its first snapshot saved; "": none yet */
	int64_t *admitted; /* REC_TRIGGER_SIG_PER_HOUR_MAX: admitted in the last hour, oldest
			      at head, a ring of sig_per_hour */
};

/* The signatures of a set: opaque (trigger_set.c). */
struct rec_trigger_sigs;

/* One rule of a set. */
struct rec_trigger_entry {
	/* What a firing touches first, together: a storm fires on every event. */
	struct rec_trigger_counts count;
	uint64_t last_key; /* the key of its last firing, whose signature is last_sig - 1 */
	uint32_t last_sig; /* 0: none */
	bool keep;   /* recorder-attach --otlp-keep: the recordings it fires on are exported */
	uint32_t id; /* 1, 2, 3... in the order added; never reused in the set */
	struct rec_trigger_rule rule;
	char text[REC_TRIGGER_TEXT_MAX]; /* canonical */
};

/*
 * The rules of a recorder-attach and their limiter. Set up by
 * rec_trigger__init(), freed by rec_trigger__fini(). A copy by value of a
 * set that has fired shares its signatures: copy one that has not (sigs NULL).
 */
struct rec_trigger_set {
	unsigned int n;
	uint32_t last_id;
	int64_t cooldown_ns;	   /* per signature */
	unsigned int per_hour;	   /* over all signatures */
	unsigned int sig_per_hour; /* per signature */
	unsigned int head;
	unsigned int nadmitted;
	uint64_t folded;	       /* firings of signatures past REC_TRIGGER_SIGNATURES_MAX */
	uint64_t new_capped;	       /* first firings of a signature refused by the set's cap */
	struct rec_trigger_sigs *sigs; /* NULL until the first firing */
	struct rec_trigger_entry rules[REC_TRIGGER_MAX_RULES];
	/* The times admitted in the last hour, oldest at head: a ring of per_hour. */
	int64_t admitted[REC_TRIGGER_PER_HOUR_MAX];
};

enum rec_trigger_verdict {
	REC_TRIGGER_ADMIT = 0, /* save a snapshot, then rec_trigger__report() */
	REC_TRIGGER_COOLDOWN,  /* suppressed: the signature's cooldown */
	REC_TRIGGER_CAP,       /* suppressed: the signature's or the set's hourly cap */
};

/*
 * Makes s an empty set whose signatures each have a cooldown of cooldown_ns
 * (>= 0; 0: none), no cap of their own (rec_trigger__limit_signatures()), and
 * share a cap of per_hour snapshots an hour (at most REC_TRIGGER_PER_HOUR_MAX;
 * 0: no cap). Returns 0 or -EINVAL.
 */
int rec_trigger__init(struct rec_trigger_set *s, int64_t cooldown_ns, unsigned int per_hour);
/* Each signature of s is admitted at most per_hour (<= REC_TRIGGER_SIG_PER_HOUR_MAX; 0: no cap). */
int rec_trigger__limit_signatures(struct rec_trigger_set *s, unsigned int per_hour);
/* Frees what s holds (its signatures); s is then an empty set again, its limits kept. */
void rec_trigger__fini(struct rec_trigger_set *s);
/*
 * Parses text and adds it last. Returns its id (> 0), or, with a message in
 * err: -EINVAL (as rec_trigger__parse()), -EEXIST (a rule of the same
 * canonical text is in s), -ENOSPC (s has REC_TRIGGER_MAX_RULES rules).
 */
int rec_trigger__add(struct rec_trigger_set *s, const char *text, char *err, size_t errlen);
/* Removes the rule of that id, keeping the others' order. Returns 0 or -ENOENT. */
int rec_trigger__remove(struct rec_trigger_set *s, uint32_t id);
/*
 * Removes the rule whose canonical text is text's (so "code:*" removes "code").
 * Returns 0, or -ENOENT (also if text is not a rule).
 */
int rec_trigger__remove_text(struct rec_trigger_set *s, const char *text);
/*
 * The rule at index i (0 .. count - 1, in the order added), or NULL past the
 * last: for (i = 0; (e = rec_trigger__at(s, i)); i++). An index, unlike an id,
 * holds only until the next add or remove.
 */
const struct rec_trigger_entry *rec_trigger__at(const struct rec_trigger_set *s, unsigned int i);
/* The index of the rule of that id, or -ENOENT. */
int rec_trigger__find(const struct rec_trigger_set *s, uint32_t id);

/*
 * Rule rule_index (< s->n) matched at seen_ns, on what key stands for (its
 * signature), an event or span of its own time at_ns: finds the signature
 * (made if new; the rule's fold if the table is full, counted in folded),
 * counts it fired in both, then decides. COOLDOWN if the signature admitted a
 * snapshot less than cooldown_ns ago (checked first); else CAP if the
 * signature was admitted sig_per_hour snapshots in (seen_ns - 3600 s,
 * seen_ns], or the set per_hour, or no_room (the caller can hold no more
 * snapshots); else ADMIT, which starts the signature's cooldown and takes a
 * place in both hours. Counts the verdict in the rule's and the signature's
 * admitted, cooldown or capped. *sig (if sig) gets the signature, NULL if
 * none could be made (no memory: counted capped in the rule alone); one not
 * yet named (id 0) is new, for the caller to name. A pointer to a signature
 * holds until the next fire, add or remove.
 */
enum rec_trigger_verdict rec_trigger__fire(struct rec_trigger_set *s, unsigned int rule_index,
					   uint64_t key, int64_t seen_ns, int64_t at_ns,
					   bool no_room, struct rec_trigger_sig **sig);
/*
 * rec_trigger__fire() with a hint: *hint (if hint) is where the caller keeps
 * the signature of key that an earlier fire found (0: none yet), to skip the
 * table's index; it is checked, and updated. A hint holds until the next
 * remove or rec_trigger__fini().
 */
enum rec_trigger_verdict rec_trigger__fire_hint(struct rec_trigger_set *s, unsigned int rule_index,
						uint64_t key, int64_t seen_ns, int64_t at_ns,
						bool no_room, uint32_t *hint,
						struct rec_trigger_sig **sig);
/*
 * After rec_trigger__fire() said COOLDOWN or CAP (not for no_room) to g at
 * seen_ns: until when (seen) every firing of g gets that verdict again, all
 * else being equal: its cooldown's end; for a cap, the time both its and the
 * set's hourly caps have a place again (admissions of others only put that
 * later). A caller may count such firings itself, and give them to
 * rec_trigger__fire_quiet() before anyone reads the counts.
 */
int64_t rec_trigger__quiet_until(const struct rec_trigger_set *s, const struct rec_trigger_sig *g,
				 enum rec_trigger_verdict v, int64_t seen_ns);
/*
 * n firings of signature g of rule rule_index that a caller held back while
 * rec_trigger__quiet_until() said they would get verdict v, the last at its
 * own time last_ns, seen at last_seen_ns: counted as rec_trigger__fire()
 * would have counted them.
 */
void rec_trigger__fire_quiet(struct rec_trigger_set *s, unsigned int rule_index,
			     struct rec_trigger_sig *g, uint64_t n, enum rec_trigger_verdict v,
			     int64_t last_ns, int64_t last_seen_ns);
/* The signature at hint (rec_trigger__fire_hint()) of rule rule_index, or NULL. */
struct rec_trigger_sig *rec_trigger__hinted_sig(const struct rec_trigger_set *s,
						unsigned int rule_index, uint32_t hint);
/* rec_trigger__fire() of one signature a rule (key 0), seen at its own time now_ns. */
enum rec_trigger_verdict rec_trigger__admit(struct rec_trigger_set *s, unsigned int rule_index,
					    int64_t now_ns);
/*
 * Names sig, of rule rule_index: its text (cut to fit) and its short id, the
 * first REC_TRIGGER_SIG_ID_BITS bits of the FNV-1a hash of the rule's
 * canonical text, a newline and text (never 0), the same for the same rule
 * and callsite in any process.
 */
void rec_trigger__name_sig(struct rec_trigger_set *s, unsigned int rule_index,
			   struct rec_trigger_sig *sig, const char *text);
/* The signature of rule rule_id and key, or NULL. */
struct rec_trigger_sig *rec_trigger__find_sig(const struct rec_trigger_set *s, uint32_t rule_id,
					      uint64_t key);
/* The signature at index i (0 .. count - 1, in the order first seen), or NULL past the last. */
const struct rec_trigger_sig *rec_trigger__sig_at(const struct rec_trigger_set *s, size_t i);
/* How many signatures s holds (its rules' folds included). */
size_t rec_trigger__nsigs(const struct rec_trigger_set *s);
/*
 * The caller's word on the snapshot that rule rule_index (< s->n) admitted for
 * the signature of key: err 0 counts it saved (the signature's first saved
 * keeps path, if given), anything else failed.
 */
void rec_trigger__report(struct rec_trigger_set *s, unsigned int rule_index, uint64_t key, int err,
			 const char *path);

#endif /* REC_TRIGGER_H */
