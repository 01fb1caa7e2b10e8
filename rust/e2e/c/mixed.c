/* SPDX-License-Identifier: MIT */
/*
 * The C half of rust-mixed (rust/e2e/src/bin/mixed.rs): built with include/recorder.h
 * by build.rs and linked into the Rust binary, so that one process has one
 * rec__current and one set of semaphores for both languages.
 */
#include <recorder.h>

/* Rust's half: an event from Rust while this C span is the thread's current one. */
extern void mixed_rust_inside_c(void);

/* Inside the Rust recording span: a C event, then a C span with a Rust event in it. */
void mixed_c_side(void)
{
	REC_INFO("from c", REC_I64(n, 1));
	{
		REC_SPAN_SCOPED(c_span, INFO, "c_span");
		REC_INFO("from c inside c_span", REC_I64(n, 2));
		mixed_rust_inside_c();
	}
}

/* A C span the program keeps entered while the test reads its stack. */
static struct rec_span held;

void mixed_c_enter_held(void)
{
	REC_SPAN_INIT(&held, INFO, "c_held");
	rec_span_enter(&held);
	REC_INFO("inside c_held");
}

void mixed_c_exit_held(void)
{
	rec_span_exit(&held);
}
