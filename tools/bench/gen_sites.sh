#!/bin/bash
# SPDX-License-Identifier: MIT
# gen_sites.sh N > sites.c: a program with N distinct REC_INFO probe sites (in
# functions of 100 sites), for the attach-time benchmark. It prints
# "sites: pid N", enters a recording span, fires none of them, and waits for a
# signal. The field value is a parameter, not the compared constant, so the
# compiler cannot turn it into a per-site immediate (5,000 distinct argument
# specs would exceed the loader's 4,096-spec table: see ANALYSIS.md).
set -eu
n=${1:?usage: gen_sites.sh N}
echo '#include <signal.h>'
echo '#include <stdio.h>'
echo '#include <unistd.h>'
echo '#include <recorder.h>'
f=0
for ((i = 0; i < n; i++)); do
	if ((i % 100 == 0)); then
		((i > 0)) && echo '}'
		echo "__attribute__((noinline)) void sites_$f(long v, long w) {"
		f=$((f + 1))
	fi
	echo "	if (v == $i) REC_INFO(\"site $i\", REC_I64(w, w), REC_STR(s, \"x\"), REC_BOOL(ok, 1));"
done
echo '}'
echo 'int main(void) {'
echo '	struct rec_recorder *r = rec_recorder_new();'
echo '	struct rec_recording *rec = rec_recording_new(r, 10);'
echo '	struct rec_span sp;'
echo '	rec_recording_span(&sp, rec, "sites");'
echo '	rec_span_enter(&sp);'
echo '	printf("sites: pid %d\n", (int)getpid());'
echo '	fflush(stdout);'
echo '	pause();'
for ((k = 0; k < f; k++)); do echo "	sites_$k(-1, 0);"; done
echo '	return 0;'
echo '}'
