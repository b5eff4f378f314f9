/* inject: the error-injection switch the test doubles share: fail the Nth
 * call of an operation (or every call from the Nth on) with a given
 * errno, and count the calls so a test can walk N over all of them. */
#pragma once
#include <stdbool.h>
#include <string.h>

#define INJECT_MAX_OPS 16

struct inject {
	unsigned calls[INJECT_MAX_OPS];	/* made so far, per operation */
	unsigned nth[INJECT_MAX_OPS];	/* 0: never fail */
	int err[INJECT_MAX_OPS];	/* negative errno to return */
	bool sticky[INJECT_MAX_OPS];	/* fail every call from the Nth on */
	unsigned fired;			/* injected failures returned */
};

/* Count a call of OP: 0 to go ahead, or the injected negative errno. */
static inline int inject_call(struct inject *in, unsigned op)
{
	unsigned n = ++in->calls[op];

	if (!in->nth[op] || n < in->nth[op] || (n > in->nth[op] && !in->sticky[op]))
		return 0;
	in->fired++;
	return in->err[op];
}

/* Fail call NTH (counted from now) of OP with ERR, or every call from then
 * on when STICKY; NTH 0 clears it. */
static inline void inject_set(struct inject *in, unsigned op, unsigned nth, int err, bool sticky)
{
	in->nth[op] = nth ? in->calls[op] + nth : 0;
	in->err[op] = err;
	in->sticky[op] = sticky;
}
